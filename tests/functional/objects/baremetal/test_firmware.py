"""FirmwareComponent objects and their SQL on the selected backend."""

from alloc_framework.common import exception
from alloc_framework.objects import baremetal as objects
from tests import base
from tests.functional.objects.baremetal import factories


def _reading(**versions):
    return [{'component': c, 'current_version': v}
            for c, v in sorted(versions.items())]


class FirmwareComponentTestCase(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = factories.admin_context()
        self.node = factories.create_node(self.ctx)

    def _list(self, node=None):
        return {c.component: (c.initial_version, c.current_version,
                              c.last_version_flashed)
                for c in objects.FirmwareComponent.list_by_node_id(
                    self.ctx, (node or self.node).id)}

    def test_first_reading_sets_initial_versions(self):
        objects.FirmwareComponent.sync(self.ctx, self.node.id,
                                       _reading(bmc='1.0', bios='2.0'))
        self.assertEqual({'bios': ('2.0', '2.0', None),
                          'bmc': ('1.0', '1.0', None)}, self._list())
        listed = objects.FirmwareComponent.list_by_node_id(self.ctx,
                                                           self.node.id)
        self.assertEqual(['bios', 'bmc'], [c.component for c in listed])
        self.assertIsNotNone(listed[0].created_at)
        self.assertIsNone(listed[0].updated_at)

    def test_update_keeps_initial_and_records_flashed(self):
        objects.FirmwareComponent.sync(self.ctx, self.node.id,
                                       _reading(bmc='1.0', bios='2.0'))
        objects.FirmwareComponent.sync(self.ctx, self.node.id,
                                       _reading(bmc='1.1', bios='2.0'),
                                       flashed=['bmc'])
        self.assertEqual({'bios': ('2.0', '2.0', None),
                          'bmc': ('1.0', '1.1', '1.1')}, self._list())
        bmc = [c for c in objects.FirmwareComponent.list_by_node_id(
            self.ctx, self.node.id) if c.component == 'bmc'][0]
        self.assertIsNotNone(bmc.updated_at)

    def test_reading_without_a_component_keeps_it(self):
        objects.FirmwareComponent.sync(self.ctx, self.node.id,
                                       _reading(bmc='1.0', nic='3'))
        objects.FirmwareComponent.sync(self.ctx, self.node.id,
                                       _reading(bmc='1.2'))
        self.assertEqual({'bmc': ('1.0', '1.2', None),
                          'nic': ('3', '3', None)}, self._list())

    def test_nodes_are_separate_and_deleted_with_their_node(self):
        other = factories.create_node(self.ctx)
        objects.FirmwareComponent.sync(self.ctx, self.node.id,
                                       _reading(bmc='1.0'))
        objects.FirmwareComponent.sync(self.ctx, other.id,
                                       _reading(bmc='9.9'))
        self.assertEqual({'bmc': ('9.9', '9.9', None)}, self._list(other))
        self.node.destroy()
        self.assertEqual({}, self._list())
        self.assertEqual({'bmc': ('9.9', '9.9', None)}, self._list(other))

    def test_malformed_reading_refused(self):
        for bad in ([{'component': 'bmc'}], [{'current_version': '1'}],
                    ['bmc'], [{'component': '', 'current_version': '1'}]):
            self.assertRaises(exception.InvalidParameterValue,
                              objects.FirmwareComponent.sync, self.ctx,
                              self.node.id, bad)
        self.assertEqual({}, self._list())

    def _identity(self):
        return {c.component: (c.vendor, c.model, c.serial_number)
                for c in objects.FirmwareComponent.list_by_node_id(
                    self.ctx, self.node.id)}

    def test_identity_stored_and_kept_when_unknown(self):
        objects.FirmwareComponent.sync(self.ctx, self.node.id, [
            {'component': 'bmc', 'current_version': '1.0', 'vendor': 'V',
             'model': 'M', 'serial_number': 'S'},
            {'component': 'bios', 'current_version': '2.0'}])
        self.assertEqual({'bmc': ('V', 'M', 'S'),
                          'bios': (None, None, None)}, self._identity())
        # A later reading that does not tell keeps what was known; one
        # that tells something new changes it.
        objects.FirmwareComponent.sync(self.ctx, self.node.id, [
            {'component': 'bmc', 'current_version': '1.1', 'vendor': None},
            {'component': 'bios', 'current_version': '2.0',
             'serial_number': 'B1'}])
        self.assertEqual({'bmc': ('V', 'M', 'S'),
                          'bios': (None, None, 'B1')}, self._identity())

    def test_malformed_identity_refused(self):
        for bad in (5, 'x' * 256):
            err = self.assertRaises(
                exception.InvalidParameterValue,
                objects.FirmwareComponent.sync, self.ctx, self.node.id,
                [{'component': 'bmc', 'current_version': '1',
                  'model': bad}])
            self.assertIn('"model"', str(err))
        self.assertEqual({}, self._list())
