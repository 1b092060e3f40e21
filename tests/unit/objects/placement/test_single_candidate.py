"""A candidate of one provider for one group (``SingleCandidate``) is the
same candidate as the ``Candidate`` of its allocations, and the answer's
text of either is the same, at every shape of the answer."""

import json

from alloc_framework.api.placement import candidates_json
from alloc_framework.api.placement import microversion
from alloc_framework.objects.placement import allocation_candidate as ac
from tests import base

UUID = '8f2cbd8e-63f4-4d2a-9d5b-1a2c3d4e5f60'


class _Group:
    """What a candidate and the writer read of a group: its suffix and
    its resources in the order of the allocations."""

    def __init__(self, suffix):
        self.suffix = suffix
        self.ordered = [(0, 2), (2, 512)]


def _provider():
    rp = ac.Provider((7, UUID, None, 7))
    rp.root_uuid = UUID
    rp.inventories = {0: (1, 8, 1, 8), 2: (1, 2048, 1, 2048)}
    return rp


def _candidate(rp, group):
    return ac.Candidate(
        {(rp, rc_id): amount for rc_id, amount in group.ordered},
        {group.suffix: (rp,)})


def _version(text):
    return microversion.extract_version(
        {microversion.HEADER: 'placement %s' % text})


class SingleCandidateTestCase(base.TestCase):

    def test_same_candidate(self):
        rp = _provider()
        for suffix in ('', '_NIC'):
            group = _Group(suffix)
            single = ac.SingleCandidate(rp, group)
            other = _candidate(rp, group)
            self.assertEqual(other.allocations, single.allocations)
            self.assertEqual(list(other.allocations),
                             list(single.allocations))
            self.assertEqual(other.mappings, single.mappings)
            self.assertEqual(other.key(), single.key())
            self.assertIs(rp, single.provider)
            self.assertIsNone(other.provider)

    def test_same_text_at_each_version(self):
        rp = _provider()
        for suffix in ('', '1'):
            group = _Group(suffix)
            for version in ('1.10', '1.12', '1.29', '1.34', '1.39'):
                encoder = candidates_json.AnswerEncoder(
                    _version(version), {0: 'VCPU', 2: 'MEMORY_MB'}, {},
                    {'VCPU', 'MEMORY_MB'})
                text = encoder.allocation_request(_candidate(rp, group))
                self.assertEqual(
                    text, encoder.allocation_request(
                        ac.SingleCandidate(rp, group)), version)
                # Each time, from the group's text made once.
                self.assertEqual(
                    text, encoder.allocation_request(
                        ac.SingleCandidate(rp, group)), version)
                self.assertEqual(json.dumps(json.loads(text)), text)
