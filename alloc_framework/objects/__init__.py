"""The model of both halves of the service.

- :mod:`alloc_framework.objects.baremetal`: versioned objects of the bare
  metal side (nodes, node allocations, conductors, node history); their
  exceptions and provision states are in ``alloc_framework.common``
  (``exception``, ``states``), which every floor may import.
- :mod:`alloc_framework.objects.placement`: the Placement entities, plain
  classes over SQLAlchemy Core queries, with their own exceptions.

All SQL of the project lives under this package.
"""
