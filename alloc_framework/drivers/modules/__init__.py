"""Implementations of hardware interfaces."""
