"""A library any Placement user can call, importable without the server.

It imports only the standard library, third-party libraries and
``alloc_framework.common``.
"""
