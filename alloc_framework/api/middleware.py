"""Middleware set-up shared by the REST APIs."""

from oslo_middleware import cors

CORS_METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH']


def wrap_cors(app, conf, allow_headers, expose_headers):
    """``app`` behind oslo.middleware's CORS when ``[cors]allowed_origin``.

    Without allowed origins CORS would do nothing but cost every request
    a pass through webob, and ``OPTIONS`` stays an ordinary method (405
    with ``Allow``), as upstream. The headers are the defaults of the
    ``[cors]`` options: browsers may only send and read the headers CORS
    lists. The middleware reads its options when it is built, so the two
    APIs of one ``alloc-server`` process each keep their own defaults.
    """
    conf.register_opts(cors.CORS_OPTS, 'cors')
    if not conf.cors.allowed_origin:
        return app
    cors.set_defaults(allow_headers=list(allow_headers),
                      expose_headers=list(expose_headers),
                      allow_methods=CORS_METHODS)
    return cors.CORS(app, conf)
