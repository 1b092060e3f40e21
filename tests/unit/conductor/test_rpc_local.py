"""The local transport's copy equals the serializer's round trip.

For every registered object class, with every field set, so that a new
class, field or field type cannot make the two drift apart unnoticed.
"""

import datetime

from oslo_versionedobjects import fields as ovo_fields

from alloc_framework.common import context as af_context
from alloc_framework.conductor import rpc_local
from alloc_framework.objects.baremetal import base as obj_base
from alloc_framework.objects.baremetal import fields
from tests import base
from tests.unit.objects.baremetal import test_objects

_WHEN = datetime.datetime(2024, 5, 6, 7, 8, 9, 123456,
                          tzinfo=datetime.timezone.utc)
# A sample value per field type; a field type missing here fails the test.
_SAMPLES = {
    ovo_fields.BooleanField: True,
    ovo_fields.DateTimeField: _WHEN,
    ovo_fields.IntegerField: 42,
    ovo_fields.ListOfStringsField: ['CUSTOM_A', 'CUSTOM_B'],
    ovo_fields.StringField: 'text',
    ovo_fields.UUIDField: '9f0d5e52-5a57-4c43-9e8c-2c1a0a5b2c11',
    fields.FlexibleDictField: {'k': ['v', {'n': 1}]},
    fields.ListOfFlexibleDictsField: [{'count': 2, 'traits': ['CUSTOM_A']},
                                      {'k': {'n': 1}}],
}


def _classes():
    return [cls for versions in test_objects.project_classes().values()
            for cls in versions]


def _state(obj):
    return ({name: getattr(obj, name) for name in obj.fields
             if obj.obj_attr_is_set(name)},
            obj.obj_what_changed(), obj.VERSION, type(obj))


def _over_the_wire(context, value):
    ser = obj_base.AllocObjectSerializer()
    return ser.deserialize_entity(context,
                                  ser.serialize_entity(context, value))


class CopyEntityTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.ctx = af_context.RequestContext(project_id='p1')
        self.other = af_context.RequestContext(project_id='p2')

    def _full(self, cls):
        obj = cls(self.ctx)
        names = sorted(cls.fields)
        for name in names:
            setattr(obj, name, _SAMPLES[type(cls.fields[name])])
        # Half of the fields unchanged, as on a loaded, then edited object.
        obj.obj_reset_changes(names[::2])
        return obj

    def test_every_class_is_covered(self):
        self.assertEqual({'Allocation', 'AllocationCRUDPayload',
                          'AllocationGroup',
                          'Conductor', 'DeferredAction',
                          'DeferredActionPayload', 'FirmwareComponent', 'Node',
                          'NodeHistory'},
                         {cls.obj_name() for cls in _classes()})

    def test_same_as_the_serializer(self):
        for cls in _classes():
            obj = self._full(cls)
            copied = rpc_local.copy_entity(self.other, obj)
            self.assertEqual(_state(_over_the_wire(self.other, obj)),
                             _state(copied), cls.obj_name())
            self.assertIs(self.other, copied._context)
            self.assertIsNot(obj, copied)

    def test_datetimes_in_whole_seconds(self):
        for cls in _classes():
            copied = rpc_local.copy_entity(self.other, self._full(cls))
            for name, field in cls.fields.items():
                if isinstance(field, ovo_fields.DateTimeField):
                    self.assertEqual(_WHEN.replace(microsecond=0),
                                     getattr(copied, name))

    def test_version_travels(self):
        obj = self._full(test_objects.project_classes()['Allocation'][0])
        self.assertNotEqual('1.0', obj.VERSION)
        obj.VERSION = '1.0'
        copied = rpc_local.copy_entity(self.other, obj)
        self.assertEqual(_state(_over_the_wire(self.other, obj)),
                         _state(copied))
        self.assertEqual('1.0', copied.VERSION)
