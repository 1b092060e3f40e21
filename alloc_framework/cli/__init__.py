"""The ``alloc`` command line client (cliff) for both APIs."""
