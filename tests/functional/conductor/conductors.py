"""Start and stop real conductors inside a test."""

from alloc_framework.conductor import manager as manager_mod


def start(test, host, **kw):
    """A started ``ConductorManager`` named ``host``, stopped at cleanup."""
    manager = manager_mod.ConductorManager(host, test.conf, **kw)
    manager.init_host()
    test.addCleanup(manager.del_host)
    return manager


def stop(manager, unregister=True):
    """Stop a conductor; ``unregister=False`` leaves it looking online.

    Without unregistering, the conductor row keeps ``online`` and only its
    heartbeat ages, as when a conductor process is killed.
    """
    if unregister:
        manager.del_host()
        return
    conductor = manager.conductor

    # del_host() marks the row offline; a killed process never does.
    original = conductor.unregister
    conductor.unregister = lambda *a, **k: None
    try:
        manager.del_host()
    finally:
        conductor.unregister = original
