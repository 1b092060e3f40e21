"""Field types of the versioned objects.

Thin additions to ``oslo_versionedobjects.fields``: dictionaries that
accept JSON text (the API and the database both hand us either), and
short aliases so object modules read like a schema.
"""

from oslo_serialization import jsonutils
from oslo_versionedobjects import fields as ovo_fields

BooleanField = ovo_fields.BooleanField
DateTimeField = ovo_fields.DateTimeField
IntegerField = ovo_fields.IntegerField
ListOfStringsField = ovo_fields.ListOfStringsField
StringField = ovo_fields.StringField
UUIDField = ovo_fields.UUIDField


class FlexibleDict(ovo_fields.FieldType):
    """A dict that may arrive as a JSON string; ``None`` becomes ``{}``."""

    @staticmethod
    def coerce(obj, attr, value):
        if isinstance(value, str):
            value = jsonutils.loads(value)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ValueError('%s must be a dictionary, not %s'
                             % (attr, type(value).__name__))
        return dict(value)


class FlexibleDictField(ovo_fields.AutoTypedField):
    AUTO_TYPE = FlexibleDict()

    # A nullable dict field still accepts None and stores it as {} so
    # callers never have to test for None before reading a key.
    def _null(self, obj, attr):
        if self.nullable:
            return {}
        return super()._null(obj, attr)


class ListOfFlexibleDictsField(ovo_fields.AutoTypedField):
    """A list of dicts (each as :class:`FlexibleDict` takes it)."""

    AUTO_TYPE = ovo_fields.List(FlexibleDict())
