"""Conductors: the services that do the work on nodes and allocations."""
