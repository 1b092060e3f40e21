"""Bare metal API (``/v1/nodes``, ``/v1/allocations``): WSGI app."""
