"""Requests for the unit tests of the Placement API."""

import webob

from alloc_framework.api.placement import microversion


def request(qs='', version='1.39'):
    """A request for ``/?qs`` at microversion ``version``."""
    req = webob.Request.blank('/?' + qs)
    req.environ[microversion.MICROVERSION_ENVIRON] = (
        microversion.extract_version(
            {'openstack-api-version': 'placement %s' % version}))
    return req
