"""Responses and error documents of the Placement API."""

from oslo_serialization import jsonutils
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


class JsonTextTestCase(testtools.TestCase):
    """A document encoded piece by piece is the text jsonutils gives."""

    items = [
        {'allocations': {'a1': {'resources': {'VCPU': 1, 'DISK_GB': 20}}},
         'mappings': {'': ['a1'], '_NET': ['b2', 'c3']}},
        {'allocations': [{'resource_provider': {'uuid': 'é"\\'},
                          'resources': {'MEMORY_MB': 1024}}]},
        {'parent_provider_uuid': None, 'traits': [], 'ratio': 1.5,
         'ok': True},
    ]

    def test_json_list_same_text(self):
        self.assertEqual(jsonutils.dumps(self.items),
                         response.json_list(iter(self.items)))
        self.assertEqual('[]', response.json_list(iter([])))

    def test_json_object_same_text(self):
        members = [('z', self.items[0]), ('a', self.items[1]),
                   ('m', self.items[2])]
        # Members keep the order given, as a dict keeps its insertion
        # order.
        self.assertEqual(jsonutils.dumps(dict(members)),
                         response.json_object(iter(members)))
        self.assertEqual('{}', response.json_object(iter([])))

    def test_json_object_encoded_members(self):
        document = {'allocation_requests': self.items,
                    'provider_summaries': {'p1': self.items[2]}}
        text = response.json_object([
            ('allocation_requests', response.json_list(self.items)),
            ('provider_summaries', response.json_object(
                [('p1', self.items[2])]))], encoded=True)
        self.assertEqual(jsonutils.dumps(document), text)
