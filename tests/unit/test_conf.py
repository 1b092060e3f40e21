"""Configuration: every option is documented and the sample generates."""

import io

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg
from oslo_config import generator

from alloc_framework.conf import hardware
from alloc_framework.conf import opts
from alloc_framework.conf import placement
from tests import base


class TestOptions(base.TestCase):

    def test_every_option_has_help(self):
        for group, group_opts in opts.list_opts():
            for opt in group_opts:
                self.assertTrue(opt.help, '%s.%s has no help' %
                                (group, opt.name))

    def test_upstream_compatible_defaults(self):
        self.assertEqual('127.0.0.1', self.conf.api.host_ip)
        self.assertEqual(6385, self.conf.api.port)
        self.assertEqual('127.0.0.1', self.conf.placement_api.host_ip)
        self.assertEqual(8778, self.conf.placement_api.port)
        self.assertEqual('database', self.conf.allocation.backend)
        self.assertEqual('local', self.conf.rpc_transport)
        # Tests enable fake-hardware alone (tests/base.py): read the
        # service's own default from a configuration of its own.
        fresh = cfg.ConfigOpts()
        hardware.register_opts(fresh)
        fresh([])
        self.assertEqual(['fake-hardware', 'ipmi', 'redfish'],
                         fresh.enabled_hardware_types)
        self.assertIsNone(fresh.enabled_power_interfaces)

    def test_embedded_database_under_state_path(self):
        self.assertEqual('sqlite:///%s/alloc_framework.sqlite'
                         % self.state_path, self.conf.database.connection)

    def test_sample_config_generates(self):
        conf = cfg.ConfigOpts()
        generator.register_cli_opts(conf)
        conf(['--namespace', 'alloc_framework', '--namespace', 'oslo.db'])
        out = io.StringIO()
        generator.generate(conf, output_file=out)
        sample = out.getvalue()
        for section in ('[DEFAULT]', '[api]', '[placement_api]',
                        '[placement]', '[conductor]', '[allocation]',
                        '[database]'):
            self.assertIn(section, sample)
        self.assertIn('#port = 6385', sample)
        self.assertIn('#port = 8778', sample)

    def test_sample_config_shows_healthcheck_options(self):
        # oslo.middleware's own [healthcheck] options, with ours.
        conf = cfg.ConfigOpts()
        generator.register_cli_opts(conf)
        conf(['--namespace', 'alloc_framework'])
        out = io.StringIO()
        generator.generate(conf, output_file=out)
        sample = out.getvalue()
        section = sample[sample.index('[healthcheck]'):]
        section = section[:section.index('\n[', 1)]
        for line in ('#enabled = true', '#detailed = false', '#backends =',
                     '#disable_by_file_path = <None>',
                     '#allowed_source_ranges ='):
            self.assertIn(line, section)
        self.assertIn('#enabled_power_interfaces = <the interfaces of the '
                      'enabled hardware types>', sample)
        self.assertIn('#enabled_hardware_types = fake-hardware,ipmi,redfish',
                      sample)


class TestPlacementGroup(base.TestCase):
    """[placement]: our service's options and keystoneauth's, side by side."""

    def test_service_and_client_options_do_not_clash(self):
        from alloc_framework.conf import placement

        service = {o.dest for o in placement.opts}
        client = {o.dest for o in placement.client_opts_with_plugin()}
        self.assertEqual(set(), service & client)
        for name in ('auth_type', 'endpoint_override', 'region_name',
                     'valid_interfaces', 'cafile', 'timeout',
                     'randomize_allocation_candidates'):
            self.assertIn(name, self.conf.placement)

    def test_in_process_unless_told_otherwise(self):
        from alloc_framework.drivers.allocation import placement_client

        self.assertTrue(placement_client.in_process_configured(self.conf))
        self.config(endpoint_override='http://placement:8778',
                    group='placement')
        self.assertFalse(placement_client.in_process_configured(self.conf))
        self.config(endpoint_override=None, auth_type='password',
                    group='placement')
        self.assertFalse(placement_client.in_process_configured(self.conf))

    def test_placement_backend_options(self):
        self.assertEqual(20, self.conf.allocation.placement_candidates_limit)
        self.assertEqual(5, self.conf.allocation.placement_claim_retries)
        self.assertTrue(self.conf.allocation.placement_claim_in_database)

    def _deadline_of(self, text):
        """``[placement] candidates_deadline`` of a file holding ``text``."""
        path = '%s/deadline.conf' % self.state_path
        with open(path, 'w') as stream:
            stream.write('[placement]\ncandidates_deadline = %s\n' % text)
        fresh = cfg.ConfigOpts()
        placement.register_opts(fresh)
        fresh(['--config-file', path])
        return fresh.placement.candidates_deadline

    def test_candidates_deadline(self):
        self.assertEqual(30.0, self.conf.placement.candidates_deadline)
        self.assertEqual(0.5, self._deadline_of('0.5'))
        self.assertEqual(45.0, self._deadline_of('45'))
        # 0 disables the deadline; it is not "stop at once".
        self.assertEqual(0.0, self._deadline_of('0'))
        for bad in ('-1', '-0.5', 'soon', 'nan', 'inf'):
            exc = self.assertRaises(cfg.ConfigFileValueError,
                                    self._deadline_of, bad)
            self.assertIn('candidates_deadline', str(exc))

    def test_no_float_option_takes_nan_or_infinity(self):
        # float() reads them, and NaN passes any min/max bound: each
        # would make an interval or a deadline that never elapses.
        # keystoneauth's own options of [placement] are its business.
        library = {opt.dest for opt in
                   ks_loading.get_session_conf_options()
                   + ks_loading.get_adapter_conf_options()}
        floats = [(group, opt) for group, group_opts in opts.list_opts()
                  for opt in group_opts
                  if isinstance(opt, cfg.FloatOpt)
                  and opt.dest not in library]
        self.assertGreater(len(floats), 10)
        for group, opt in floats:
            for bad in ('nan', 'NaN', 'inf', '-inf', 'Infinity'):
                exc = self.assertRaises(ValueError, opt.type, bad)
                if 'nan' in bad.lower():
                    # No bound refuses it first.
                    self.assertIn('finite', str(exc), (group, opt.name))
            # Finite values are read as before, bounds included.
            self.assertEqual(2.5, opt.type('2.5'), (group, opt.name))
            if opt.type.min is not None:
                self.assertRaises(ValueError, opt.type,
                                  str(opt.type.min - 1))

    def test_nan_in_a_file_names_the_option(self):
        path = '%s/cache.conf' % self.state_path
        with open(path, 'w') as stream:
            stream.write('[placement_api]\npolicy_cache_seconds = nan\n')
        self.conf(['--config-file', path])
        exc = self.assertRaises(
            cfg.ConfigFileValueError,
            lambda: self.conf.placement_api.policy_cache_seconds)
        self.assertIn('policy_cache_seconds', str(exc))
        self.assertIn('finite', str(exc))
