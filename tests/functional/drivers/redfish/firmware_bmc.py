"""A small Redfish BMC that updates firmware, served in its own process.

sushy-tools' fake BMC answers SimpleUpdate with a finished static task
and has no BMC or BIOS firmware targets; this one behaves like the BMCs
the ``redfish`` firmware interface is written for:

* one ComputerSystem (``BiosVersion``, power, ``Reset``) managed by one
  Manager (``FirmwareVersion``), HTTP basic authentication; both have
  a ``Model`` (``Emulated System``, ``Emulated BMC``) and a
  ``SerialNumber`` (``SN-`` and their id);
* an UpdateService whose FirmwareInventory has ``BMC`` and ``BIOS``
  (``Manufacturer``: ``Emulated BMC Vendor``, ``Emulated BIOS Vendor``);
* with ``--systems N`` (N > 1), N systems ``fw-system-<k>`` (k from 1),
  each managed by its own Manager ``bmc-<k>`` and with its own inventory
  members ``BMC-<k>`` and ``BIOS-<k>``, all named ``BMC`` and ``BIOS``
  (as a chassis manager or an emulator of many systems shows them).
  ``--firmware-links`` says how members are tied to their owner:
  ``related`` (the default with several systems: each member's
  ``RelatedItem`` names its Manager or system), ``active`` (the Manager's
  and the Bios's ``Links.ActiveSoftwareImage`` name the member) or
  ``none`` (the default with one system). SimpleUpdate accepts a member,
  a system or a Manager as its target and changes only that system's
  component. ``--inventory-versions-only`` leaves ``BiosVersion`` and
  ``FirmwareVersion`` out: the inventory alone tells the versions;
  ``--empty-inventory`` lists no inventory member at all;
* ``SimpleUpdate`` answers 202 with a task monitor in ``Location`` and
  ``Retry-After: 1``; the monitor answers 202 for ``--task-polls`` polls,
  then 200 with the finished Task;
* the image's file name gives the new version: ``.../<name>-<version>.bin``;
  an image whose name contains ``corrupt`` makes the task end in
  ``Exception`` with a message, the version unchanged;
* after a BMC update every request answers 503 for ``--bmc-reset``
  seconds (forever when the image name contains ``never-back``);
* a power change shows after ``--power-delay`` seconds;
* a ``Bios`` resource whose pending settings (``Bios/Settings``, PATCH)
  apply when the system is reset, and ``Bios.ResetBios``;
* with ``--processors CPU,GPU,GPU:Absent,...``, a ``Processors``
  collection with one member per item (its ``ProcessorType``, then its
  ``Status.State`` after a colon, ``Enabled`` by default; an empty value
  gives an empty collection); without it the system has none. With
  ``--processors-error`` the collection and its members answer 500;
* each Manager has ``VirtualMedia`` devices ``Cd`` (CD, DVD) and
  ``Floppy`` (Floppy, USBStick) with the ``InsertMedia`` and
  ``EjectMedia`` actions. Inserting fetches the image (an http(s) URL,
  10 s at most) and answers 400 when it cannot, or when the device
  already holds media (eject first); with ``--refuse-media`` every
  insertion answers 400; ``--no-cd-media`` leaves ``Cd`` out;
* the system's boot source override (``Boot``, PATCH) keeps
  ``BootSourceOverrideEnabled``: a ``Once`` override is used by the next
  power on and then ``Disabled``, as real BMCs do. Each power on is
  recorded as a boot: the device it booted from and, for ``Cd``, the
  image inserted then;
* ``GET /_emulator`` (no authentication) shows counters for tests
  (``versions`` and ``power`` of the first system, ``systems``: those of
  each system by id, with the ``Targets`` of its SimpleUpdates, its
  ``boots`` and its ``media``).

Run: ``python firmware_bmc.py --port N`` (it imports nothing of ours).
"""

import argparse
import base64
import itertools
import json
import re
import socketserver
import threading
import time
from urllib import request as urlrequest
from wsgiref import simple_server

SYSTEMS = '/redfish/v1/Systems'
MANAGERS = '/redfish/v1/Managers'
UPDATE = '/redfish/v1/UpdateService'
INVENTORY = UPDATE + '/FirmwareInventory'
SIMPLE_UPDATE = UPDATE + '/Actions/UpdateService.SimpleUpdate'
MONITORS = '/redfish/v1/TaskService/TaskMonitors/'
TASKS = '/redfish/v1/TaskService/Tasks/'
BIOS_DEFAULTS = {'BootMode': 'Uefi', 'ProcTurboMode': 'Enabled',
                 'SriovGlobalEnable': 'Disabled'}
MEDIA_DEVICES = {'Cd': ['CD', 'DVD'], 'Floppy': ['Floppy', 'USBStick']}
BOOT_TARGETS = ['None', 'Pxe', 'Hdd', 'Cd', 'BiosSetup']


class System:
    """One ComputerSystem, its Manager and its inventory members."""

    def __init__(self, args, index, count):
        suffix = '' if count == 1 else '-%d' % index
        self.id = 'fw-system' + suffix
        self.path = SYSTEMS + '/' + self.id
        self.manager_id = 'bmc' + suffix
        self.manager = MANAGERS + '/' + self.manager_id
        self.bios_path = self.path + '/Bios'
        self.processors_path = self.path + '/Processors'
        self.reset_path = self.path + '/Actions/ComputerSystem.Reset'
        self.members = {'bmc': INVENTORY + '/BMC' + suffix,
                        'bios': INVENTORY + '/BIOS' + suffix}
        self.versions = {'bmc': args.bmc_version, 'bios': args.bios_version}
        self._power = 'Off'
        self.pending_power = None
        self.bios = dict(BIOS_DEFAULTS)
        self.bios_pending = {}
        self.processors = _parse_processors(args.processors)
        self.targets = []
        self.media_path = self.manager + '/VirtualMedia'
        # Without a CD device (--no-cd-media), only the Floppy one.
        self.devices = {name: types for name, types in MEDIA_DEVICES.items()
                        if name != 'Cd' or not args.no_cd_media}
        self.media = {name: {'Image': None, 'Inserted': False}
                      for name in self.devices}
        self.boot = {'BootSourceOverrideEnabled': 'Disabled',
                     'BootSourceOverrideTarget': 'None'}
        self.boots = []

    @property
    def power(self):
        if (self.pending_power is not None
                and time.monotonic() >= self.pending_power[1]):
            self._power = self.pending_power[0]
            self.pending_power = None
        return self._power

    def state(self):
        return {'versions': self.versions, 'power': self.power,
                'targets': self.targets, 'boots': self.boots,
                'media': self.media, 'boot': self.boot}

    def booted(self):
        """The system powers on: it boots what the override says."""
        device = 'Hdd'
        if self.boot['BootSourceOverrideEnabled'] != 'Disabled':
            device = self.boot['BootSourceOverrideTarget']
            if self.boot['BootSourceOverrideEnabled'] == 'Once':
                self.boot = {'BootSourceOverrideEnabled': 'Disabled',
                             'BootSourceOverrideTarget': 'None'}
        cd = self.media.get('Cd') or {}
        image = (cd.get('Image') if device == 'Cd' and cd.get('Inserted')
                 else None)
        self.boots.append({'device': device, 'image': image})


class BMC:
    """The state of the emulated BMC and its answers."""

    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        count = max(args.systems, 1)
        self.links = args.firmware_links or (
            'none' if count == 1 else 'related')
        self.systems = [System(args, k, count) for k in range(1, count + 1)]
        self.down_until = 0.0
        self.tasks = {}
        self.ids = itertools.count(1)
        self.counters = {'requests': 0, 'monitor_polls': 0,
                         'answered_503': 0,
                         'simple_updates': 0, 'resets': []}

    def status(self):
        first = self.systems[0]
        return dict(self.counters, versions=first.versions,
                    power=first.power,
                    systems={s.id: s.state() for s in self.systems})

    # --- documents ---

    def doc(self, path):
        if path in ('/redfish/v1', '/redfish/v1/'):
            return {'@odata.id': '/redfish/v1/', 'Id': 'RootService',
                    'Name': 'Root Service',
                    'RedfishVersion': '1.11.0',
                    'Systems': {'@odata.id': SYSTEMS},
                    'Managers': {'@odata.id': MANAGERS},
                    'UpdateService': {'@odata.id': UPDATE}}
        if path == SYSTEMS:
            return _collection(path, [s.path for s in self.systems])
        if path == MANAGERS:
            return _collection(path, [s.manager for s in self.systems])
        if path == UPDATE:
            return {'@odata.id': UPDATE, 'Id': 'UpdateService',
                    'Name': 'Update Service',
                    'ServiceEnabled': True,
                    'FirmwareInventory': {'@odata.id': INVENTORY},
                    'Actions': {'#UpdateService.SimpleUpdate': {
                        'target': SIMPLE_UPDATE,
                        'TransferProtocol@Redfish.AllowableValues': [
                            'HTTP', 'HTTPS']}}}
        if path == INVENTORY:
            if self.args.empty_inventory:
                return _collection(path, [])
            return _collection(path, [s.members[c] for s in self.systems
                                      for c in ('bmc', 'bios')])
        if path.startswith(TASKS):
            task = self.tasks.get(path[len(TASKS):])
            return self.task_doc(task) if task else None
        for system in self.systems:
            doc = self.system_part(system, path)
            if doc is not None:
                return doc
        return None

    def system_part(self, system, path):
        if path == system.path:
            return self.system_doc(system)
        if path == system.manager:
            doc = {'@odata.id': path, 'Id': system.manager_id,
                   'Name': 'BMC', 'Model': 'Emulated BMC',
                   'SerialNumber': 'SN-' + system.manager_id}
            if not self.args.inventory_versions_only:
                doc['FirmwareVersion'] = system.versions['bmc']
            if self.links == 'active':
                doc['Links'] = {'ActiveSoftwareImage': {
                    '@odata.id': system.members['bmc']}}
            doc['VirtualMedia'] = {'@odata.id': system.media_path}
            return doc
        if path == system.media_path:
            return _collection(path, [system.media_path + '/' + name
                                      for name in system.devices])
        for name, types in system.devices.items():
            if path == system.media_path + '/' + name:
                return self.media_doc(system, name, types)
        for component, owner in (('bmc', system.manager),
                                 ('bios', system.path)):
            if path == system.members[component]:
                doc = {'@odata.id': path, 'Id': path.rsplit('/', 1)[1],
                       'Name': component.upper(), 'Updateable': True,
                       'Manufacturer': 'Emulated %s Vendor' % (
                           component.upper()),
                       'Version': system.versions[component]}
                if self.links == 'related':
                    doc['RelatedItem'] = [{'@odata.id': owner}]
                return doc
        processors = system.processors
        if path == system.processors_path and processors is not None:
            return _collection(path, ['%s/%d' % (path, i)
                                      for i in range(len(processors))])
        if path.startswith(system.processors_path + '/') and processors:
            return self.processor_doc(system, path)
        if path == system.bios_path:
            doc = {'@odata.id': path, 'Id': 'BIOS', 'Name': 'BIOS',
                   'Attributes': system.bios,
                   '@Redfish.Settings': {'SettingsObject': {
                       '@odata.id': path + '/Settings'}},
                   'Actions': {'#Bios.ResetBios': {
                       'target': path + '/Actions/Bios.ResetBios'}}}
            if self.links == 'active':
                doc['Links'] = {'ActiveSoftwareImage': {
                    '@odata.id': system.members['bios']}}
            return doc
        if path == system.bios_path + '/Settings':
            return {'@odata.id': path, 'Id': 'Settings',
                    'Name': 'BIOS pending settings',
                    'Attributes': system.bios_pending}
        return None

    def system_doc(self, system):
        doc = {
            '@odata.id': system.path, 'Id': system.id, 'Name': system.id,
            'Model': 'Emulated System', 'SerialNumber': 'SN-' + system.id,
            'PowerState': system.power,
            'Boot': dict(system.boot, **{
                'BootSourceOverrideTarget@Redfish.AllowableValues':
                    BOOT_TARGETS}),
            'Links': {'ManagedBy': [{'@odata.id': system.manager}]},
            'Bios': {'@odata.id': system.bios_path},
            'Actions': {'#ComputerSystem.Reset': {
                'target': system.reset_path,
                'ResetType@Redfish.AllowableValues': [
                    'On', 'ForceOff', 'ForceRestart']}}}
        if not self.args.inventory_versions_only:
            doc['BiosVersion'] = system.versions['bios']
        if system.processors is not None:
            doc['Processors'] = {'@odata.id': system.processors_path}
        return doc

    def media_doc(self, system, name, types):
        path = system.media_path + '/' + name
        media = system.media[name]
        image = media['Image']
        return {'@odata.id': path, 'Id': name, 'Name': 'Virtual ' + name,
                'MediaTypes': types, 'Image': image,
                'ImageName': image.rsplit('/', 1)[-1] if image else None,
                'Inserted': media['Inserted'], 'WriteProtected': True,
                'ConnectedVia': 'URI' if image else 'NotConnected',
                'Actions': {
                    '#VirtualMedia.InsertMedia': {
                        'target': path + '/Actions/VirtualMedia.InsertMedia'},
                    '#VirtualMedia.EjectMedia': {
                        'target': path + '/Actions/VirtualMedia.EjectMedia'}}}

    def insert_media(self, system, name, body):
        media = system.media[name]
        if self.args.refuse_media:
            return 400, {}, _error('The virtual media service is '
                                   'unavailable.')
        if media['Inserted']:
            return 400, {}, _error('Virtual media %s already holds an '
                                   'image: eject it first.' % name)
        url = body.get('Image') or ''
        if not re.match(r'^https?://', url):
            return 400, {}, _error('Image must be an http or https URL.')
        try:
            # Fetched in the request, as sushy-tools does: the lock is
            # held, which a test BMC can afford.
            with urlrequest.urlopen(url, timeout=10) as answer:
                answer.read()
        except Exception as exc:
            return 400, {}, _error('Cannot fetch the image: %s' % exc)
        media.update(Image=url, Inserted=True)
        return 204, {}, None

    def processor_doc(self, system, path):
        index = path[len(system.processors_path) + 1:]
        if not index.isdigit() or int(index) >= len(system.processors):
            return None
        kind, state = system.processors[int(index)]
        return {'@odata.id': path, 'Id': index,
                'Name': '%s %s' % (kind, index), 'ProcessorType': kind,
                'Status': {'State': state, 'Health': 'OK'}}

    def task_doc(self, task):
        doc = {'@odata.id': TASKS + task['id'], 'Id': task['id'],
               'Name': 'Firmware update', 'TaskState': task['state'],
               'TaskStatus': task['status'], 'Messages': []}
        if task['message']:
            doc['Messages'].append({'MessageId': 'Update.1.0.ApplyFailed',
                                    'Message': task['message']})
        return doc

    # --- actions ---

    def target(self, path):
        """(system, component) that a SimpleUpdate target designates."""
        for system in self.systems:
            for component in ('bmc', 'bios'):
                if path == system.members[component]:
                    return system, component
            if path == system.manager:
                return system, 'bmc'
            if path == system.path:
                return system, 'bios'
        return None, None

    def simple_update(self, body):
        url = body.get('ImageURI') or ''
        targets = body.get('Targets') or []
        system, component = (self.target(targets[0]) if len(targets) == 1
                             else (None, None))
        if system is None:
            return 400, {}, _error('Targets must name one firmware '
                                   'inventory member, system or manager.')
        system.targets.append(targets[0])
        match = re.search(r'-([0-9][0-9.]*)\.bin$', url)
        task = {'id': str(next(self.ids)), 'system': system,
                'component': component,
                'url': url, 'polls_left': self.args.task_polls,
                'state': 'Running', 'status': 'OK', 'message': None,
                'version': match.group(1) if match else None}
        self.tasks[task['id']] = task
        self.counters['simple_updates'] += 1
        return 202, {'Location': MONITORS + task['id'],
                     'Retry-After': '1'}, None

    def poll(self, task_id):
        task = self.tasks.get(task_id)
        if task is None:
            return 404, {}, _error('No such task.')
        self.counters['monitor_polls'] += 1
        if task['state'] == 'Running':
            if task['polls_left'] > 0:
                task['polls_left'] -= 1
                return 202, {'Retry-After': '1'}, None
            self.finish(task)
        return 200, {}, self.task_doc(task)

    def finish(self, task):
        if 'corrupt' in task['url'] or task['version'] is None:
            task.update(state='Exception', status='Critical',
                        message='The image %s could not be applied: '
                                'signature check failed.' % task['url'])
            return
        task.update(state='Completed', status='OK')
        task['system'].versions[task['component']] = task['version']
        if task['component'] == 'bmc':
            window = (float('inf') if 'never-back' in task['url']
                      else self.args.bmc_reset)
            self.down_until = time.monotonic() + window

    def reset(self, system, body):
        kind = body.get('ResetType')
        if kind not in ('On', 'ForceOff', 'ForceRestart'):
            return 400, {}, _error('Unsupported ResetType %r.' % kind)
        target = 'Off' if kind == 'ForceOff' else 'On'
        # Pending BIOS settings apply when the system boots.
        system.bios.update(system.bios_pending)
        system.bios_pending = {}
        if kind == 'ForceRestart':
            system._power = 'Off'
        if target == 'On' and (kind == 'ForceRestart'
                               or system.power != 'On'):
            system.booted()
        system.pending_power = (target,
                                time.monotonic() + self.args.power_delay)
        self.counters['resets'].append(kind)
        return 204, {}, None

    # --- WSGI ---

    def __call__(self, environ, start_response):
        method = environ['REQUEST_METHOD']
        path = environ.get('PATH_INFO') or '/'
        if path != '/_emulator':
            with self.lock:
                self.counters['requests'] += 1
        if path.rstrip('/') != '/redfish/v1' and path != '/_emulator':
            if not self.authorized(environ):
                return _answer(start_response, 401, {},
                               _error('Incorrect username or password.'))
        with self.lock:
            if path == '/_emulator':
                return _answer(start_response, 200, {}, self.status())
            if time.monotonic() < self.down_until:
                self.counters['answered_503'] += 1
                return _answer(start_response, 503, {'Retry-After': '1'},
                               _error('The BMC is restarting.'))
            status, headers, body = self.route(method, path, environ)
        return _answer(start_response, status, headers, body)

    def authorized(self, environ):
        expected = base64.b64encode(('%s:%s' % (
            self.args.username, self.args.password)).encode()).decode()
        return environ.get('HTTP_AUTHORIZATION') == 'Basic ' + expected

    def route(self, method, path, environ):
        path = path.rstrip('/') or '/'
        if (self.args.processors_error and method == 'GET'
                and any(path.startswith(s.processors_path)
                        for s in self.systems)):
            return 500, {}, _error('Internal error reading processors.')
        if method == 'GET':
            if path.startswith(MONITORS):
                return self.poll(path[len(MONITORS):])
            doc = self.doc(path)
            if doc is None:
                return 404, {}, _error('Not found: %s' % path)
            return 200, {}, doc
        size = int(environ.get('CONTENT_LENGTH') or 0)
        body = json.loads(environ['wsgi.input'].read(size) or b'{}')
        if method == 'POST' and path == SIMPLE_UPDATE:
            return self.simple_update(body)
        for system in self.systems:
            answer = self.system_action(system, method, path, body)
            if answer is not None:
                return answer
        return 405, {}, _error('%s %s is not allowed.' % (method, path))

    def set_boot(self, system, boot):
        target = boot.get('BootSourceOverrideTarget',
                          system.boot['BootSourceOverrideTarget'])
        enabled = boot.get('BootSourceOverrideEnabled',
                           system.boot['BootSourceOverrideEnabled'])
        if (target not in BOOT_TARGETS or enabled not in (
                'Disabled', 'Once', 'Continuous')):
            return 400, {}, _error('Unsupported boot override %r.' % boot)
        system.boot = {'BootSourceOverrideTarget': target,
                       'BootSourceOverrideEnabled': enabled}
        return 204, {}, None

    def system_action(self, system, method, path, body):
        if method == 'PATCH' and path == system.path:
            return self.set_boot(system, body.get('Boot') or {})
        if method == 'POST' and path.startswith(system.media_path + '/'):
            name, _, action = path[len(system.media_path) + 1:].partition(
                '/Actions/VirtualMedia.')
            if name in system.devices and action == 'InsertMedia':
                return self.insert_media(system, name, body)
            if name in system.devices and action == 'EjectMedia':
                system.media[name] = {'Image': None, 'Inserted': False}
                return 204, {}, None
        if method == 'PATCH' and path == system.bios_path + '/Settings':
            unknown = set(body.get('Attributes') or {}) - set(system.bios)
            if unknown:
                return 400, {}, _error('Unknown BIOS attributes: %s'
                                       % ', '.join(sorted(unknown)))
            system.bios_pending.update(body.get('Attributes') or {})
            return 204, {}, None
        if method != 'POST':
            return None
        if path == system.bios_path + '/Actions/Bios.ResetBios':
            system.bios_pending = dict(BIOS_DEFAULTS)
            return 204, {}, None
        if path == system.reset_path:
            return self.reset(system, body)
        return None


def _parse_processors(value):
    """``[(ProcessorType, State)]`` of ``--processors``, or None."""
    if value is None:
        return None
    processors = []
    for item in filter(None, (i.strip() for i in value.split(','))):
        kind, _, state = item.partition(':')
        processors.append((kind, state or 'Enabled'))
    return processors


def _collection(path, members):
    return {'@odata.id': path, 'Name': path.rsplit('/', 1)[1],
            'Members': [{'@odata.id': m} for m in members],
            'Members@odata.count': len(members)}


def _error(message):
    return {'error': {'code': 'Base.1.0.GeneralError', 'message': message}}


def _answer(start_response, status, headers, body):
    reasons = {200: 'OK', 202: 'Accepted', 204: 'No Content',
               400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found',
               405: 'Method Not Allowed', 500: 'Internal Server Error',
               503: 'Service Unavailable'}
    data = b'' if body is None else json.dumps(body).encode()
    headers = dict(headers)
    if body is not None:
        headers['Content-Type'] = 'application/json'
    headers['Content-Length'] = str(len(data))
    start_response('%d %s' % (status, reasons[status]), list(headers.items()))
    return [data]


class _Server(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    daemon_threads = True


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--port', type=int, required=True)
    parser.add_argument('--username', default='admin')
    parser.add_argument('--password', default='password')
    parser.add_argument('--bmc-version', default='1.0.0')
    parser.add_argument('--bios-version', default='U30 v1.00')
    parser.add_argument('--task-polls', type=int, default=2,
                        help='Polls of a task monitor that answer 202.')
    parser.add_argument('--bmc-reset', type=float, default=2.0,
                        help='Seconds of 503 after a BMC update.')
    parser.add_argument('--power-delay', type=float, default=0.0,
                        help='Seconds before a power change shows.')
    parser.add_argument('--processors', default=None,
                        help='The system\'s Processors: ProcessorType[:State]'
                             ', comma separated; unset: no collection.')
    parser.add_argument('--processors-error', action='store_true',
                        help='Processors requests answer 500.')
    parser.add_argument('--systems', type=int, default=1,
                        help='Systems served, each with its own Manager '
                             'and inventory members.')
    parser.add_argument('--firmware-links',
                        choices=('none', 'related', 'active'),
                        help='How inventory members are tied to their '
                             'system or Manager (default: none for one '
                             'system, related for several).')
    parser.add_argument('--empty-inventory', action='store_true',
                        help='The FirmwareInventory lists no member.')
    parser.add_argument('--refuse-media', action='store_true',
                        help='Every InsertMedia answers 400.')
    parser.add_argument('--no-cd-media', action='store_true',
                        help='No virtual media device takes a CD or DVD.')
    parser.add_argument('--inventory-versions-only', action='store_true',
                        help='No BiosVersion or FirmwareVersion: only the '
                             'inventory tells the versions.')
    args = parser.parse_args(argv)
    server = simple_server.make_server('127.0.0.1', args.port, BMC(args),
                                       server_class=_Server,
                                       handler_class=_QuietHandler)
    server.serve_forever()


if __name__ == '__main__':
    main()
