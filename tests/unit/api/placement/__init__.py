"""Unit tests of the Placement framework helpers."""
