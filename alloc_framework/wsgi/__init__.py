"""WSGI entry points for application servers (gunicorn, uwsgi, mod_wsgi).

Each module exposes ``application``. The configuration file is named by the
environment variable ``ALLOC_CONFIG_FILE`` (optional: without it the
default locations of oslo.config are searched).
"""

import os

CONFIG_FILE_ENV = 'ALLOC_CONFIG_FILE'


def config_files():
    """The configuration files to load, or None for oslo.config's search."""
    path = os.environ.get(CONFIG_FILE_ENV)
    return [path] if path else None
