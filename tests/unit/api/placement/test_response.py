"""Responses and error documents of the Placement API."""

import testtools

from alloc_framework.api.placement import response
from tests.unit.api.placement import fakes

_req = fakes.request


class ErrorFormatterTestCase(testtools.TestCase):

    def test_error_formatter_code_by_version(self):
        environ = _req(version='1.22').environ
        body = response.json_error_formatter(
            body='<b>bad</b>', status='400 Bad Request',
            title='Bad Request', environ=environ)
        self.assertNotIn('code', body['errors'][0])
        self.assertEqual('bad', body['errors'][0]['detail'])
        environ = _req(version='1.23').environ
        environ[response.ENV_ERROR_CODE] = 'placement.concurrent_update'
        body = response.json_error_formatter(
            body='x', status='409 Conflict', title='Conflict',
            environ=environ)
        self.assertEqual('placement.concurrent_update',
                         body['errors'][0]['code'])
        self.assertEqual(409, body['errors'][0]['status'])
