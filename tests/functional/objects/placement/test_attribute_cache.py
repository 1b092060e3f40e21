"""The resource class and trait caches: owners, misses, invalidation."""

from alloc_framework.common import context as af_context
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import resource_class as rc_obj
from alloc_framework.objects.placement import trait as trait_obj
from tests.functional.objects.placement import base


class AttributeCacheTestCase(base.PlacementDBTestCase):

    def test_a_context_without_application_gets_its_own(self):
        other = af_context.get_admin_context()
        self.assertEqual(attribute_cache.rc_id(self.context, 'VCPU'),
                         attribute_cache.rc_id(other, 'VCPU'))
        self.assertIsNot(self.context.attribute_cache,
                         other.attribute_cache)

    def test_the_context_cache_is_used(self):
        cache = attribute_cache.AttributeCache()
        self.context.attribute_cache = cache
        attribute_cache.trait_id(self.context, 'CUSTOM_FAST')
        self.assertIs(cache, self.context.attribute_cache)

    def test_a_miss_reads_rows_added_elsewhere(self):
        attribute_cache.rc_id(self.context, 'VCPU')
        with self.db.engine.begin() as conn:
            new_id = conn.execute(
                models.ResourceClass.__table__.insert().values(
                    name='CUSTOM_NEW')).inserted_primary_key[0]
        self.assertEqual(new_id,
                         attribute_cache.rc_id(self.context, 'CUSTOM_NEW'))
        self.assertEqual('CUSTOM_NEW',
                         attribute_cache.rc_name(self.context, new_id))
        self.assertRaises(exception.ResourceClassNotFound,
                          attribute_cache.rc_id, self.context, 'CUSTOM_NO')

    def test_a_delete_invalidates_every_cache(self):
        # Another context stands for another application of the process.
        other = af_context.get_admin_context()
        old = rc_obj.create(self.context, 'CUSTOM_OLD')
        self.assertEqual('CUSTOM_OLD',
                         attribute_cache.rc_name(other, old.id))
        rc_obj.destroy(self.context, 'CUSTOM_OLD')
        new = rc_obj.create(self.context, 'CUSTOM_NEW')
        # The id of a deleted class goes to the next one.
        self.assertEqual(old.id, new.id)
        self.assertEqual('CUSTOM_NEW',
                         attribute_cache.rc_name(other, new.id))
        self.assertRaises(exception.ResourceClassNotFound,
                          attribute_cache.rc_id, other, 'CUSTOM_OLD')

    def test_a_trait_delete_invalidates_every_cache(self):
        other = af_context.get_admin_context()
        trait_obj.create(self.context, 'CUSTOM_GONE')
        attribute_cache.trait_id(other, 'CUSTOM_GONE')
        trait_obj.destroy(self.context, 'CUSTOM_GONE')
        self.assertRaises(exception.TraitNotFound,
                          attribute_cache.trait_id, other, 'CUSTOM_GONE')
