"""The ``redfish`` hardware interfaces: BMCs spoken to over Redfish (sushy).
"""
