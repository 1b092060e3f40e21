"""Serve upstream openstack-placement on 127.0.0.1 (a test helper process).

``python placement_upstream_server.py PORT DB``
builds the reference implementation's WSGI application with its own
configuration (``[placement_database]connection`` a SQLite file ``DB``,
schema made at start; ``[api]auth_strategy = noauth2``, where the token
``admin`` is the admin) and serves it with cheroot, one request at a
time, until killed: the reference implementation does not serialize its
writers on SQLite, and concurrent writes would fail there with "database
is locked" (on PostgreSQL or MySQL it needs no such care). Nothing
of this project is imported: what the tests reach is upstream's service.
"""

import sys

from cheroot import wsgi
from oslo_config import cfg
from placement import conf as placement_conf
from placement import db_api
from placement import deploy


def main(port, db_path):
    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    conf.set_default('connection', 'sqlite:///%s' % db_path,
                     group='placement_database')
    conf([], project='placement', default_config_files=[])
    conf.set_override('sync_on_startup', True, group='placement_database')
    conf.set_override('auth_strategy', 'noauth2', group='api')
    db_api.configure(conf)
    app = deploy.loadapp(conf)
    server = wsgi.Server(('127.0.0.1', port), app, numthreads=1)
    print('serving', flush=True)
    server.start()


if __name__ == '__main__':
    main(int(sys.argv[1]), sys.argv[2])
