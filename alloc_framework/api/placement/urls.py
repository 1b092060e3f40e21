"""URLs of the Placement API: path items of the matched route, links.

Links are built under the application's ``SCRIPT_NAME``, so that the API
can be mounted under a prefix.
"""


def wsgi_path_item(environ, name):
    """The value of ``{name}`` in the matched route, or None."""
    try:
        return environ['wsgiorg.routing_args'][1][name]
    except (KeyError, IndexError):
        return None


def _prefix(environ):
    return environ.get('SCRIPT_NAME', '')


def resource_provider_url(environ, resource_provider):
    return '%s/resource_providers/%s' % (_prefix(environ),
                                         resource_provider.uuid)


def inventory_url(environ, resource_provider, resource_class=None):
    url = '%s/inventories' % resource_provider_url(environ,
                                                   resource_provider)
    if resource_class:
        url = '%s/%s' % (url, resource_class)
    return url


def resource_class_url(environ, resource_class):
    name = getattr(resource_class, 'name', resource_class)
    return '%s/resource_classes/%s' % (_prefix(environ), name)


def trait_url(environ, trait):
    name = getattr(trait, 'name', trait)
    return '%s/traits/%s' % (_prefix(environ), name)
