"""Node allocation backends (the ``alloc_framework.allocation.backends``
entry-point namespace); see :mod:`.base` for the plugin interface."""
