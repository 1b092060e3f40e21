"""HTTP-level tests of the Placement API (gabbi YAML and Python)."""
