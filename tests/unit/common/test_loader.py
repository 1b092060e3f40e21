"""Loading plugins from entry-point namespaces."""

from unittest import mock

from alloc_framework.common import exception
from alloc_framework.common import loader
from alloc_framework.conductor import rpc_local
from alloc_framework.conductor import rpcapi
from alloc_framework.drivers.allocation import base as backend_base
from alloc_framework.drivers.allocation import fake as fake_backend
from alloc_framework.drivers.modules import fake
from tests import base

POWER = 'alloc_framework.hardware.interfaces.power'
EMPTY = 'alloc_framework.tests.no-such-namespace'


class LoadOneTestCase(base.TestCase):

    def test_instantiated_with_the_arguments(self):
        backend = loader.load_one(backend_base.NAMESPACE, 'fake', self.conf)
        self.assertIsInstance(backend, fake_backend.FakeBackend)
        self.assertIs(self.conf, backend.conf)

    def test_unknown_names_namespace_name_and_available(self):
        exc = self.assertRaises(exception.DriverLoadError, loader.load_one,
                                rpcapi.TRANSPORTS_NAMESPACE, 'carrier-pigeon',
                                self.conf)
        self.assertEqual(
            'Plugin "carrier-pigeon" of the "alloc_framework.rpc.transports" '
            'namespace could not be loaded: no such entry point '
            '(available: local, oslo)', str(exc))

    def test_empty_namespace(self):
        exc = self.assertRaises(exception.DriverLoadError, loader.load_one,
                                EMPTY, 'x')
        self.assertIn('(available: none)', str(exc))

    def test_failing_plugin(self):
        with mock.patch.object(rpc_local.LocalTransport, '__init__',
                               side_effect=RuntimeError('no way')):
            exc = self.assertRaises(exception.DriverLoadError,
                                    loader.load_one,
                                    rpcapi.TRANSPORTS_NAMESPACE, 'local',
                                    self.conf)
        self.assertIn('"local"', str(exc))
        self.assertIn(rpcapi.TRANSPORTS_NAMESPACE, str(exc))
        self.assertIn('no way', str(exc))


class LoadEnabledTestCase(base.TestCase):

    def test_loaded_in_order_blanks_ignored(self):
        loaded = loader.load_enabled(POWER, [' fake ', ''])
        self.assertEqual(['fake'], list(loaded))
        self.assertIsInstance(loaded['fake'], fake.FakePower)

    def test_nothing_enabled(self):
        self.assertEqual({}, loader.load_enabled(POWER, []))

    def test_unknown_names_namespace_names_and_available(self):
        exc = self.assertRaises(exception.DriverLoadError,
                                loader.load_enabled, POWER,
                                ['fake', 'snmp', 'amt'])
        self.assertEqual(
            'Plugin "amt, snmp" of the "%s" namespace could not be '
            'loaded: no such entry point (available: fake, ipmi, redfish)'
            % POWER,
            str(exc))

    def test_enabled_twice(self):
        exc = self.assertRaises(exception.DriverLoadError,
                                loader.load_enabled, POWER, ['fake', 'fake'])
        self.assertIn('more than once', str(exc))

    def test_failing_plugin(self):
        with mock.patch.object(fake.FakePower, '__init__',
                               side_effect=RuntimeError('no way')):
            exc = self.assertRaises(exception.DriverLoadError,
                                    loader.load_enabled, POWER, ['fake'])
        self.assertIn('"fake"', str(exc))
        self.assertIn(POWER, str(exc))
        self.assertIn('no way', str(exc))
