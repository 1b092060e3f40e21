"""``alloc baremetal ...``: the bare metal node and allocation API."""
