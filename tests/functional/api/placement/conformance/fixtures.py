"""gabbi fixtures for the upstream Placement conformance suite.

The YAML files of the reference implementation name their fixtures
(``fixtures: [AllocationFixture]``) and read the identifiers of the data
those fixtures create from the process environment
(``$ENVIRON['RP_UUID']``). This module provides a class for every fixture
name those files use, with the same data topology and the same
environment names, built for this project: a fresh configuration
(oslo.config fixture over the global ``CONF``), a fresh database
(``tests.base.Database``), noauth, and the data created through our own
HTTP API, in process, as an admin client would create it. Creating the
data over HTTP keeps the fixtures independent from the objects layer's
Python interface; only the wire contract matters here.

gabbi asks for the intercepted application while it builds the suites,
before any fixture runs, so ``setup_app`` returns a callable that forwards
every request to the application of the running fixture, which loads it
on first use (after the fixture has finished configuring it).
"""

import json
import os
import uuid

from gabbi import fixture
from oslo_middleware import cors
import webob

from alloc_framework.api.placement import deploy
from alloc_framework.api.placement import policies
from tests.functional.api.placement import fixtures as api_fixtures

# The fixture whose application answers the intercepted requests.
_RUNNING = None

# The microversion the fixtures write with: the highest one whose
# request bodies every fixture below uses (consumer generations).
_FIXTURE_VERSION = 'placement 1.28'


def _new_uuid():
    return str(uuid.uuid4())


def _forward(environ, start_response):
    if _RUNNING is None:
        raise RuntimeError('no conformance fixture is running')
    return _RUNNING.app(environ, start_response)


def setup_app():
    """gabbi's intercept: the application of the running fixture."""
    return _forward


class FixtureDataError(Exception):
    """The API refused a request a fixture needs to build its data."""


class APIFixture(fixture.GabbiFixture):
    """A configured application over an empty database, noauth.

    Exports the environment names every upstream YAML file may use; the
    subclasses add data (``make_entities``) or configuration
    (``configure``).
    """

    # Whether the new (secure RBAC) policy defaults are enforced.
    secure_rbac = False

    def start_fixture(self):
        global _RUNNING
        self._app = None
        self.env = api_fixtures.PlacementEnvironment()
        self.env.setUp()
        self.conf = self.env.conf
        self.conf_fixture = self.env.conf_fixture
        self.tempdir = self.env.tempdir
        self.conf_fixture.config(enforce_new_defaults=self.secure_rbac,
                                 group='oslo_policy')
        # A policy file that does not exist: the rules' defaults apply.
        self.conf_fixture.config(
            policy_file=os.path.join(self.tempdir.path, 'policy.yaml'),
            group='oslo_policy')
        self.export_environ()
        self.configure()
        _RUNNING = self
        try:
            self.make_entities()
        except Exception:
            self.stop_fixture()
            raise

    def export_environ(self):
        env = os.environ
        for name in ('RP_UUID', 'RP_NAME', 'RP_UUID1', 'RP_NAME1',
                     'RP_UUID2', 'RP_NAME2', 'PROJECT_ID',
                     'ADMIN_PROJECT_ID', 'SERVICE_PROJECT_ID', 'USER_ID',
                     'PROJECT_ID_ALT', 'USER_ID_ALT', 'INSTANCE_UUID',
                     'MIGRATION_UUID', 'CONSUMER_UUID',
                     'PARENT_PROVIDER_UUID', 'ALT_PARENT_PROVIDER_UUID'):
            env[name] = _new_uuid()
        env['CUSTOM_RES_CLASS'] = 'CUSTOM_IRON_NFV'
        env['CUSTOM_RES_CLASS1'] = 'CUSTOM_IRON_NFV1'
        env['CUSTOM_RES_CLASS2'] = 'CUSTOM_IRON_NFV2'

    def configure(self):
        """Change the configuration before the application loads."""

    def make_entities(self):
        """Create the fixture's data."""

    @property
    def app(self):
        if self._app is None:
            self._app = deploy.loadapp(self.conf)
        return self._app

    def stop_fixture(self):
        global _RUNNING
        if _RUNNING is self:
            _RUNNING = None
        self._app = None
        self.env.cleanUp()

    # An admin client of our own API, for the fixtures' data.

    def call(self, method, url, body=None, expect=(200, 201, 204)):
        req = webob.Request.blank(url, method=method)
        req.headers['x-auth-token'] = 'admin'
        req.headers['accept'] = 'application/json'
        req.headers['openstack-api-version'] = _FIXTURE_VERSION
        if body is not None:
            req.body = json.dumps(body).encode('utf-8')
            req.content_type = 'application/json'
        resp = req.get_response(self.app)
        if resp.status_code not in expect:
            raise FixtureDataError('%s %s -> %s: %s' % (
                method, url, resp.status, resp.text))
        return resp.json if resp.body else None

    def _generation(self, rp_uuid):
        return self.call('GET', '/resource_providers/%s' % rp_uuid)[
            'generation']

    def create_provider(self, name, *aggregates, **kwargs):
        """A provider (uuid ``uuid=`` or random) in ``aggregates``."""
        body = {'name': name, 'uuid': kwargs.get('uuid') or _new_uuid()}
        if kwargs.get('parent'):
            body['parent_provider_uuid'] = kwargs['parent']
        self.call('POST', '/resource_providers', body)
        if aggregates:
            self.set_aggregates(body['uuid'], *aggregates)
        return body['uuid']

    def set_aggregates(self, rp_uuid, *aggregates):
        self.call('PUT', '/resource_providers/%s/aggregates' % rp_uuid,
                  {'aggregates': list(aggregates),
                   'resource_provider_generation':
                   self._generation(rp_uuid)})

    def ensure_resource_class(self, name):
        if name.startswith('CUSTOM_'):
            self.call('PUT', '/resource_classes/%s' % name)

    def add_inventory(self, rp_uuid, rc, total, **fields):
        """Add one class to the provider's inventory; max_unit=total."""
        self.ensure_resource_class(rc)
        fields.setdefault('max_unit', total)
        fields['total'] = total
        url = '/resource_providers/%s/inventories' % rp_uuid
        current = self.call('GET', url)
        inventories = current['inventories']
        inventories[rc] = fields
        self.call('PUT', url, {
            'resource_provider_generation':
            current['resource_provider_generation'],
            'inventories': inventories})

    def set_traits(self, rp_uuid, *traits):
        for name in traits:
            if name.startswith('CUSTOM_'):
                self.call('PUT', '/traits/%s' % name)
        self.call('PUT', '/resource_providers/%s/traits' % rp_uuid,
                  {'traits': list(traits),
                   'resource_provider_generation':
                   self._generation(rp_uuid)})

    def set_allocation(self, rp_uuid, project_id, user_id, resources,
                       consumer=None):
        """Allocate ``resources`` of one provider to a new consumer."""
        consumer = consumer or _new_uuid()
        self.call('PUT', '/allocations/%s' % consumer, {
            'allocations': {rp_uuid: {'resources': resources}},
            'project_id': project_id, 'user_id': user_id,
            'consumer_generation': None})
        return consumer


class AllocationFixture(APIFixture):
    """One provider and three consumers with allocations against it.

    ``RP_UUID`` (``RP_NAME``) has DISK_GB 2048 (min_unit 10, max_unit
    1000, step_size 10) and VCPU 10. ``CONSUMER_0`` holds DISK_GB 1000
    and ``CONSUMER_ID`` VCPU 6, both for ``PROJECT_ID``/``USER_ID``;
    ``ALT_CONSUMER_ID`` holds DISK_GB 20 and VCPU 1 for ``PROJECT_ID``/
    ``ALT_USER_ID``. ``ALT_RP_UUID``/``ALT_RP_NAME`` name a provider
    that does not exist.
    """

    def make_entities(self):
        env = os.environ
        env['ALT_USER_ID'] = _new_uuid()
        project, user = env['PROJECT_ID'], env['USER_ID']
        rp = self.create_provider(env['RP_NAME'], uuid=env['RP_UUID'])
        self.add_inventory(rp, 'DISK_GB', 2048, step_size=10, min_unit=10,
                           max_unit=1000)
        self.add_inventory(rp, 'VCPU', 10, max_unit=10)
        env['CONSUMER_0'] = self.set_allocation(
            rp, project, user, {'DISK_GB': 1000})
        env['CONSUMER_ID'] = self.set_allocation(
            rp, project, user, {'VCPU': 6})
        env['ALT_CONSUMER_ID'] = self.set_allocation(
            rp, project, env['ALT_USER_ID'], {'DISK_GB': 20, 'VCPU': 1})
        env['ALT_RP_UUID'] = _new_uuid()
        env['ALT_RP_NAME'] = _new_uuid()


class SharedStorageFixture(APIFixture):
    """Two compute trees and two sharing storage providers, one aggregate.

    cn1 (VCPU 24 x16, MEMORY_MB 128Gi x1.5, traits HW_CPU_X86_SSE and
    SSE2) and cn2 (the same plus DISK_GB 2000, reserved 100) each have two
    NUMA children with one PF child each (SRIOV_NET_VF 8). ss and ss2
    share DISK_GB 2000 (reserved 100) through ``AGG_UUID``.
    """

    def make_entities(self):
        env = os.environ
        agg = env['AGG_UUID'] = _new_uuid()
        cns = {}
        for name in ('cn1', 'cn2', 'ss', 'ss2'):
            cns[name] = self.create_provider(name, agg)
        env['CN1_UUID'], env['CN2_UUID'] = cns['cn1'], cns['cn2']
        env['SS_UUID'], env['SS2_UUID'] = cns['ss'], cns['ss2']
        pfs = []
        for c in (1, 2):
            for n in (1, 2):
                suffix = '%d_%d' % (c, n)
                numa = self.create_provider('numa' + suffix,
                                            parent=cns['cn%d' % c])
                pf = self.create_provider('pf' + suffix, parent=numa)
                env['NUMA%s_UUID' % suffix] = numa
                env['PF%s_UUID' % suffix] = pf
                pfs.append(pf)
        for cn in (cns['cn1'], cns['cn2']):
            self.add_inventory(cn, 'VCPU', 24, allocation_ratio=16.0)
            self.add_inventory(cn, 'MEMORY_MB', 128 * 1024,
                               allocation_ratio=1.5)
        self.set_traits(cns['cn1'], 'HW_CPU_X86_SSE', 'HW_CPU_X86_SSE2')
        self.add_inventory(cns['cn2'], 'DISK_GB', 2000, reserved=100,
                           allocation_ratio=1.0)
        for shared in (cns['ss'], cns['ss2']):
            self.add_inventory(shared, 'DISK_GB', 2000, reserved=100,
                               allocation_ratio=1.0)
            self.set_traits(shared, 'MISC_SHARES_VIA_AGGREGATE')
        for pf in pfs:
            self.add_inventory(pf, 'SRIOV_NET_VF', 8, allocation_ratio=1.0)


class NUMAAggregateFixture(APIFixture):
    """Compute nodes whose CPUs are on NUMA children, storage shared.

    cn1 (aggA) and cn2 (aggA, aggB) have no inventory; their children
    numa1_1 (aggC), numa1_2, numa2_1, numa2_2 have VCPU 24 (x16). ss1
    (aggA) and ss2 (aggC) share DISK_GB 2000 (reserved 100).
    """

    def make_entities(self):
        env = os.environ
        agg_a = env['AGGA_UUID'] = _new_uuid()
        agg_b = env['AGGB_UUID'] = _new_uuid()
        agg_c = env['AGGC_UUID'] = _new_uuid()
        cn1 = env['CN1_UUID'] = self.create_provider('cn1', agg_a)
        cn2 = env['CN2_UUID'] = self.create_provider('cn2', agg_a, agg_b)
        ss1 = env['SS1_UUID'] = self.create_provider('ss1', agg_a)
        ss2 = env['SS2_UUID'] = self.create_provider('ss2', agg_c)
        numas = [
            self.create_provider('numa1_1', agg_c, parent=cn1),
            self.create_provider('numa1_2', parent=cn1),
            self.create_provider('numa2_1', parent=cn2),
            self.create_provider('numa2_2', parent=cn2)]
        for key, numa in zip(('1_1', '1_2', '2_1', '2_2'), numas):
            env['NUMA%s_UUID' % key] = numa
            self.add_inventory(numa, 'VCPU', 24, allocation_ratio=16.0)
        for ss in (ss1, ss2):
            self.add_inventory(ss, 'DISK_GB', 2000, reserved=100,
                               allocation_ratio=1.0)
            self.set_traits(ss, 'MISC_SHARES_VIA_AGGREGATE')


class NUMANetworkFixture(APIFixture):
    """Two compute trees with NUMA nodes, devices and network agents.

    ss1 (aggA, MISC_SHARES_VIA_AGGREGATE) shares DISK_GB 2000 with cn1 and
    cn2. cn1 (aggA, COMPUTE_VOLUME_MULTI_ATTACH, no inventory) has:
    numa0 (HW_NUMA_ROOT; VCPU 4 of which 2 used; MEMORY_MB 2048 min_unit
    512 step_size 256) with fpga0 (FPGA 1) and pgpu0 (VGPU 8); numa1
    (HW_NUMA_ROOT, CUSTOM_FOO; VCPU 4; MEMORY_MB 2048 min_unit 256
    max_unit 1024) with fpga1_0 and fpga1_1 (FPGA 1); sriov_agent
    (CUSTOM_VNIC_TYPE_DIRECT) with esn1/esn2 (CUSTOM_PHYSNET1/2,
    NET_BW_EGR_KILOBIT_PER_SEC 10000/20000); ovs_agent
    (CUSTOM_VNIC_TYPE_NORMAL) with br_int (CUSTOM_PHYSNET0, 1000).
    cn2 (aggA, CUSTOM_FOO; VCPU 8 of which 3 used; MEMORY_MB 2048 min_unit
    1024 step_size 128; DISK_GB 1000) has nic1..nic3
    (CUSTOM_HW_NIC_ROOT) with PFs: pf1_1/pf1_2 (CUSTOM_VF 4, PHYSNET1/2),
    pf2_1..pf2_4 (CUSTOM_VF 2, PHYSNET1/2/1/2), pf3_1 (CUSTOM_VF 8,
    PHYSNET1).
    """

    # Subclasses may create cn1 and cn2 first, under other providers.
    cn1 = None
    cn2 = None

    def make_entities(self):
        env = os.environ
        agg_a = env['AGGA_UUID'] = _new_uuid()
        ss1 = env['SS1_UUID'] = self.create_provider('ss1', agg_a)
        self.set_traits(ss1, 'MISC_SHARES_VIA_AGGREGATE')
        self.add_inventory(ss1, 'DISK_GB', 2000)

        cn1 = self.cn1 or self.create_provider('cn1')
        self.set_aggregates(cn1, agg_a)
        self.set_traits(cn1, 'COMPUTE_VOLUME_MULTI_ATTACH')
        env['CN1_UUID'] = cn1
        numas = []
        for i in (0, 1):
            numa = self.create_provider('numa%d' % i, parent=cn1)
            traits = ['HW_NUMA_ROOT'] + (['CUSTOM_FOO'] if i else [])
            self.set_traits(numa, *traits)
            self.add_inventory(numa, 'VCPU', 4)
            env['NUMA%d_UUID' % i] = numa
            numas.append(numa)
        self.add_inventory(numas[0], 'MEMORY_MB', 2048, min_unit=512,
                           step_size=256)
        self.add_inventory(numas[1], 'MEMORY_MB', 2048, min_unit=256,
                           max_unit=1024)
        project, user = 'numafx-project', 'numafx-user'
        self.set_allocation(numas[0], project, user, {'VCPU': 2})
        fpga = env['FPGA0_UUID'] = self.create_provider(
            'fpga0', parent=numas[0])
        self.add_inventory(fpga, 'FPGA', 1)
        pgpu = env['PGPU0_UUID'] = self.create_provider(
            'pgpu0', parent=numas[0])
        self.add_inventory(pgpu, 'VGPU', 8)
        for i in (0, 1):
            fpga = env['FPGA1_%d_UUID' % i] = self.create_provider(
                'fpga1_%d' % i, parent=numas[1])
            self.add_inventory(fpga, 'FPGA', 1)
        agent = env['SRIOV_AGENT_UUID'] = self.create_provider(
            'sriov_agent', parent=cn1)
        self.set_traits(agent, 'CUSTOM_VNIC_TYPE_DIRECT')
        for i in (1, 2):
            dev = env['ESN%d_UUID' % i] = self.create_provider(
                'esn%d' % i, parent=agent)
            self.set_traits(dev, 'CUSTOM_PHYSNET%d' % i)
            self.add_inventory(dev, 'NET_BW_EGR_KILOBIT_PER_SEC', 10000 * i)
        agent = env['OVS_AGENT_UUID'] = self.create_provider(
            'ovs_agent', parent=cn1)
        self.set_traits(agent, 'CUSTOM_VNIC_TYPE_NORMAL')
        dev = env['BR_INT_UUID'] = self.create_provider('br_int',
                                                        parent=agent)
        self.set_traits(dev, 'CUSTOM_PHYSNET0')
        self.add_inventory(dev, 'NET_BW_EGR_KILOBIT_PER_SEC', 1000)

        cn2 = self.cn2 or self.create_provider('cn2')
        self.set_aggregates(cn2, agg_a)
        self.add_inventory(cn2, 'VCPU', 8)
        self.set_allocation(cn2, project, user, {'VCPU': 3})
        self.add_inventory(cn2, 'MEMORY_MB', 2048, min_unit=1024,
                           step_size=128)
        self.add_inventory(cn2, 'DISK_GB', 1000)
        self.set_traits(cn2, 'CUSTOM_FOO')
        env['CN2_UUID'] = cn2
        nics = []
        for i in (1, 2, 3):
            nic = env['NIC%d_UUID' % i] = self.create_provider(
                'nic%d' % i, parent=cn2)
            self.set_traits(nic, 'CUSTOM_HW_NIC_ROOT')
            nics.append(nic)
        # (nic, pf suffix, physnet, VFs)
        pfs = [(0, '1_1', 1, 4), (0, '1_2', 2, 4),
               (1, '2_1', 1, 2), (1, '2_2', 2, 2),
               (1, '2_3', 1, 2), (1, '2_4', 2, 2),
               (2, '3_1', 1, 8)]
        for nic, suffix, physnet, vfs in pfs:
            pf = env['PF%s_UUID' % suffix] = self.create_provider(
                'pf' + suffix, parent=nics[nic])
            self.set_traits(pf, 'CUSTOM_PHYSNET%d' % physnet)
            self.add_inventory(pf, 'CUSTOM_VF', vfs)


class DeepNUMANetworkFixture(NUMANetworkFixture):
    """NUMANetworkFixture with cn1 under p1 and cn2 under p2, both under gp1.
    """

    def make_entities(self):
        gp1 = self.create_provider('gp1')
        p1 = self.create_provider('p1', parent=gp1)
        p2 = self.create_provider('p2', parent=gp1)
        self.cn1 = self.create_provider('cn1', parent=p1)
        self.cn2 = self.create_provider('cn2', parent=p2)
        super().make_entities()


class NonSharedStorageFixture(APIFixture):
    """Three compute nodes with local VCPU 24, MEMORY_MB 128Gi, DISK_GB 2000.

    Also exports three aggregate uuids no provider is in yet.
    """

    def make_entities(self):
        env = os.environ
        for name in ('AGGA_UUID', 'AGGB_UUID', 'AGGC_UUID'):
            env[name] = _new_uuid()
        for i in (1, 2, 3):
            cn = env['CN%d_UUID' % i] = self.create_provider('cn%d' % i)
            self.add_inventory(cn, 'VCPU', 24)
            self.add_inventory(cn, 'MEMORY_MB', 128 * 1024)
            self.add_inventory(cn, 'DISK_GB', 2000)


class CORSFixture(APIFixture):
    """CORS on for http://valid.example.com, openstack-api-version allowed.
    """

    def configure(self):
        # The CORS middleware registers [cors] when the app loads; the
        # override needs the options now.
        self.conf.register_opts(cors.CORS_OPTS, 'cors')
        self.conf_fixture.config(allowed_origin=['http://valid.example.com'],
                                 allow_headers=['openstack-api-version'],
                                 group='cors')


class GranularFixture(APIFixture):
    """Three compute nodes and three sharing providers in aggregates A-C.

    cn_left (aggA): VCPU 8, MEMORY_MB 4096, DISK_GB 500, VGPU 8,
    SRIOV_NET_VF 8, CUSTOM_NET_MBPS 4000; traits HW_CPU_X86_AVX, AVX2,
    HW_GPU_API_DXVA, HW_NIC_DCB_PFC, CUSTOM_FOO. cn_middle (aggA, aggB):
    VCPU 8, MEMORY_MB 4096, SRIOV_NET_VF 8, CUSTOM_NET_MBPS 4000; traits
    HW_CPU_X86_AVX, AVX2, SSE, HW_NIC_ACCEL_TLS. cn_right (aggB, aggC):
    VCPU 8, MEMORY_MB 4096, DISK_GB 500, VGPU 8 (max_unit 2); traits
    HW_CPU_X86_MMX, HW_GPU_API_DXVA, CUSTOM_DISK_SSD. shr_disk_1 (aggA):
    DISK_GB 1000, CUSTOM_DISK_SSD; shr_disk_2 (aggA, aggB): DISK_GB 1000;
    shr_net (aggC): SRIOV_NET_VF 16, CUSTOM_NET_MBPS 40000; the three
    sharing providers have MISC_SHARES_VIA_AGGREGATE.
    """

    def make_entities(self):
        env = os.environ
        self.ensure_resource_class('CUSTOM_NET_MBPS')
        agg_a = env['AGGA'] = _new_uuid()
        agg_b = env['AGGB'] = _new_uuid()
        agg_c = env['AGGC'] = _new_uuid()
        specs = [
            ('cn_left', 'CN_LEFT', [agg_a],
             [('VCPU', 8, {}), ('MEMORY_MB', 4096, {}),
              ('DISK_GB', 500, {}), ('VGPU', 8, {}),
              ('SRIOV_NET_VF', 8, {}), ('CUSTOM_NET_MBPS', 4000, {})],
             ['HW_CPU_X86_AVX', 'HW_CPU_X86_AVX2', 'HW_GPU_API_DXVA',
              'HW_NIC_DCB_PFC', 'CUSTOM_FOO']),
            ('cn_middle', 'CN_MIDDLE', [agg_a, agg_b],
             [('VCPU', 8, {}), ('MEMORY_MB', 4096, {}),
              ('SRIOV_NET_VF', 8, {}), ('CUSTOM_NET_MBPS', 4000, {})],
             ['HW_CPU_X86_AVX', 'HW_CPU_X86_AVX2', 'HW_CPU_X86_SSE',
              'HW_NIC_ACCEL_TLS']),
            ('cn_right', 'CN_RIGHT', [agg_b, agg_c],
             [('VCPU', 8, {}), ('MEMORY_MB', 4096, {}),
              ('DISK_GB', 500, {}), ('VGPU', 8, {'max_unit': 2})],
             ['HW_CPU_X86_MMX', 'HW_GPU_API_DXVA', 'CUSTOM_DISK_SSD']),
            ('shr_disk_1', 'SHR_DISK_1', [agg_a],
             [('DISK_GB', 1000, {})],
             ['MISC_SHARES_VIA_AGGREGATE', 'CUSTOM_DISK_SSD']),
            ('shr_disk_2', 'SHR_DISK_2', [agg_a, agg_b],
             [('DISK_GB', 1000, {})], ['MISC_SHARES_VIA_AGGREGATE']),
            ('shr_net', 'SHR_NET', [agg_c],
             [('SRIOV_NET_VF', 16, {}), ('CUSTOM_NET_MBPS', 40000, {})],
             ['MISC_SHARES_VIA_AGGREGATE']),
        ]
        for name, env_name, aggs, inventory, traits in specs:
            rp = env[env_name] = self.create_provider(name, *aggs)
            for rc, total, fields in inventory:
                self.add_inventory(rp, rc, total, **fields)
            self.set_traits(rp, *traits)


class OpenPolicyFixture(APIFixture):
    """Every policy rule but the base admin rule allows any user ('@')."""

    def configure(self):
        # An operator's policy file, as oslo.policy reads it.
        rules = {rule.name: '@' for rule in policies.list_rules()
                 if rule.name != 'admin_api'}
        path = os.path.join(self.tempdir.path, 'open-policy.json')
        with open(path, 'w') as f:
            json.dump(rules, f)
        self.conf_fixture.config(policy_file=path, group='oslo_policy')


class SecureRBACPolicyFixture(APIFixture):
    """The new (secure RBAC) policy defaults are enforced."""

    secure_rbac = True


class LegacyRBACPolicyFixture(APIFixture):
    """The deprecated policy defaults still apply (the explicit default)."""

    secure_rbac = False


class NeutronQoSMultiSegmentFixture(APIFixture):
    """Four compute trees with QoS bandwidth/packet rate network devices.

    computeN (VCPU 8, MEMORY_MB 4096, DISK_GB 500) has an 'Open vSwitch
    agent' child (NET_PACKET_RATE_KILOPACKET_PER_SEC 1000,
    CUSTOM_VNIC_TYPE_NORMAL) with bridges and a 'NIC Switch agent' child
    (CUSTOM_VNIC_TYPE_DIRECT, _DIRECT_PHYSICAL, _MACVTAP) with PFs. Each
    bridge/PF has NET_BW_EGR/IGR_KILOBIT_PER_SEC and a physnet trait:
    compute0 on CUSTOM_PHYSNET_OTHER, compute1 on CUSTOM_PHYSNET_MSN_S1,
    compute2 on CUSTOM_PHYSNET_MSN_S2 (5000 per bridge, 10000 per PF);
    compute3 has br-ex (S1), br-ex2 (S2), enp129s0f0 (S1) and enp129s0f1
    (S2), each with only 1000.
    """

    _SRIOV_TRAITS = ('CUSTOM_VNIC_TYPE_DIRECT',
                     'CUSTOM_VNIC_TYPE_DIRECT_PHYSICAL',
                     'CUSTOM_VNIC_TYPE_MACVTAP')

    def make_entities(self):
        env = os.environ
        # compute -> ([(bridge, physnet)], [(pf, physnet)], bandwidths)
        computes = [
            ('compute0', [('br_ex', 'br-ex', 'OTHER')],
             [('pf0', 'enp129s0f0', 'OTHER')], 5000, 10000),
            ('compute1', [('br_ex', 'br-ex', 'MSN_S1')],
             [('pf0', 'enp129s0f0', 'MSN_S1')], 5000, 10000),
            ('compute2', [('br_ex', 'br-ex', 'MSN_S2')],
             [('pf0', 'enp129s0f0', 'MSN_S2')], 5000, 10000),
            ('compute3', [('br_ex', 'br-ex', 'MSN_S1'),
                          ('br_ex2', 'br-ex2', 'MSN_S2')],
             [('pf0', 'enp129s0f0', 'MSN_S1'),
              ('pf1', 'enp129s0f1', 'MSN_S2')], 1000, 1000),
        ]
        for name, bridges, pfs, br_bw, pf_bw in computes:
            cn = env[name] = self.create_provider(name)
            self.add_inventory(cn, 'VCPU', 8)
            self.add_inventory(cn, 'MEMORY_MB', 4096)
            self.add_inventory(cn, 'DISK_GB', 500)
            ovs_name = name + ':Open vSwitch agent'
            ovs = env[name + ':ovs_agent'] = self.create_provider(
                ovs_name, parent=cn)
            self.add_inventory(ovs, 'NET_PACKET_RATE_KILOPACKET_PER_SEC',
                               1000)
            self.set_traits(ovs, 'CUSTOM_VNIC_TYPE_NORMAL')
            for key, dev, physnet in bridges:
                br = env['%s:%s' % (name, key)] = self.create_provider(
                    '%s:%s' % (ovs_name, dev), parent=ovs)
                self.add_inventory(br, 'NET_BW_EGR_KILOBIT_PER_SEC', br_bw)
                self.add_inventory(br, 'NET_BW_IGR_KILOBIT_PER_SEC', br_bw)
                self.set_traits(br, 'CUSTOM_VNIC_TYPE_NORMAL',
                                'CUSTOM_PHYSNET_' + physnet)
            sriov_name = name + ':NIC Switch agent'
            sriov = env[name + ':sriov_agent'] = self.create_provider(
                sriov_name, parent=cn)
            self.set_traits(sriov, *self._SRIOV_TRAITS)
            for key, dev, physnet in pfs:
                pf = env['%s:%s' % (name, key)] = self.create_provider(
                    '%s:%s' % (sriov_name, dev), parent=sriov)
                self.add_inventory(pf, 'NET_BW_EGR_KILOBIT_PER_SEC', pf_bw)
                self.add_inventory(pf, 'NET_BW_IGR_KILOBIT_PER_SEC', pf_bw)
                self.set_traits(pf, *(self._SRIOV_TRAITS +
                                      ('CUSTOM_PHYSNET_' + physnet,)))
