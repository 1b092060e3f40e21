"""The room predicate in SQL and on loaded values agree.

``candidate_predicates.fits`` (SQL, used by the explanation and the
provider listing, and through ``room`` by the search's queries) and
``can_take`` (the search's check of the trees it loaded) are one rule:
for each inventory and amount below, both say the same, and what they
say is what the rule says.
"""

from alloc_framework.db import api as db_api
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import candidate_predicates as preds
from alloc_framework.objects.placement import inventory
from alloc_framework.objects.placement import resource_provider as rp_obj
from tests.functional.objects.placement import base

# (total, reserved, allocation_ratio, min_unit, max_unit, step_size, used)
_INVENTORIES = [
    (8, 0, 1.0, 1, 8, 1, 0),
    (8, 6, 1.0, 1, 8, 1, 0),      # room 2
    (8, 0, 1.0, 1, 8, 1, 7),      # room 1
    (4, 0, 1.5, 1, 6, 1, 0),      # capacity 6
    (4, 1, 1.5, 1, 6, 1, 2),      # capacity 4.5 -> 4, room 2
    (16, 0, 1.0, 2, 8, 2, 0),     # even amounts from 2 to 8
    (16, 0, 1.0, 4, 16, 4, 8),    # multiples of 4, room 8
]
_AMOUNTS = range(1, 10)


@db_api.reader
def _sql_answer(context, rc_id, amount):
    return {row[0] for row in context.session.execute(
        preds.with_capacity(rc_id, amount))}


class RoomTestCase(base.PlacementDBTestCase):

    def setUp(self):
        super().setUp()
        self.rps = []
        for index, (total, reserved, ratio, min_unit, max_unit, step,
                    used) in enumerate(_INVENTORIES):
            rp = rp_obj.create(self.context, 'rp%d' % index)
            inventory.set_inventories(self.context, rp, [inventory.Inventory(
                'VCPU', total, reserved=reserved, min_unit=min_unit,
                max_unit=max_unit, step_size=step, allocation_ratio=ratio)])
            if used:
                self.allocate(rp, 'VCPU', used,
                              consumer='c0ffee00-0000-4000-8000-%012d'
                              % index)
            self.rps.append(rp)

    def test_sql_and_loaded_values_agree(self):
        rc_id = attribute_cache.rc_id(self.context, 'VCPU')
        for amount in _AMOUNTS:
            in_sql = _sql_answer(self.context, rc_id, amount)
            for rp, (total, reserved, ratio, min_unit, max_unit, step,
                     used) in zip(self.rps, _INVENTORIES):
                # The rule, spelled out.
                expected = (min_unit <= amount <= max_unit and
                            amount % step == 0 and
                            used + amount <= (total - reserved) * ratio)
                loaded = preds.can_take(
                    min_unit, max_unit, step,
                    preds.capacity(total, reserved, ratio), used, amount)
                self.assertEqual(expected, rp.id in in_sql,
                                 (rp.name, amount, 'sql'))
                self.assertEqual(expected, loaded,
                                 (rp.name, amount, 'loaded'))
