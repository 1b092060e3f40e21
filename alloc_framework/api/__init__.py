"""The REST APIs: bare metal (``baremetal``) and Placement (``placement``)."""
