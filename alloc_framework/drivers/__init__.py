"""Drivers: hardware types, hardware interfaces and allocation backends."""
