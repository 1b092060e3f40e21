"""Microversions after 1.87: what each one changes in what is served.

Upstream's versions 1.88 to 1.90, 1.93 and 1.94 change ports, virtual
media and port links only, which this service does not serve; 1.91 and
1.92 are tested here on both sides of their version.
"""

from alloc_framework.common import states
from tests.functional.api.baremetal import base


class TestUnchangedVersions(base.BaremetalTestCase):
    """Versions that change only resources that are not served."""

    with_conductor = False

    def test_nodes_and_absent_resources_alike(self):
        node = self.make_node(name='n1')
        shown = {}
        for version in ('1.87', '1.88', '1.89', '1.90', '1.92', '1.93',
                        '1.94'):
            shown[version] = self.get('/v1/nodes/%s' % node.uuid,
                                      version=version, status=200).json_body
            for path in ('/v1/ports', '/v1/portgroups', '/v1/runbooks',
                         '/v1/nodes/n1/vmedia'):
                self.assertError(self.get(path, version=version), 404)
            self.assertError(self.request('POST', '/v1/nodes/n1/vmedia',
                                          body={}, version=version), 404)
        for version, body in shown.items():
            self.assertEqual(shown['1.87'], body, version)


class TestJsonSuffix(base.BaremetalTestCase):
    """1.91: a trailing ``.json`` is part of the path (upstream's version
    history: ``/v1/nodes/test.json`` is only the node named
    ``test.json``)."""

    with_conductor = False

    def test_node_names(self):
        plain = self.make_node(name='n1')
        dotted = self.make_node(name='n2.json')
        self.assertEqual(plain.uuid, self.get(
            '/v1/nodes/n1.json', version='1.90', status=200).json_body['uuid'])
        self.assertError(self.get('/v1/nodes/n1.json', version='1.91'), 404,
                         'baremetal.node_not_found')
        for version in ('1.90', '1.91'):
            self.assertEqual(dotted.uuid, self.get(
                '/v1/nodes/n2.json', version=version,
                status=200).json_body['uuid'])
        self.assertError(self.get('/v1/nodes/%s.json' % plain.uuid,
                                  version='1.91'), 404)

    def test_sub_resources(self):
        node = self.make_node(name='n1')
        self.get('/v1/nodes/n1/states.json', version='1.90', status=200)
        self.assertError(self.get('/v1/nodes/n1/states.json',
                                  version='1.91'), 404)
        self.get('/v1/nodes/%s/states' % node.uuid, version='1.91',
                 status=200)


class TestRunbook(base.BaremetalTestCase):
    """1.92: ``runbook`` in place of the steps of ``clean`` and
    ``service``. No runbook is ever kept here, so any is not found."""

    def _provision(self, node, body, version):
        return self.put('/v1/nodes/%s/states/provision' % node.uuid, body,
                        version=version)

    def test_runbook_before_1_92_is_406(self):
        node = self.make_node(provision_state=states.MANAGEABLE)
        resp = self._provision(node, {'target': 'clean', 'runbook': 'rb'},
                               '1.91')
        self.assertError(resp, 406, 'baremetal.version_not_acceptable',
                         'runbook')

    def test_unknown_runbook_is_404(self):
        node = self.make_node(provision_state=states.MANAGEABLE)
        resp = self._provision(node, {'target': 'clean', 'runbook': 'rb'},
                               '1.92')
        self.assertError(resp, 404, 'baremetal.runbook_not_found', 'rb')
        active = self.make_node(provision_state=states.ACTIVE)
        resp = self._provision(active, {'target': 'service',
                                        'runbook': 'rb'}, '1.92')
        self.assertError(resp, 404, 'baremetal.runbook_not_found')
        node = self.get('/v1/nodes/%s' % node.uuid, status=200).json_body
        self.assertEqual(states.MANAGEABLE, node['provision_state'])

    def test_bad_runbook_is_400_naming_it(self):
        node = self.make_node(provision_state=states.MANAGEABLE)
        steps = [{'interface': 'deploy', 'step': 'erase_devices'}]
        for body in ({'target': 'clean', 'runbook': 'rb',
                      'clean_steps': steps},
                     {'target': 'provide', 'runbook': 'rb'},
                     {'target': 'clean', 'runbook': ''},
                     {'target': 'clean', 'runbook': 5}):
            resp = self._provision(node, body, '1.92')
            self.assertError(resp, 400, 'baremetal.invalid_field',
                             'runbook')
