"""The FirmwareComponent versioned object: a node's firmware versions.

One row per node and component (``bmc``, ``bios``, ...) of the
``firmware_information`` table. The conductor stores what the node's
firmware interface reads from the hardware with
:meth:`FirmwareComponent.sync` (see
``FirmwareInterface.cache_firmware_components``); the API lists them
(``GET /v1/nodes/{node}/firmware``). The versions are as upstream:

* ``initial_version``: the version first read, never changed;
* ``current_version``: the version last read;
* ``last_version_flashed``: the version an update last installed (read
  after the update), None when the component was never updated.

From version 1.1, ``vendor``, ``model`` and ``serial_number`` say what
the hardware tells of the device (bare metal API 1.114): None until a
reading gives them; a reading without them keeps what was known.
"""

from oslo_utils import versionutils
import sqlalchemy as sa

from alloc_framework.common import exception
from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.baremetal import base
from alloc_framework.objects.baremetal import fields

FIRMWARE = models.FirmwareComponent.__table__
F = FIRMWARE.c
# What a reading may tell of a component's device, beside its version.
IDENTITY_FIELDS = ('vendor', 'model', 'serial_number')


@db_api.reader
def _list(context, node_id):
    return context.session.execute(
        sa.select(FIRMWARE).where(F.node_id == node_id)
        .order_by(F.component)).all()


@db_api.retry_on_deadlock
@db_api.writer
def _sync(context, node_id, versions, identities, flashed):
    """Apply one reading of the hardware in one transaction."""
    now = base.utcnow()
    rows = {row.component: row for row in context.session.execute(
        sa.select(FIRMWARE).where(F.node_id == node_id))}
    for component, version in versions.items():
        row = rows.get(component)
        identity = identities.get(component, {})
        if row is None:
            context.session.execute(sa.insert(FIRMWARE).values(
                node_id=node_id, component=component,
                initial_version=version, current_version=version,
                last_version_flashed=(version if component in flashed
                                      else None),
                created_at=now, **identity))
            continue
        values = {name: value for name, value in identity.items()
                  if getattr(row, name) != value}
        if row.current_version != version:
            values['current_version'] = version
        if component in flashed and row.last_version_flashed != version:
            values['last_version_flashed'] = version
        if values:
            context.session.execute(
                sa.update(FIRMWARE).where(F.id == row.id)
                .values(updated_at=now, **values))


@base.AllocObjectRegistry.register
class FirmwareComponent(base.AllocObject):
    """One firmware component of a node."""

    # Version 1.0: initial version
    # Version 1.1: vendor, model, serial_number
    VERSION = '1.1'

    fields = {
        'id': fields.IntegerField(),
        'node_id': fields.IntegerField(),
        'component': fields.StringField(),
        'initial_version': fields.StringField(),
        'current_version': fields.StringField(nullable=True),
        'last_version_flashed': fields.StringField(nullable=True),
        'vendor': fields.StringField(nullable=True),
        'model': fields.StringField(nullable=True),
        'serial_number': fields.StringField(nullable=True),
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        target = versionutils.convert_version_to_tuple(target_version)
        if target < (1, 1):
            for name in IDENTITY_FIELDS:
                primitive.pop(name, None)

    @classmethod
    def list_by_node_id(cls, context, node_id):
        """The components of a node, by component name."""
        return [cls._from_db_row(context, cls(), row)
                for row in _list(context, node_id)]

    @staticmethod
    def sync(context, node_id, components, flashed=()):
        """Store a reading of the node's firmware components.

        A component seen for the first time gets its ``initial_version``;
        a known one its new ``current_version``. Components the reading
        does not list are kept: a BMC that cannot tell now does not erase
        what was known.

        :param components: list of ``{'component': str,
            'current_version': str}`` (``FirmwareInterface.get_components``),
            each optionally with ``vendor``, ``model`` and
            ``serial_number`` strings (None or absent: unknown).
        :param flashed: names of the components an update just installed:
            their version read now is also ``last_version_flashed``.
        :raises: InvalidParameterValue for a malformed reading.
        """
        versions = {}
        identities = {}
        for item in components or ():
            name = item.get('component') if isinstance(item, dict) else None
            version = item.get('current_version') if name else None
            if not isinstance(name, str) or not name or not isinstance(
                    version, str) or not version:
                raise exception.InvalidParameterValue(
                    err='A firmware component needs a "component" name and '
                        'a "current_version" string, not %r.' % (item,))
            versions[name] = version
            identity = {}
            for field in IDENTITY_FIELDS:
                value = item.get(field)
                if value is None or value == '':
                    continue
                if not isinstance(value, str) or len(value) > 255:
                    raise exception.InvalidParameterValue(
                        err='The "%s" of firmware component %s must be a '
                            'string of at most 255 characters, not %r.'
                            % (field, name, value))
                identity[field] = value
            identities[name] = identity
        if versions:
            _sync(context, node_id, versions, identities,
                  frozenset(flashed))
