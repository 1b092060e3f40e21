"""Serve upstream openstack-placement on 127.0.0.1 (a test helper process).

``python placement_upstream_server.py PORT DB``
builds the reference implementation's WSGI application with its own
configuration (``[placement_database]connection`` a SQLite file ``DB``,
schema made at start; ``[api]auth_strategy = noauth2``, where the token
``admin`` is the admin) and serves it with cheroot, one request at a
time, until killed: the reference implementation does not serialize its
writers on SQLite, and concurrent writes would fail there with "database
is locked" (on PostgreSQL or MySQL it needs no such care). Its SQLite
connections commit without waiting for the disk (``PRAGMA synchronous =
OFF``): the database is thrown away with the process, and one fsync per
write, with one request at a time, made a test of 50 concurrent
allocations take minutes on a loaded machine. Nothing of this project
is imported: what the tests reach is upstream's service.
"""

import sys

from cheroot import wsgi
from oslo_config import cfg
from placement import conf as placement_conf
from placement import db_api
from placement import deploy
import sqlalchemy as sa


def _no_flush_at_commit(engine):
    @sa.event.listens_for(engine, 'connect')
    def _on_connect(dbapi_conn, record):
        dbapi_conn.execute('PRAGMA synchronous = OFF')


def main(port, db_path):
    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    conf.set_default('connection', 'sqlite:///%s' % db_path,
                     group='placement_database')
    conf([], project='placement', default_config_files=[])
    conf.set_override('sync_on_startup', True, group='placement_database')
    conf.set_override('auth_strategy', 'noauth2', group='api')
    # noauth2's admin token has the admin role only; the secure-RBAC
    # default of POST /reshaper asks for the service role, which a
    # deployment gives the user of the services calling Placement. The
    # deprecated defaults let the admin token reshape too.
    conf.set_override('enforce_new_defaults', False, group='oslo_policy')
    db_api.placement_context_manager.append_on_engine_create(
        _no_flush_at_commit)
    db_api.configure(conf)
    app = deploy.loadapp(conf)
    # cheroot's default backlog is 5 connections: the 50 concurrent
    # clients of the concurrency tests overflowed it, and each dropped
    # connection waited for the kernel's SYN retransmit (1 s, then 3 s,
    # 7 s...), which made those tests take minutes.
    server = wsgi.Server(('127.0.0.1', port), app, numthreads=1,
                         request_queue_size=1024)
    print('serving', flush=True)
    server.start()


if __name__ == '__main__':
    main(int(sys.argv[1]), sys.argv[2])
