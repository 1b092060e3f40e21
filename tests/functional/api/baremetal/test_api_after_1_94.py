"""Microversions after 1.94: what each one changes in what is served.

Each served change is tested on both sides of its version against the
real WSGI app (and the conductor where one acts). Versions that change
only resources this service does not serve are checked to show nodes
alike and to keep those resources absent.
"""

import datetime

from alloc_framework.api.baremetal import microversion as mv
from alloc_framework.common import context as af_context
from alloc_framework.common import states
from alloc_framework.objects.baremetal import base as obj_base
from alloc_framework.objects.baremetal import firmware
from alloc_framework.objects.baremetal import node as node_obj
from alloc_framework.objects.baremetal import node_history
from tests.functional.api.baremetal import test_nodes_write


class TestUnchangedVersions(test_nodes_write.NodeWriteTestCase):
    """Versions that change only ports, port groups and inspection rules."""

    with_conductor = False

    def test_nodes_and_absent_resources_alike(self):
        node = self.make_node(name='n1')
        for minor in sorted(mv.UNCHANGED):
            if minor < 95:
                continue
            version = '1.%d' % minor
            before = '1.%d' % (minor - 1)
            self.assertEqual(
                self.get('/v1/nodes/n1', version=before,
                         status=200).json_body,
                self.get('/v1/nodes/%s' % node.uuid, version=version,
                         status=200).json_body, version)
            for path in ('/v1/ports', '/v1/portgroups',
                         '/v1/inspection_rules', '/v1/runbooks'):
                self.assertError(self.get(path, version=version), 404)


class TestDisablePowerOff(test_nodes_write.NodeWriteTestCase):
    """1.95: ``disable_power_off``: the node is never powered off."""

    def test_hidden_and_refused_before_1_95(self):
        node = self.make_node()
        body = self.get('/v1/nodes/%s' % node.uuid, version='1.94',
                        status=200).json_body
        self.assertNotIn('disable_power_off', body)
        self.assertError(self.get('/v1/nodes/%s?fields=disable_power_off'
                                  % node.uuid, version='1.94'), 406)
        resp = self.patch('/v1/nodes/%s' % node.uuid,
                          [{'op': 'replace', 'path': '/disable_power_off',
                            'value': True}], version='1.94')
        self.assertError(resp, 406, 'baremetal.version_not_acceptable',
                         'disable_power_off')
        resp = self.post('/v1/nodes', {'driver': 'fake-hardware',
                                       'disable_power_off': True},
                         version='1.94')
        self.assertError(resp, 406, 'baremetal.version_not_acceptable',
                         'disable_power_off')

    def test_set_shown_and_power_off_refused(self):
        body = self.post('/v1/nodes', {'driver': 'fake-hardware'},
                         version='1.95', status=201).json_body
        self.assertIs(False, body['disable_power_off'])
        uuid = body['uuid']
        resp = self.patch('/v1/nodes/%s' % uuid,
                          [{'op': 'replace', 'path': '/disable_power_off',
                            'value': 'maybe'}], version='1.95')
        self.assertError(resp, 400, 'baremetal.invalid_field',
                         'disable_power_off')
        body = self.patch('/v1/nodes/%s' % uuid,
                          [{'op': 'replace', 'path': '/disable_power_off',
                            'value': True}], version='1.95',
                          status=200).json_body
        self.assertIs(True, body['disable_power_off'])
        shown = self.get('/v1/nodes/%s?fields=disable_power_off' % uuid,
                         version='1.95', status=200).json_body
        self.assertEqual({'disable_power_off', 'links'}, set(shown))
        self.assertIs(True, shown['disable_power_off'])
        node = node_obj.Node.get_by_uuid(self.context, uuid)
        node.power_state = states.POWER_ON
        node.save(self.context)
        path = '/v1/nodes/%s/states/power' % uuid
        resp = self.put(path, {'target': 'power off'}, version='1.95')
        self.assertError(resp, 400, contains='disable_power_off')
        # A reboot is what the node gets instead.
        self.put(path, {'target': 'rebooting'}, version='1.95', status=202)
        self.wait_state(uuid, 'power_state', 'power on')
        body = self.patch('/v1/nodes/%s' % uuid,
                          [{'op': 'remove', 'path': '/disable_power_off'}],
                          version='1.95', status=200).json_body
        self.assertIs(False, body['disable_power_off'])
        self.put(path, {'target': 'power off'}, version='1.95', status=202)
        self.wait_state(uuid, 'power_state', 'power off')


class TestPatchEscapes(test_nodes_write.NodeWriteTestCase):
    """1.98: keys with ``~`` or ``/`` in patches (RFC 6901 escapes)."""

    def test_escapes_refused_before_1_98(self):
        node = self.make_node(extra={'a/b': 1})
        for path in ('/extra/a~1b', '/extra/c~0d'):
            resp = self.patch('/v1/nodes/%s' % node.uuid,
                              [{'op': 'add', 'path': path, 'value': 2}],
                              version='1.97')
            self.assertError(resp, 400, 'baremetal.invalid_patch', path)
        self.assertEqual({'a/b': 1}, node_obj.Node.get_by_uuid(
            self.context, node.uuid).extra)

    def test_escaped_keys_from_1_98(self):
        node = self.make_node(extra={'a/b': 1, 'keep': True})
        body = self.patch('/v1/nodes/%s' % node.uuid,
                          [{'op': 'replace', 'path': '/extra/a~1b',
                            'value': 2},
                           {'op': 'add', 'path': '/extra/c~0d',
                            'value': 'x'},
                           {'op': 'add', 'path': '/extra/e~01',
                            'value': 'y'}],
                          version='1.98', status=200).json_body
        self.assertEqual({'a/b': 2, 'c~d': 'x', 'e~1': 'y', 'keep': True},
                         body['extra'])
        body = self.patch('/v1/nodes/%s' % node.uuid,
                          [{'op': 'remove', 'path': '/extra/a~1b'}],
                          version='1.98', status=200).json_body
        self.assertNotIn('a/b', body['extra'])
        # A ~ that is not an escape is not a valid pointer.
        resp = self.patch('/v1/nodes/%s' % node.uuid,
                          [{'op': 'add', 'path': '/extra/f~2',
                            'value': 1}], version='1.98')
        self.assertError(resp, 400, 'baremetal.invalid_patch')


class TestInstanceName(test_nodes_write.NodeWriteTestCase):
    """1.104: ``instance_name``, in step with the display name."""

    def test_hidden_and_refused_before_1_104(self):
        node = self.make_node(instance_info={'display_name': 'vm1'})
        body = self.get('/v1/nodes/%s' % node.uuid, version='1.103',
                        status=200).json_body
        self.assertNotIn('instance_name', body)
        self.assertError(self.get('/v1/nodes/%s?fields=instance_name'
                                  % node.uuid, version='1.103'), 406)
        self.assertError(self.get('/v1/nodes?instance_name=vm1',
                                  version='1.103'), 406)
        resp = self.patch('/v1/nodes/%s' % node.uuid,
                          [{'op': 'add', 'path': '/instance_name',
                            'value': 'vm2'}], version='1.103')
        self.assertError(resp, 406, 'baremetal.version_not_acceptable',
                         'instance_name')

    def test_display_name_sets_instance_name_at_any_version(self):
        node = self.make_node()
        self.patch('/v1/nodes/%s' % node.uuid,
                   [{'op': 'add', 'path': '/instance_info/display_name',
                     'value': 'vm1'}], version='1.50', status=200)
        body = self.get('/v1/nodes/%s' % node.uuid, version='1.104',
                        status=200).json_body
        self.assertEqual('vm1', body['instance_name'])
        listed = self.get('/v1/nodes?instance_name=vm1', version='1.104',
                          status=200).json_body['nodes']
        self.assertEqual([node.uuid], [n['uuid'] for n in listed])
        self.assertEqual([], self.get('/v1/nodes?instance_name=vm2',
                                      version='1.104',
                                      status=200).json_body['nodes'])
        self.patch('/v1/nodes/%s' % node.uuid,
                   [{'op': 'remove', 'path': '/instance_info/display_name'}],
                   version='1.50', status=200)
        body = self.get('/v1/nodes/%s' % node.uuid, version='1.104',
                        status=200).json_body
        self.assertIsNone(body['instance_name'])

    def test_instance_name_sets_display_name(self):
        body = self.post('/v1/nodes', {'driver': 'fake-hardware',
                                       'instance_name': 'vm1'},
                         version='1.104', status=201).json_body
        self.assertEqual('vm1', body['instance_name'])
        self.assertEqual({'display_name': 'vm1'}, body['instance_info'])
        uuid = body['uuid']
        body = self.patch('/v1/nodes/%s' % uuid,
                          [{'op': 'replace', 'path': '/instance_name',
                            'value': 'vm2'}], version='1.104',
                          status=200).json_body
        self.assertEqual('vm2', body['instance_info']['display_name'])
        body = self.patch('/v1/nodes/%s' % uuid,
                          [{'op': 'remove', 'path': '/instance_name'}],
                          version='1.104', status=200).json_body
        self.assertIsNone(body['instance_name'])
        self.assertNotIn('display_name', body['instance_info'])
        resp = self.patch('/v1/nodes/%s' % uuid,
                          [{'op': 'add', 'path': '/instance_name',
                            'value': 'x' * 256}], version='1.104')
        self.assertError(resp, 400, 'baremetal.invalid_field',
                         'instance_name')


class TestRequestIdHeaders(test_nodes_write.NodeWriteTestCase):
    """1.107: ``X-OpenStack-Request-Id`` mirrors ``OpenStack-Request-Id``.

    Headers are sent before any version is negotiated, as upstream's
    middleware does, so both sides of 1.107 carry both headers.
    """

    with_conductor = False

    def test_both_headers_at_every_version(self):
        for version in ('1.106', '1.107', None):
            for resp in (self.get('/v1/nodes', version=version),
                         self.get('/v1/nodes/nope', version=version),
                         self.get('/v1', version=version)):
                rid = resp.headers['X-OpenStack-Request-Id']
                self.assertTrue(rid.startswith('req-'), rid)
                self.assertEqual(rid, resp.headers['OpenStack-Request-Id'])


class TestServiceDisableRamdisk(test_nodes_write.NodeWriteTestCase):
    """1.108: ``disable_ramdisk`` with the ``service`` action."""

    STEPS = [{'interface': 'deploy', 'step': 'nothing'}]

    def _service(self, node, version, **extra):
        body = {'target': 'service', 'service_steps': self.STEPS}
        body.update(extra)
        return self.put('/v1/nodes/%s/states/provision' % node.uuid, body,
                        version=version)

    def test_refused_before_1_108(self):
        node = self.make_node(provision_state=states.ACTIVE)
        resp = self._service(node, '1.107', disable_ramdisk=True)
        self.assertError(resp, 406, 'baremetal.version_not_acceptable',
                         'disable_ramdisk')

    def test_checked_from_1_108(self):
        node = self.make_node(provision_state=states.ACTIVE)
        resp = self._service(node, '1.108', disable_ramdisk='maybe')
        self.assertError(resp, 400, 'baremetal.invalid_field',
                         'disable_ramdisk')
        manageable = self.make_node(provision_state=states.MANAGEABLE)
        resp = self.put('/v1/nodes/%s/states/provision' % manageable.uuid,
                        {'target': 'provide', 'disable_ramdisk': True},
                        version='1.108')
        self.assertError(resp, 400, 'baremetal.invalid_field',
                         'disable_ramdisk')
        self._service(node, '1.108', disable_ramdisk=True, status=202)
        body = self.wait_state(node.uuid, 'provision_state', 'active')
        self.assertIsNone(body['target_provision_state'])


class TestHealth(test_nodes_write.NodeWriteTestCase):
    """1.109: node ``health``, read-only, recorded by the power sync."""

    with_conductor = False

    def test_hidden_before_1_109(self):
        node = self.make_node(health='Warning')
        body = self.get('/v1/nodes/%s' % node.uuid, version='1.108',
                        status=200).json_body
        self.assertNotIn('health', body)
        self.assertError(self.get('/v1/nodes/%s?fields=health' % node.uuid,
                                  version='1.108'), 406)
        detail = self.get('/v1/nodes/detail', version='1.108',
                          status=200).json_body['nodes']
        self.assertNotIn('health', detail[0])

    def test_shown_and_read_only_from_1_109(self):
        node = self.make_node(health='Critical')
        other = self.make_node()
        body = self.get('/v1/nodes/%s' % node.uuid, version='1.109',
                        status=200).json_body
        self.assertEqual('Critical', body['health'])
        self.assertIsNone(self.get('/v1/nodes/%s' % other.uuid,
                                   version='1.109',
                                   status=200).json_body['health'])
        shown = self.get('/v1/nodes?fields=uuid,health', version='1.109',
                         status=200).json_body['nodes']
        self.assertEqual({node.uuid: 'Critical', other.uuid: None},
                         {n['uuid']: n['health'] for n in shown})
        for version in ('1.108', '1.109'):
            resp = self.patch('/v1/nodes/%s' % node.uuid,
                              [{'op': 'replace', 'path': '/health',
                                'value': 'OK'}], version=version)
            self.assertError(resp, 400, 'baremetal.read_only_field',
                             'health')
        resp = self.post('/v1/nodes', {'driver': 'fake-hardware',
                                       'health': 'OK'}, version='1.109')
        self.assertError(resp, 400, 'baremetal.read_only_field', 'health')


class TestAbortDeployWait(test_nodes_write.NodeWriteTestCase):
    """1.110: ``abort`` of a node in ``wait call-back``."""

    def _waiting(self):
        return self.make_node(provision_state=states.DEPLOYWAIT,
                              target_provision_state=states.ACTIVE,
                              power_state=states.POWER_ON)

    def _abort(self, node, version):
        return self.put('/v1/nodes/%s/states/provision' % node.uuid,
                        {'target': 'abort'}, version=version)

    def test_refused_before_1_110(self):
        node = self._waiting()
        self.assertError(self._abort(node, '1.109'), 400,
                         'baremetal.invalid_state_requested',
                         states.DEPLOYWAIT)
        body = self.get('/v1/nodes/%s' % node.uuid, status=200).json_body
        self.assertEqual(states.DEPLOYWAIT, body['provision_state'])

    def test_deploy_fails_from_1_110(self):
        node = self._waiting()
        resp = self._abort(node, '1.110')
        self.assertEqual(202, resp.status_int, resp.text)
        body = self.wait_state(node.uuid, 'provision_state',
                               states.DEPLOYFAIL)
        self.assertEqual(states.ACTIVE, body['target_provision_state'])
        # Abort elsewhere is as before.
        available = self.make_node()
        self.assertError(self._abort(available, '1.110'), 400,
                         'baremetal.invalid_state_requested')


class TestHistoryProject(test_nodes_write.NodeWriteTestCase):
    """1.113: the ``project`` of a node history event."""

    with_conductor = False

    def test_project_shown_from_1_113(self):
        node = self.make_node()
        ctx = af_context.RequestContext(user_id='u1', project_id='p1')
        event = node_history.NodeHistory.record(ctx, node, 'it broke')
        path = '/v1/nodes/%s/history' % node.uuid
        one = '%s/%s' % (path, event.uuid)
        old = self.get(one, version='1.112', status=200).json_body
        self.assertEqual('u1', old['user'])
        self.assertNotIn('project', old)
        [listed] = self.get(path + '?detail=true', version='1.112',
                            status=200).json_body['history']
        self.assertNotIn('project', listed)
        new = self.get(one, version='1.113', status=200).json_body
        self.assertEqual(('u1', 'p1'), (new['user'], new['project']))
        [listed] = self.get(path + '?detail=true', version='1.113',
                            status=200).json_body['history']
        self.assertEqual('p1', listed['project'])
        [short] = self.get(path, version='1.113',
                           status=200).json_body['history']
        self.assertNotIn('project', short)
        # Internal work has no project.
        internal = node_history.NodeHistory.record(self.context, node, 'x')
        self.assertIsNone(self.get('%s/%s' % (path, internal.uuid),
                                   version='1.113',
                                   status=200).json_body['project'])


class TestBooleanStringsInPatches(test_nodes_write.NodeWriteTestCase):
    """Boolean fields patched with a string naming a boolean take it, as
    upstream's patches do (python-ironicclient sends ``"True"``)."""

    def test_strings(self):
        # protected needs an active node.
        node = self.make_node(provision_state=states.ACTIVE)
        path = '/v1/nodes/%s' % node.uuid
        for value, expected in (('True', True), ('false', False)):
            body = self.patch(path, [
                {'op': 'add', 'path': '/protected', 'value': value},
                {'op': 'add', 'path': '/retired', 'value': value},
                {'op': 'add', 'path': '/automated_clean', 'value': value},
                {'op': 'add', 'path': '/disable_power_off', 'value': value}],
                status=200).json_body
            self.assertEqual((expected,) * 4, (
                body['protected'], body['retired'], body['automated_clean'],
                body['disable_power_off']))
        resp = self.patch(path, [{'op': 'add', 'path': '/retired',
                                  'value': 'maybe'}])
        self.assertError(resp, 400, 'baremetal.invalid_field', 'retired')


class TestFirmwareIdentity(test_nodes_write.NodeWriteTestCase):
    """1.114: ``vendor``, ``model`` and ``serial_number`` of firmware."""

    with_conductor = False
    IDENTITY = ('vendor', 'model', 'serial_number')

    def test_identity_shown_from_1_114(self):
        node = self.make_node()
        firmware.FirmwareComponent.sync(self.context, node.id, [
            {'component': 'bmc', 'current_version': '1.0',
             'vendor': 'Acme', 'model': 'BMC-9', 'serial_number': 'SN1'},
            {'component': 'bios', 'current_version': '2.0'}])
        path = '/v1/nodes/%s/firmware' % node.uuid
        old = self.get(path, version='1.113', status=200).json_body
        for component in old['firmware']:
            self.assertEqual('1.0' if component['component'] == 'bmc'
                             else '2.0', component['current_version'])
            for field in self.IDENTITY:
                self.assertNotIn(field, component)
        bios, bmc = self.get(path, version='1.114',
                             status=200).json_body['firmware']
        self.assertEqual(('Acme', 'BMC-9', 'SN1'),
                         tuple(bmc[f] for f in self.IDENTITY))
        # Unknown to the hardware: null, not absent.
        self.assertEqual((None, None, None),
                         tuple(bios[f] for f in self.IDENTITY))


class TestHistoryState(test_nodes_write.NodeWriteTestCase):
    """1.115: ``state``, ``target_provision_state`` and
    ``duration_seconds`` of node history events."""

    FIELDS = ('state', 'target_provision_state', 'duration_seconds')

    def test_state_shown_from_1_115(self):
        node = self.make_node(provision_state=states.DEPLOYWAIT,
                              target_provision_state=states.ACTIVE,
                              power_state=states.POWER_ON)
        # The node has waited for ten minutes.
        node.provision_updated_at = (obj_base.utcnow()
                                     - datetime.timedelta(minutes=10))
        node.save(self.context)
        self.put('/v1/nodes/%s/states/provision' % node.uuid,
                 {'target': 'abort'}, version='1.115', status=202)
        self.wait_state(node.uuid, 'provision_state', states.DEPLOYFAIL)
        path = '/v1/nodes/%s/history' % node.uuid
        [old] = self.get(path + '?detail=true', version='1.114',
                         status=200).json_body['history']
        self.assertEqual('Aborted by request in state %s.'
                         % states.DEPLOYWAIT, old['event'])
        for field in self.FIELDS:
            self.assertNotIn(field, old)
        one = '%s/%s' % (path, old['uuid'])
        old = self.get(one, version='1.114', status=200).json_body
        for field in self.FIELDS:
            self.assertNotIn(field, old)
        new = self.get(one, version='1.115', status=200).json_body
        self.assertEqual((states.DEPLOYFAIL, states.ACTIVE),
                         (new['state'], new['target_provision_state']))
        # Ten minutes in wait call-back, give or take a loaded machine.
        self.assertGreaterEqual(new['duration_seconds'], 600)
        self.assertLess(new['duration_seconds'], 1200)
        [listed] = self.get(path + '?detail=true', version='1.115',
                            status=200).json_body['history']
        self.assertEqual(new, listed)
        [short] = self.get(path, version='1.115',
                           status=200).json_body['history']
        for field in self.FIELDS:
            self.assertNotIn(field, short)

    def test_event_without_state_change_has_no_duration(self):
        node = self.make_node(provision_state=states.ACTIVE)
        event = node_history.NodeHistory.record(self.context, node, 'x')
        body = self.get('/v1/nodes/%s/history/%s' % (node.uuid, event.uuid),
                        version='1.115', status=200).json_body
        self.assertEqual((states.ACTIVE, None, None),
                         tuple(body[f] for f in self.FIELDS))
