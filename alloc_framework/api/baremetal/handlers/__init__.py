"""Handlers of the bare metal API, one module per resource."""
