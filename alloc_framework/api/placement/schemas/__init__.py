"""JSON schemas of the Placement API, one constant per microversion."""
