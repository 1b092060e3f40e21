"""``alloc resource ...`` and ``alloc trait ...``: the Placement API."""
