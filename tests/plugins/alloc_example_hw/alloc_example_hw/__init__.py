"""An example third-party hardware plugin for alloc_framework.

It adds an interface kind, ``led`` (the identify LED of a chassis), with
its no-op ``no-led`` and one implementation, ``blinky``, and a hardware
type, ``example-hw``, that drives nodes with alloc_framework's ``fake``
power, deploy and management interfaces and ``blinky``. Everything is
declared with entry points (``setup.cfg``); operators enable it in
the configuration only.
"""
