"""GET /allocation_candidates?explain=true: the counts each requirement
leaves, on a known set of providers.

The providers (5 trees, 7 providers)::

    cn1   VCPU 8 (2 used: room 6), MEMORY_MB 4096, HW_CPU_X86_AVX2, agg A
    cn2   VCPU 4, MEMORY_MB 2048, agg B
    cn3   VCPU 8 reserved 6 (room 2), HW_CPU_X86_AVX2
    host  no inventory, agg B
      numa0  VCPU 4, CUSTOM_NUMA
      numa1  VCPU 4, CUSTOM_NUMA
    ss    DISK_GB 1000, MISC_SHARES_VIA_AGGREGATE, agg A

Every expected count below is read off that picture, not off the
implementation.
"""

from unittest import mock

from oslo_utils import uuidutils

from alloc_framework.objects.placement import allocation_candidate as ac_obj
from alloc_framework.objects.placement import candidate_explanation
from tests.functional.api.placement import base


class _ExplainFixture(base.PlacementAppTestCase):
    """The providers of the module docstring."""

    _provider = base.PlacementAppTestCase.create_provider

    def setUp(self):
        super().setUp()
        self.agg_a = uuidutils.generate_uuid()
        self.agg_b = uuidutils.generate_uuid()
        for trait in ('CUSTOM_NUMA',):
            self.assertEqual(201, self.request(
                'PUT', '/traits/%s' % trait).status_code)
        self.cn1 = self._provider('cn1', {'VCPU': {'total': 8},
                                          'MEMORY_MB': {'total': 4096}},
                                  traits=['HW_CPU_X86_AVX2'],
                                  aggs=[self.agg_a])
        self.cn2 = self._provider('cn2', {'VCPU': {'total': 4},
                                          'MEMORY_MB': {'total': 2048}},
                                  aggs=[self.agg_b])
        self.cn3 = self._provider('cn3', {'VCPU': {'total': 8,
                                                   'reserved': 6}},
                                  traits=['HW_CPU_X86_AVX2'])
        self.host = self._provider('host', {}, aggs=[self.agg_b])
        self.numa0 = self._provider('numa0', {'VCPU': {'total': 4}},
                                    traits=['CUSTOM_NUMA'], parent=self.host)
        self.numa1 = self._provider('numa1', {'VCPU': {'total': 4}},
                                    traits=['CUSTOM_NUMA'], parent=self.host)
        self.ss = self._provider('ss', {'DISK_GB': {'total': 1000}},
                                 traits=['MISC_SHARES_VIA_AGGREGATE'],
                                 aggs=[self.agg_a])
        resp = self.request(
            'PUT', '/allocations/%s' % uuidutils.generate_uuid(),
            json={'allocations': {self.cn1: {'resources': {'VCPU': 2}}},
                  'project_id': uuidutils.generate_uuid(),
                  'user_id': uuidutils.generate_uuid(),
                  'consumer_generation': None,
                  'consumer_type': 'INSTANCE'})
        self.assertEqual(204, resp.status_code, resp.text)

    def explain(self, query, version='latest'):
        resp = self.request('GET', '/allocation_candidates?%s&explain=true'
                            % query, version=version)
        self.assertEqual(200, resp.status_code, resp.text)
        explanation = resp.json['explanation']
        self.assertEqual(len(resp.json['allocation_requests']),
                         explanation['steps'][-1]['count'])
        return explanation

    def steps(self, query, version='latest'):
        return [(s['group'], s['requirement'], s['count'], s['unit'])
                for s in self.explain(query, version)['steps']]


class ExplainTestCase(_ExplainFixture):

    # The answer without explain is the reference's.

    def test_no_explanation_unless_asked(self):
        for query in ('resources=VCPU:1', 'resources=VCPU:1&explain=false'):
            resp = self.request('GET', '/allocation_candidates?' + query)
            self.assertEqual(200, resp.status_code)
            self.assertEqual({'allocation_requests', 'provider_summaries'},
                             set(resp.json))
        plain = self.request('GET', '/allocation_candidates?resources=VCPU:1')
        asked = self.request(
            'GET', '/allocation_candidates?resources=VCPU:1&explain=true')
        body = asked.json
        del body['explanation']
        self.assertEqual(plain.json, body)

    def test_bad_values_name_the_parameter(self):
        for query in ('explain=yes', 'explain=', 'explain=TRUE'):
            resp = self.request(
                'GET', '/allocation_candidates?resources=VCPU:1&' + query)
            self.assertEqual(400, resp.status_code)
            error = resp.json['errors'][0]
            self.assertEqual('placement.query.bad_value', error['code'])
            self.assertIn("'explain'", error['detail'])
        resp = self.request('GET', '/allocation_candidates?resources=VCPU:1'
                            '&explain=true&explain=true')
        self.assertEqual(400, resp.status_code)
        self.assertEqual('placement.query.duplicate_key',
                         resp.json['errors'][0]['code'])
        self.assertIn("'explain'", resp.json['errors'][0]['detail'])

    def test_every_candidates_version(self):
        for version in ('1.10', '1.16', '1.21', '1.25', '1.29', '1.39'):
            self.assertEqual(
                [('', 'resources VCPU', 4, 'trees'),
                 ('', 'resources VCPU:6', 1, 'trees'),
                 (None, 'allocation candidates' + (
                     ' (one provider per tree)' if version < '1.29'
                     else ''), 1, 'candidates')],
                self.steps('resources=VCPU:6', version))

    def test_policy_of_the_candidates(self):
        # Whoever may not list candidates may not ask why there are none.
        resp = self.request(
            'GET', '/allocation_candidates?resources=VCPU:1&explain=true',
            token='alice:proj', headers={'X-Roles': 'reader'})
        self.assertEqual(403, resp.status_code)
        self.assertNotIn('explanation', resp.text)

    def test_before_1_10_still_404(self):
        resp = self.request(
            'GET', '/allocation_candidates?resources=VCPU:1&explain=true',
            version='1.9')
        self.assertEqual(404, resp.status_code)

    # Flat providers, traits, usage.

    def test_trait_nobody_has_after_resources(self):
        explanation = self.explain(
            'resources=VCPU:6&required=HW_CPU_X86_AVX512F')
        self.assertEqual(
            [('', 'resources VCPU', 4, 'trees'),
             ('', 'resources VCPU:6', 1, 'trees'),
             ('', 'required HW_CPU_X86_AVX512F', 0, 'trees'),
             (None, 'allocation candidates', 0, 'candidates')],
            [tuple(s.values()) for s in explanation['steps']])
        self.assertIn('`required HW_CPU_X86_AVX512F` (unsuffixed group) '
                      'eliminated them: 1 provider trees before it, none '
                      'after', explanation['summary'])

    def test_usage_counts(self):
        # cn1 has 8 VCPU but 2 are used: no tree has room for 7.
        explanation = self.explain('resources=VCPU:7')
        self.assertEqual(
            [('', 'resources VCPU', 4, 'trees'),
             ('', 'resources VCPU:7', 0, 'trees'),
             (None, 'allocation candidates', 0, 'candidates')],
            [tuple(s.values()) for s in explanation['steps']])
        self.assertIn('`resources VCPU:7`', explanation['summary'])

    def test_required_and_forbidden_traits(self):
        self.assertEqual(
            [('', 'resources VCPU', 4, 'trees'),
             ('', 'resources VCPU:2', 4, 'trees'),
             ('', 'required HW_CPU_X86_AVX2', 2, 'trees'),
             (None, 'allocation candidates', 2, 'candidates')],
            self.steps('resources=VCPU:2&required=HW_CPU_X86_AVX2'))
        self.assertEqual(
            [('', 'resources VCPU', 4, 'trees'),
             ('', 'resources VCPU:2', 4, 'trees'),
             ('', 'required !HW_CPU_X86_AVX2', 2, 'trees'),
             (None, 'allocation candidates', 3, 'candidates')],
            self.steps('resources=VCPU:2&required=!HW_CPU_X86_AVX2'))
        self.assertEqual(
            [('', 'resources VCPU', 4, 'trees'),
             ('', 'resources VCPU:1', 4, 'trees'),
             ('', 'required in:CUSTOM_NUMA,HW_CPU_X86_AVX2', 3, 'trees'),
             (None, 'allocation candidates', 4, 'candidates')],
            self.steps('resources=VCPU:1'
                       '&required=in:HW_CPU_X86_AVX2,CUSTOM_NUMA'))

    def test_unknown_trait_is_still_a_400(self):
        resp = self.request(
            'GET', '/allocation_candidates?resources=VCPU:1'
            '&required=CUSTOM_NOPE&explain=true')
        self.assertEqual(400, resp.status_code)
        self.assertIn('CUSTOM_NOPE', resp.json['errors'][0]['detail'])

    # Nested trees, in_tree, root_required.

    def test_nested(self):
        # Only the host's NUMA children have CUSTOM_NUMA; either serves.
        self.assertEqual(
            [('', 'resources VCPU', 4, 'trees'),
             ('', 'resources VCPU:4', 3, 'trees'),
             ('', 'required CUSTOM_NUMA', 1, 'trees'),
             (None, 'allocation candidates', 2, 'candidates')],
            self.steps('resources=VCPU:4&required=CUSTOM_NUMA'))
        # One class is served by one provider: 8 VCPU split over the two
        # children is no candidate.
        self.assertEqual(
            [('', 'resources VCPU', 4, 'trees'),
             ('', 'resources VCPU:5', 1, 'trees'),
             ('', 'required CUSTOM_NUMA', 0, 'trees'),
             (None, 'allocation candidates', 0, 'candidates')],
            self.steps('resources=VCPU:5&required=CUSTOM_NUMA'))

    def test_in_tree(self):
        self.assertEqual(
            [('', 'resources VCPU', 4, 'trees'),
             ('', 'resources VCPU:1', 4, 'trees'),
             ('', 'in_tree %s' % self.numa0, 1, 'trees'),
             (None, 'allocation candidates', 2, 'candidates')],
            self.steps('resources=VCPU:1&in_tree=%s' % self.numa0))
        missing = uuidutils.generate_uuid()
        self.assertEqual(
            [('', 'resources VCPU', 4, 'trees'),
             ('', 'resources VCPU:1', 4, 'trees'),
             ('', 'in_tree %s' % missing, 0, 'trees'),
             (None, 'allocation candidates', 0, 'candidates')],
            self.steps('resources=VCPU:1&in_tree=%s' % missing))

    def test_root_required(self):
        self.assertEqual(
            [('', 'resources VCPU', 4, 'trees'),
             ('', 'resources VCPU:1', 4, 'trees'),
             (None, 'root_required HW_CPU_X86_AVX2', 2, 'trees'),
             (None, 'root_required !CUSTOM_NUMA', 2, 'trees'),
             (None, 'allocation candidates', 2, 'candidates')],
            self.steps('resources=VCPU:1'
                       '&root_required=HW_CPU_X86_AVX2,!CUSTOM_NUMA'))
        # The whole request narrows the trees the groups left: cn3's
        # root has the trait but not the room.
        self.assertEqual(
            [('', 'resources VCPU', 4, 'trees'),
             ('', 'resources VCPU:3', 3, 'trees'),
             (None, 'root_required HW_CPU_X86_AVX2', 1, 'trees'),
             (None, 'allocation candidates', 1, 'candidates')],
            self.steps('resources=VCPU:3&root_required=HW_CPU_X86_AVX2'))

    # Aggregates and sharing providers.

    def test_member_of(self):
        # Through the root: the NUMA children are in B with their host.
        self.assertEqual(
            [('', 'resources VCPU', 4, 'trees'),
             ('', 'resources VCPU:1', 4, 'trees'),
             ('', 'member_of %s' % self.agg_b, 2, 'trees'),
             (None, 'allocation candidates', 3, 'candidates')],
            self.steps('resources=VCPU:1&member_of=%s' % self.agg_b))
        self.assertEqual(
            [('', 'resources VCPU', 4, 'trees'),
             ('', 'resources VCPU:1', 4, 'trees'),
             ('', 'member_of !%s' % self.agg_b, 2, 'trees'),
             (None, 'allocation candidates', 2, 'candidates')],
            self.steps('resources=VCPU:1&member_of=!%s' % self.agg_b))
        both = sorted([self.agg_a, self.agg_b])
        self.assertEqual(
            [('', 'resources VCPU', 4, 'trees'),
             ('', 'resources VCPU:1', 4, 'trees'),
             ('', 'member_of in:%s,%s' % tuple(both), 3, 'trees'),
             (None, 'allocation candidates', 4, 'candidates')],
            self.steps('resources=VCPU:1&member_of=in:%s,%s'
                       % (self.agg_b, self.agg_a)))

    def test_sharing(self):
        # DISK_GB comes from ss, shared with cn1 through aggregate A (and
        # ss's own tree has DISK_GB but no VCPU).
        self.assertEqual(
            [('', 'resources VCPU', 4, 'trees'),
             ('', 'resources VCPU:2', 4, 'trees'),
             ('', 'resources DISK_GB', 1, 'trees'),
             ('', 'resources DISK_GB:100', 1, 'trees'),
             (None, 'allocation candidates', 1, 'candidates')],
            self.steps('resources=VCPU:2,DISK_GB:100'))
        explanation = self.explain('resources=VCPU:2,DISK_GB:2000')
        self.assertEqual(
            [('', 'resources DISK_GB:2000', 0, 'trees')],
            [tuple(s.values()) for s in explanation['steps']
             if s['count'] == 0 and s['group'] == ''])
        self.assertEqual([('', 'resources DISK_GB', 1, 'trees')],
                         [tuple(s.values()) for s in explanation['steps']
                          if s['requirement'] == 'resources DISK_GB'])

    # Granular groups and the whole request.

    def test_granular_isolate(self):
        query = ('resources1=VCPU:4&required1=CUSTOM_NUMA'
                 '&resources2=VCPU:4&required2=CUSTOM_NUMA'
                 '&group_policy=isolate')
        self.assertEqual(
            [('1', 'resources1 VCPU', 5, 'providers'),
             ('1', 'resources1 VCPU:4', 4, 'providers'),
             ('1', 'required1 CUSTOM_NUMA', 2, 'providers'),
             ('2', 'resources2 VCPU', 5, 'providers'),
             ('2', 'resources2 VCPU:4', 4, 'providers'),
             ('2', 'required2 CUSTOM_NUMA', 2, 'providers'),
             (None, 'every request group in one tree', 1, 'trees'),
             (None, 'allocation candidates (group_policy isolate)', 2,
              'candidates')],
            self.steps(query))

    def test_isolate_is_the_culprit(self):
        # Only cn1 has 4 VCPU free and AVX2: both groups fit it, but not
        # on two different providers.
        explanation = self.explain(
            'resources1=VCPU:3&required1=HW_CPU_X86_AVX2'
            '&resources2=VCPU:3&required2=HW_CPU_X86_AVX2'
            '&group_policy=isolate')
        self.assertEqual(
            [('1', 'resources1 VCPU', 5, 'providers'),
             ('1', 'resources1 VCPU:3', 4, 'providers'),
             ('1', 'required1 HW_CPU_X86_AVX2', 1, 'providers'),
             ('2', 'resources2 VCPU', 5, 'providers'),
             ('2', 'resources2 VCPU:3', 4, 'providers'),
             ('2', 'required2 HW_CPU_X86_AVX2', 1, 'providers'),
             (None, 'every request group in one tree', 1, 'trees'),
             (None, 'allocation candidates (group_policy isolate)', 0,
              'candidates')],
            [tuple(s.values()) for s in explanation['steps']])
        self.assertIn('No allocation candidate: `allocation candidates '
                      '(group_policy isolate)` (whole request) eliminated '
                      'them: 1 provider trees before it, none after.',
                      explanation['summary'])

    def test_granular_member_of_is_direct(self):
        # member_of1 does not go through the root: the NUMA children are
        # not directly in B.
        self.assertEqual(
            [('1', 'resources1 VCPU', 5, 'providers'),
             ('1', 'resources1 VCPU:4', 4, 'providers'),
             ('1', 'member_of1 %s' % self.agg_b, 1, 'providers'),
             (None, 'allocation candidates', 1, 'candidates')],
            self.steps('resources1=VCPU:4&member_of1=%s' % self.agg_b))

    def test_same_subtree(self):
        query = ('resources_A=VCPU:1&required_A=CUSTOM_NUMA'
                 '&resources_B=VCPU:1&required_B=CUSTOM_NUMA'
                 '&group_policy=isolate&same_subtree=_A,_B')
        steps = self.steps(query)
        self.assertEqual(
            [(None, 'every request group in one tree', 1, 'trees'),
             (None, 'allocation candidates (group_policy isolate, '
              'same_subtree _A,_B)', 0, 'candidates')],
            steps[-2:])
        self.assertEqual(('_A', 'required_A CUSTOM_NUMA', 2, 'providers'),
                         steps[2])

    def test_unsuffixed_and_granular(self):
        self.assertEqual(
            [('', 'resources MEMORY_MB', 2, 'trees'),
             ('', 'resources MEMORY_MB:1024', 2, 'trees'),
             ('1', 'resources1 VCPU', 5, 'providers'),
             ('1', 'resources1 VCPU:2', 5, 'providers'),
             ('1', 'required1 HW_CPU_X86_AVX2', 2, 'providers'),
             (None, 'every request group in one tree', 1, 'trees'),
             (None, 'allocation candidates', 1, 'candidates')],
            self.steps('resources=MEMORY_MB:1024'
                       '&resources1=VCPU:2&required1=HW_CPU_X86_AVX2'))

    def test_limit(self):
        explanation = self.explain('resources=VCPU:1&limit=1')
        self.assertEqual(
            [('', 'resources VCPU', 4, 'trees'),
             ('', 'resources VCPU:1', 4, 'trees'),
             (None, 'allocation candidates', 1, 'candidates')],
            [tuple(s.values()) for s in explanation['steps']])
        self.assertIn('1 allocation candidates (the limit was reached).',
                      explanation['summary'])


class ExplainFunctionTestCase(_ExplainFixture):
    """``candidate_explanation.explain_candidates`` called as a backend
    would, with a parsed request and no HTTP."""

    def test_culprit(self):
        from alloc_framework.common import context as af_context
        ctx = af_context.get_admin_context()
        groups = [ac_obj.RequestGroup(
            '', resources={'VCPU': 6},
            required_traits=[{'HW_CPU_X86_AVX512F'}])]
        explanation = candidate_explanation.explain_candidates(
            ctx, groups, ac_obj.RequestWide())
        self.assertEqual(
            candidate_explanation.Step('', 'required HW_CPU_X86_AVX512F',
                                       0, candidate_explanation.TREES),
            explanation.culprit)
        self.assertEqual(0, explanation.steps[-1].count)
        explanation = candidate_explanation.explain_candidates(
            ctx, [ac_obj.RequestGroup('', resources={'VCPU': 6})],
            ac_obj.RequestWide())
        self.assertIsNone(explanation.culprit)
        self.assertEqual(1, explanation.steps[-1].count)

    def test_search_explains_in_its_own_transaction(self):
        # The explanation reads through the connection (so the
        # transaction) the search read through.
        from alloc_framework.common import context as af_context
        ctx = af_context.get_admin_context()
        connections = []
        real_search = ac_obj.get_candidates
        real_explain = candidate_explanation.explain_candidates

        def search(context, *args, **kwargs):
            connections.append(context.connection)
            return real_search(context, *args, **kwargs)

        def explain(context, *args, **kwargs):
            connections.append(context.connection)
            return real_explain(context, *args, **kwargs)

        groups = [ac_obj.RequestGroup('', resources={'VCPU': 6})]
        with mock.patch.object(ac_obj, 'get_candidates', search), \
                mock.patch.object(candidate_explanation,
                                  'explain_candidates', explain):
            found, _providers, explanation = candidate_explanation.search(
                ctx, groups, ac_obj.RequestWide(), explain=True)
        self.assertEqual(2, len(connections))
        self.assertIs(connections[0], connections[1])
        self.assertEqual(1, len(found))
        self.assertEqual(1, explanation.steps[-1].count)
        found, _providers, explanation = candidate_explanation.search(
            ctx, groups, ac_obj.RequestWide())
        self.assertIsNone(explanation)
        self.assertEqual(1, len(found))


class ExplainTreesTestCase(base.PlacementAppTestCase):
    """Without sharing providers, a tree is counted once however many of
    its providers meet a requirement.

    One tree: ``host`` with two NUMA children of 4 VCPU each; and a
    compute node ``cn`` of 4 VCPU.
    """

    def setUp(self):
        super().setUp()
        self.host = self.create_provider('host', {})
        for name in ('numa0', 'numa1'):
            self.create_provider(name, {'VCPU': {'total': 4}},
                                 parent=self.host)
        self.create_provider('cn', {'VCPU': {'total': 4}})

    def _steps(self, query):
        resp = self.request('GET', '/allocation_candidates?%s&explain=true'
                            % query)
        self.assertEqual(200, resp.status_code, resp.text)
        return [(s['group'], s['requirement'], s['count'], s['unit'])
                for s in resp.json['explanation']['steps']]

    def test_in_tree_counts_the_tree_once(self):
        self.assertEqual(
            [('', 'resources VCPU', 2, 'trees'),
             ('', 'resources VCPU:1', 2, 'trees'),
             ('', 'in_tree %s' % self.host, 1, 'trees'),
             (None, 'allocation candidates', 2, 'candidates')],
            self._steps('resources=VCPU:1&in_tree=%s' % self.host))

    def test_granular_counts_providers(self):
        # A granular group counts providers: both NUMA nodes and cn.
        self.assertEqual(
            [('1', 'resources1 VCPU', 3, 'providers'),
             ('1', 'resources1 VCPU:4', 3, 'providers'),
             (None, 'allocation candidates', 3, 'candidates')],
            self._steps('resources1=VCPU:4'))
