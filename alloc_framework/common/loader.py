"""Loading plugins from entry-point namespaces, failing fast.

Every plugin of the project is loaded here: the allocation backend, the
RPC transport and the metrics emitter (exactly one active:
:func:`load_one`, stevedore's ``DriverManager``), the hardware types and
interfaces (an ``enabled_*`` list: :func:`load_enabled`,
``NamedExtensionManager``), the option lists of hardware plugins (every
one installed: :func:`load_all`, ``ExtensionManager``) and the interface
kinds of hardware plugins (data, not called: :func:`load_objects`).
Plugins are instantiated with the arguments given. A plugin that is
unknown, fails to import or fails to instantiate raises
``DriverLoadError`` naming the namespace and the plugin (and, when the
name is unknown, the names the namespace offers): a service that
silently lacks a plugin would accept work it cannot do.

A leaf of the package, like the rest of ``common/``: ``conf/`` generates
the options of plugins' interface kinds with it, and no floor needs
``drivers/`` to load a plugin.
"""

import importlib.metadata

from stevedore import driver
from stevedore import exception as stevedore_exc
from stevedore import extension
from stevedore import named

from alloc_framework.common import exception


def _available(namespace):
    """Sorted names of the entry points of ``namespace``."""
    return sorted({ep.name for ep in
                   importlib.metadata.entry_points(group=namespace)})


def _missing(namespace, names):
    return exception.DriverLoadError(
        name=', '.join(sorted(names)), namespace=namespace,
        reason='no such entry point (available: %s)'
        % (', '.join(_available(namespace)) or 'none'))


def _on_load_failure(namespace):
    def callback(manager, entrypoint, exc):
        raise exception.DriverLoadError(name=entrypoint.name,
                                        namespace=namespace, reason=exc)
    return callback


def load_one(namespace, name, *args):
    """The plugin ``name`` of ``namespace``, instantiated with ``args``.

    :raises: DriverLoadError
    """
    try:
        manager = driver.DriverManager(
            namespace, name, invoke_on_load=True, invoke_args=args,
            on_load_failure_callback=_on_load_failure(namespace))
    except exception.DriverLoadError:
        raise
    except stevedore_exc.NoMatches:
        raise _missing(namespace, [name])
    except Exception as exc:
        # Several entry points of the same name, for example.
        raise exception.DriverLoadError(name=name, namespace=namespace,
                                        reason=exc)
    return manager.driver


def load_enabled(namespace, names, *args):
    """The plugins ``names`` of ``namespace``, instantiated with ``args``.

    Blank names are ignored; a name given twice is an error.

    :returns: ``{name: instance}`` in the order of ``names``.
    :raises: DriverLoadError
    """
    names = [n.strip() for n in names if n and n.strip()]
    if len(set(names)) != len(names):
        raise exception.DriverLoadError(
            name=','.join(names), namespace=namespace,
            reason='a plugin is enabled more than once')

    def _on_missing(missing):
        raise _missing(namespace, missing)

    manager = named.NamedExtensionManager(
        namespace, names, invoke_on_load=True, invoke_args=args,
        name_order=True,
        on_load_failure_callback=_on_load_failure(namespace),
        on_missing_entrypoints_callback=_on_missing)
    return {ext.name: ext.obj for ext in manager}


def load_objects(namespace):
    """The objects the entry points of ``namespace`` name, not called.

    For plugins that are data (an interface kind, for example).

    :returns: ``{name: object}`` sorted by name.
    :raises: DriverLoadError
    """
    manager = extension.ExtensionManager(
        namespace, invoke_on_load=False,
        on_load_failure_callback=_on_load_failure(namespace))
    return {ext.name: ext.plugin
            for ext in sorted(manager, key=lambda ext: ext.name)}


def load_all(namespace, *args):
    """Every plugin of ``namespace``, instantiated (called) with ``args``.

    :returns: ``{name: instance}`` sorted by name.
    :raises: DriverLoadError
    """
    manager = extension.ExtensionManager(
        namespace, invoke_on_load=True, invoke_args=args,
        on_load_failure_callback=_on_load_failure(namespace))
    return {ext.name: ext.obj
            for ext in sorted(manager, key=lambda ext: ext.name)}
