"""Request handlers of the Placement API, one module per resource."""
