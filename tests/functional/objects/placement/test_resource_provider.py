"""Resource providers, trees and provider deletion at the object level."""

import sqlalchemy as sa

from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import aggregate
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import inventory
from alloc_framework.objects.placement import resource_provider as rp_obj
from alloc_framework.objects.placement import resource_provider_trait
from tests.functional.objects.placement import base

UUID_A = 'aaaaaaaa-0000-4000-8000-000000000001'
UUID_B = 'bbbbbbbb-0000-4000-8000-000000000002'
AGG_1 = '11111111-0000-4000-8000-000000000001'


class ResourceProviderTestCase(base.PlacementDBTestCase):

    def test_create_root(self):
        rp = rp_obj.create(self.context, 'cn1', uuid=UUID_A)
        self.assertEqual(UUID_A, rp.uuid)
        self.assertEqual('cn1', rp.name)
        self.assertEqual(0, rp.generation)
        self.assertIsNone(rp.parent_provider_uuid)
        self.assertEqual(UUID_A, rp.root_provider_uuid)
        self.assertEqual(rp.id, rp.root_provider_id)
        self.assertIsNotNone(rp.created_at)
        got = rp_obj.get_by_uuid(self.context, UUID_A)
        self.assertEqual((rp.id, 'cn1'), (got.id, got.name))

    def test_create_generates_uuid(self):
        rp = rp_obj.create(self.context, 'cn1')
        self.assertEqual(36, len(rp.uuid))

    def test_create_duplicates(self):
        rp_obj.create(self.context, 'cn1', uuid=UUID_A)
        exc = self.assertRaises(exception.ResourceProviderExists,
                                rp_obj.create, self.context, 'cn1',
                                uuid=UUID_B)
        self.assertIn('name', str(exc))
        exc = self.assertRaises(exception.ResourceProviderExists,
                                rp_obj.create, self.context, 'other',
                                uuid=UUID_A)
        self.assertIn('uuid', str(exc))

    def test_create_child_and_grandchild(self):
        root = rp_obj.create(self.context, 'root', uuid=UUID_A)
        child = rp_obj.create(self.context, 'child', uuid=UUID_B,
                              parent_provider_uuid=UUID_A)
        grand = rp_obj.create(self.context, 'grand',
                              parent_provider_uuid=UUID_B)
        self.assertEqual(UUID_A, child.parent_provider_uuid)
        self.assertEqual(UUID_A, child.root_provider_uuid)
        self.assertEqual(UUID_B, grand.parent_provider_uuid)
        self.assertEqual(root.id, grand.root_provider_id)

    def test_create_bad_parent(self):
        self.assertRaises(exception.InvalidResourceProviderParent,
                          rp_obj.create, self.context, 'x',
                          parent_provider_uuid=UUID_B)
        self.assertRaises(exception.InvalidResourceProviderParent,
                          rp_obj.create, self.context, 'x', uuid=UUID_A,
                          parent_provider_uuid=UUID_A)

    def test_get_not_found(self):
        self.assertRaises(exception.ResourceProviderNotFound,
                          rp_obj.get_by_uuid, self.context, UUID_A)

    def test_rename(self):
        rp = rp_obj.create(self.context, 'cn1', uuid=UUID_A)
        rp_obj.create(self.context, 'cn2', uuid=UUID_B)
        new = rp_obj.update(self.context, rp, name='renamed')
        self.assertEqual('renamed', new.name)
        # A rename does not change what the provider offers.
        self.assertEqual(0, new.generation)
        self.assertRaises(exception.ResourceProviderExists,
                          rp_obj.update, self.context, rp, name='cn2')

    def test_set_parent_once_before_reparenting(self):
        rp_obj.create(self.context, 'p1', uuid=UUID_A)
        p2 = rp_obj.create(self.context, 'p2')
        child = rp_obj.create(self.context, 'child', uuid=UUID_B)
        grand = rp_obj.create(self.context, 'grand',
                              parent_provider_uuid=UUID_B)
        child = rp_obj.update(self.context, child,
                              parent_provider_uuid=UUID_A)
        self.assertEqual(UUID_A, child.parent_provider_uuid)
        self.assertEqual(UUID_A, child.root_provider_uuid)
        # The tree position is not what the generation counts.
        self.assertEqual(0, child.generation)
        # The subtree follows.
        self.assertEqual(
            UUID_A, rp_obj.get_by_uuid(self.context,
                                       grand.uuid).root_provider_uuid)
        # Same parent again is a no-op.
        same = rp_obj.update(self.context, child,
                             parent_provider_uuid=UUID_A)
        self.assertEqual(0, same.generation)
        exc = self.assertRaises(exception.InvalidResourceProviderParent,
                                rp_obj.update, self.context, child,
                                parent_provider_uuid=p2.uuid)
        self.assertIn('re-parenting', str(exc))
        exc = self.assertRaises(exception.InvalidResourceProviderParent,
                                rp_obj.update, self.context, child,
                                parent_provider_uuid=None)
        self.assertIn('un-parenting', str(exc))

    def test_reparent_and_unparent(self):
        rp_obj.create(self.context, 'p1', uuid=UUID_A)
        p2 = rp_obj.create(self.context, 'p2')
        child = rp_obj.create(self.context, 'child', uuid=UUID_B,
                              parent_provider_uuid=UUID_A)
        grand = rp_obj.create(self.context, 'grand',
                              parent_provider_uuid=UUID_B)
        child = rp_obj.update(self.context, child,
                              parent_provider_uuid=p2.uuid,
                              allow_reparenting=True)
        self.assertEqual(p2.uuid, child.root_provider_uuid)
        self.assertEqual(p2.uuid, rp_obj.get_by_uuid(
            self.context, grand.uuid).root_provider_uuid)
        child = rp_obj.update(self.context, child,
                              parent_provider_uuid=None,
                              allow_reparenting=True)
        self.assertIsNone(child.parent_provider_uuid)
        self.assertEqual(UUID_B, child.root_provider_uuid)
        self.assertEqual(UUID_B, rp_obj.get_by_uuid(
            self.context, grand.uuid).root_provider_uuid)

    def test_reparent_loop(self):
        root = rp_obj.create(self.context, 'root', uuid=UUID_A)
        child = rp_obj.create(self.context, 'child', uuid=UUID_B,
                              parent_provider_uuid=UUID_A)
        grand = rp_obj.create(self.context, 'grand',
                              parent_provider_uuid=UUID_B)
        for target in (child, grand):
            exc = self.assertRaises(
                exception.InvalidResourceProviderParent,
                rp_obj.update, self.context, root,
                parent_provider_uuid=target.uuid, allow_reparenting=True)
            self.assertIn('loop', str(exc))
        self.assertRaises(
            exception.InvalidResourceProviderParent,
            rp_obj.update, self.context, root,
            parent_provider_uuid=UUID_A, allow_reparenting=True)

    def test_reparent_keeps_generation(self):
        # PUT /resource_providers/{uuid} carries no generation, so a
        # rename or re-parent neither checks nor bumps it (as upstream).
        rp_obj.create(self.context, 'p1', uuid=UUID_A)
        child = rp_obj.create(self.context, 'child', uuid=UUID_B)
        stale = rp_obj.get_by_uuid(self.context, UUID_B)
        resource_provider_trait.set_traits(self.context, child,
                                           ['CUSTOM_FAST'])
        moved = rp_obj.update(self.context, stale, name='renamed',
                              parent_provider_uuid=UUID_A)
        self.assertEqual(UUID_A, moved.parent_provider_uuid)
        self.assertEqual('renamed', moved.name)
        self.assertEqual(1, moved.generation)

    def test_increment_generation(self):
        rp = rp_obj.create(self.context, 'cn1', uuid=UUID_A)
        stale = rp_obj.get_by_uuid(self.context, UUID_A)
        rp_obj.increment_generation(self.context, rp)
        self.assertEqual(1, rp.generation)
        self.assertEqual(1, rp_obj.get_by_uuid(self.context,
                                               UUID_A).generation)
        self.assertRaises(
            exception.ResourceProviderConcurrentUpdateDetected,
            rp_obj.increment_generation, self.context, stale)
        self.assertEqual(0, stale.generation)

    def test_destroy_removes_everything(self):
        rp = rp_obj.create(self.context, 'cn1', uuid=UUID_A)
        inventory.set_inventories(self.context, rp, [
            inventory.Inventory('VCPU', 8)])
        resource_provider_trait.set_traits(self.context, rp,
                                           ['CUSTOM_FAST'])
        aggregate.set_aggregates(self.context, rp, [AGG_1])
        rp_obj.destroy(self.context, rp)
        self.assertRaises(exception.ResourceProviderNotFound,
                          rp_obj.get_by_uuid, self.context, UUID_A)
        with self.db.engine.connect() as conn:
            for model in (models.Inventory, models.ResourceProviderTrait,
                          models.ResourceProviderAggregate):
                count = conn.execute(sa.select(sa.func.count()).select_from(
                    model.__table__)).scalar()
                self.assertEqual(0, count, model.__tablename__)
            # The aggregate itself stays; only the link is gone.
            self.assertEqual(1, conn.execute(sa.select(
                sa.func.count()).select_from(
                models.PlacementAggregate.__table__)).scalar())
        self.assertRaises(exception.ResourceProviderNotFound,
                          rp_obj.destroy, self.context, rp)

    def test_destroy_parent_refused(self):
        root = rp_obj.create(self.context, 'root', uuid=UUID_A)
        child = rp_obj.create(self.context, 'child',
                              parent_provider_uuid=UUID_A)
        self.assertRaises(exception.CannotDeleteParentResourceProvider,
                          rp_obj.destroy, self.context, root)
        rp_obj.destroy(self.context, child)
        rp_obj.destroy(self.context, root)

    def test_destroy_in_use_refused(self):
        rp = rp_obj.create(self.context, 'cn1', uuid=UUID_A)
        inventory.set_inventories(self.context, rp, [
            inventory.Inventory('VCPU', 8)])
        self.allocate(rp, 'VCPU', 2)
        self.assertRaises(exception.ResourceProviderInUse,
                          rp_obj.destroy, self.context, rp)
        # Nothing was removed.
        self.assertEqual(['VCPU'], [
            i.resource_class for i in
            inventory.get_all_by_resource_provider(self.context, rp)])
