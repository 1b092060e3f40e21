"""The helpers shared by the command modules."""

import testtools

from alloc_framework.cli import common

UUID = '7f0bb2c2-2c09-4b6c-9a4c-3b4b8d5bd7a1'


class _Api:
    """Answers ``GET /resource_providers?name=`` with ``providers``."""

    def __init__(self, providers):
        self.providers = providers
        self.calls = []

    def get(self, url, params=None):
        self.calls.append((url, params))
        return {'resource_providers': self.providers}


class TestFindProvider(testtools.TestCase):

    def test_uuid_is_used_as_is(self):
        api = _Api([])
        self.assertEqual(UUID, common.find_provider(api, UUID))
        self.assertEqual([], api.calls)

    def test_name_of_one_provider(self):
        api = _Api([{'uuid': UUID, 'name': 'compute-1'}])
        self.assertEqual(UUID, common.find_provider(api, 'compute-1'))
        self.assertEqual([('/resource_providers', {'name': 'compute-1'})],
                         api.calls)

    def test_unknown_and_ambiguous_names(self):
        exc = self.assertRaises(common.CommandError, common.find_provider,
                                _Api([]), 'nobody')
        self.assertIn("'nobody'", str(exc))
        exc = self.assertRaises(
            common.CommandError, common.find_provider,
            _Api([{'uuid': 'b'}, {'uuid': 'a'}]), 'twice')
        self.assertIn('Several resource providers are named', str(exc))
        self.assertIn('a, b', str(exc))


class TestSplitAndDeserialize(testtools.TestCase):

    def test_json_values_are_decoded_others_kept(self):
        self.assertEqual(('cpus', 8), common.split_and_deserialize('cpus=8'))
        self.assertEqual(('a', 'x=y'), common.split_and_deserialize('a=x=y'))
        self.assertEqual(('a', ''), common.split_and_deserialize('a='))
        self.assertEqual(('a', [1]), common.split_and_deserialize('a=[1]'))
        self.assertEqual(('a', '[1'), common.split_and_deserialize('a=[1'))

    def test_missing_value_names_the_option(self):
        exc = self.assertRaises(common.CommandError,
                                common.split_and_deserialize, 'cpus',
                                '--property')
        self.assertEqual("--property expects KEY=VALUE, got 'cpus'",
                         str(exc))
