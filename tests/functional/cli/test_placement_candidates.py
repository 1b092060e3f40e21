"""``alloc allocation candidate list`` end to end, against our server."""

from oslo_utils import uuidutils

from tests.functional.cli import base


class _Providers:
    """Providers made with the CLI itself."""

    def provider(self, name, vcpu, traits=(), parent=None):
        extra = ('--parent-provider', parent) if parent else ()
        rp = self.alloc('resource', 'provider', 'create', name, *extra)
        if vcpu:
            self.alloc('resource', 'provider', 'inventory', 'set',
                       rp['uuid'], '--resource', 'VCPU=%d' % vcpu)
        if traits:
            args = []
            for trait in traits:
                args += ['--trait', trait]
            self.alloc('resource', 'provider', 'trait', 'set', rp['uuid'],
                       *args)
        return rp['uuid']


class TestAllocationCandidateList(_Providers, base.PlacementCLITestCase):

    def candidates(self, *argv):
        return self.alloc('allocation', 'candidate', 'list', *argv)

    def test_resources_traits_and_limit(self):
        plain = self.provider('plain', 8)
        fast = self.provider('fast', 4, traits=['HW_CPU_X86_AVX2'])
        rows = self.candidates('--resource', 'VCPU=2')
        self.assertEqual({plain, fast},
                         {row['resource provider'] for row in rows})
        row = [r for r in rows if r['resource provider'] == fast][0]
        self.assertEqual('VCPU=2', row['allocation'])
        self.assertEqual('VCPU=0/4', row['inventory used/capacity'])
        self.assertEqual('HW_CPU_X86_AVX2', row['traits'])

        rows = self.candidates('--resource', 'VCPU=2',
                               '--required', 'HW_CPU_X86_AVX2')
        self.assertEqual([fast], [r['resource provider'] for r in rows])
        rows = self.candidates('--resource', 'VCPU=2',
                               '--forbidden', 'HW_CPU_X86_AVX2')
        self.assertEqual([plain], [r['resource provider'] for r in rows])
        self.assertEqual([], self.candidates('--resource', 'VCPU=6',
                                             '--required', 'HW_CPU_X86_AVX2'))
        self.assertEqual(1, len(self.candidates('--resource', 'VCPU=1',
                                                '--limit', '1')))

    def test_granular_groups(self):
        root = self.provider('host', 0)
        numa0 = self.provider('numa0', 4, parent=root)
        numa1 = self.provider('numa1', 4, parent=root)
        rows = self.candidates('--group', '1', '--resource', 'VCPU=3',
                               '--group', '2', '--resource', 'VCPU=3',
                               '--group-policy', 'isolate')
        # Two candidates (numa0+numa1 either way round), two rows each.
        self.assertEqual({1, 2}, {row['#'] for row in rows})
        self.assertEqual(4, len(rows))
        for number in (1, 2):
            self.assertEqual(
                {numa0, numa1},
                {r['resource provider'] for r in rows if r['#'] == number})
        err = self.alloc_fails('allocation', 'candidate', 'list',
                               '--group', '1', '--resource', 'VCPU=1',
                               '--group', '2', '--resource', 'VCPU=1')
        self.assertIn('(HTTP 400)', err)
        self.assertIn('group_policy', err)

    def test_list_form_before_1_12(self):
        rp = self.provider('old', 2)
        rows = self.alloc('--os-placement-api-version', '1.10',
                          'allocation', 'candidate', 'list',
                          '--resource', 'VCPU=1')
        self.assertEqual([(1, 'VCPU=1', rp, 'VCPU=0/2', '')],
                         [tuple(r.values()) for r in rows])

    def test_client_side_errors(self):
        err = self.alloc_fails('allocation', 'candidate', 'list')
        self.assertIn('At least one --resource', err)
        err = self.alloc_fails('allocation', 'candidate', 'list',
                               '--resource', 'VCPU')
        self.assertIn('RESOURCE_CLASS=AMOUNT', err)
        err = self.alloc_fails('--os-placement-api-version', '1.15',
                               'allocation', 'candidate', 'list',
                               '--resource', 'VCPU=1', '--limit', '1')
        self.assertIn('--limit requires --os-placement-api-version 1.16',
                      err)
        # A tree that does not exist has no candidates, as in the
        # reference.
        self.assertEqual([], self.candidates(
            '--resource', 'VCPU=1', '--in-tree', uuidutils.generate_uuid()))


class TestEmptyCandidates(_Providers, base.PlacementCLITestCase):
    """An empty answer says so and gives the ``explain`` command to run."""

    def test_empty_list_suggests_explain(self):
        self.provider('small', 2, traits=['HW_CPU_X86_AVX2'])
        argv = ('--group', 'g1', '--resource', 'VCPU=4',
                '--required', 'HW_CPU_X86_AVX2', '--group-policy', 'none')
        result = self.alloc('allocation', 'candidate', 'list', *argv,
                            fmt='json', expect=0)
        self.assertEqual([], result)
        result = self.alloc('allocation', 'candidate', 'list', *argv,
                            fmt='json', expect=None)
        self.assertEqual([], result.json())
        self.assertIn('No allocation candidates match this request',
                      result.err)
        suggested = result.err.split('alloc allocation candidate explain ',
                                     1)[1].splitlines()[0]
        self.assertEqual(' '.join(argv), suggested)
        # The suggested command runs as it is.
        rows = self.alloc('allocation', 'candidate', 'explain',
                          *suggested.split())
        self.assertEqual(0, rows[-1]['count'])

    def test_no_message_when_there_are_candidates(self):
        self.provider('big', 8)
        result = self.alloc('allocation', 'candidate', 'list', '--resource',
                            'VCPU=1', fmt='json', expect=None)
        self.assertEqual(1, len(result.json()))
        self.assertNotIn('explain', result.err)


class TestAllocationCandidateExplain(_Providers, base.PlacementCLITestCase):
    """``alloc allocation candidate explain``: the options of ``list``,
    the server's steps as rows and its summary after the table."""

    def test_explain_names_the_requirement(self):
        self.provider('big', 8)
        self.provider('small', 2, traits=['HW_CPU_X86_AVX2'])
        rows = self.alloc('allocation', 'candidate', 'explain',
                          '--resource', 'VCPU=4',
                          '--required', 'HW_CPU_X86_AVX2')
        self.assertEqual(
            [{'group': '(unsuffixed)', 'requirement': 'resources VCPU',
              'count': 2, 'unit': 'trees'},
             {'group': '(unsuffixed)', 'requirement': 'resources VCPU:4',
              'count': 1, 'unit': 'trees'},
             {'group': '(unsuffixed)',
              'requirement': 'required HW_CPU_X86_AVX2',
              'count': 0, 'unit': 'trees'},
             {'group': '(request)', 'requirement': 'allocation candidates',
              'count': 0, 'unit': 'candidates'}],
            rows)
        table = self.alloc('allocation', 'candidate', 'explain',
                           '--resource', 'VCPU=4',
                           '--required', 'HW_CPU_X86_AVX2', fmt='table')
        lines = table.out.splitlines()
        self.assertIn('required HW_CPU_X86_AVX2', table.out)
        self.assertIn('No allocation candidate: `required HW_CPU_X86_AVX2` '
                      '(unsuffixed group) eliminated them: 1 provider '
                      'trees before it, none after.', lines[-1])

    def test_explain_granular_groups(self):
        self.provider('a', 4)
        rows = self.alloc('allocation', 'candidate', 'explain',
                          '--group', '1', '--resource', 'VCPU=3',
                          '--group', '2', '--resource', 'VCPU=3',
                          '--group-policy', 'isolate')
        self.assertEqual(
            [('1', 'resources1 VCPU', 1, 'providers'),
             ('1', 'resources1 VCPU:3', 1, 'providers'),
             ('2', 'resources2 VCPU', 1, 'providers'),
             ('2', 'resources2 VCPU:3', 1, 'providers'),
             ('(request)', 'every request group in one tree', 1, 'trees'),
             ('(request)', 'allocation candidates (group_policy isolate)',
              0, 'candidates')],
            [tuple(row.values()) for row in rows])

    def test_explain_checks_options_as_list_does(self):
        err = self.alloc_fails('allocation', 'candidate', 'explain')
        self.assertIn('At least one --resource', err)
        err = self.alloc_fails('--os-placement-api-version', '1.15',
                               'allocation', 'candidate', 'explain',
                               '--resource', 'VCPU=1', '--limit', '1')
        self.assertIn('--limit requires --os-placement-api-version 1.16',
                      err)
