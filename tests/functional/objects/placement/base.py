"""Helpers for the object-level tests of Placement providers."""

import sqlalchemy as sa

from alloc_framework.common import context as af_context
from alloc_framework.db.sqlalchemy import models
from tests import base

RESOURCE_CLASSES = ('VCPU', 'MEMORY_MB', 'DISK_GB', 'CUSTOM_GOLD')
TRAITS = ('HW_CPU_X86_AVX', 'HW_CPU_X86_SSE', 'CUSTOM_FAST', 'CUSTOM_SLOW')


class PlacementDBTestCase(base.DBTestCase):
    """A database with a few resource classes and traits, and a context."""

    def setUp(self):
        super().setUp()
        with self.db.engine.begin() as conn:
            for name in RESOURCE_CLASSES:
                conn.execute(models.ResourceClass.__table__.insert().values(
                    name=name))
            for name in TRAITS:
                conn.execute(models.Trait.__table__.insert().values(
                    name=name))
        self.context = af_context.get_admin_context()

    def allocate(self, rp, rc_name, used,
                 consumer='c0ffee00-0000-4000-8000-000000000001'):
        """Write an allocation row directly (allocations are not ours)."""
        with self.db.engine.begin() as conn:
            rc_id = conn.execute(sa.select(
                models.ResourceClass.__table__.c.id).where(
                models.ResourceClass.__table__.c.name == rc_name)).scalar()
            conn.execute(models.Allocation.__table__.insert().values(
                resource_provider_id=rp.id, consumer_id=consumer,
                resource_class_id=rc_id, used=used))
