"""The ``ipmi`` hardware interfaces: power, management and firmware over
IPMI 2.0 (RMCP+), spoken with pyghmi; no ``ipmitool`` executable needed.

See ``doc/source/hardware-ipmi.rst``.
"""
