"""The Placement API: a WSGI application compatible with OpenStack Placement.

``deploy.loadapp(conf)`` builds the application; ``handler.py`` holds the
route table, ``handlers/`` the request handlers, ``schemas/`` their JSON
schemas and ``policies/`` their policy rules.
"""
