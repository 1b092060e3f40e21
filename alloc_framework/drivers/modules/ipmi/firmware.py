"""The ``ipmi`` firmware interface: the BMC firmware revision, and its
update with the PICMG HPM.1 upgrade commands.

Upstream ironic has no IPMI firmware path; this follows PICMG HPM.1
r1.0. Its commands are in the PICMG network function (0x2C), and the
first byte of every request and response is the PICMG identifier 0x00.

The update is a deferrable method: each call does one short
conversation with the BMC and returns a ``Reschedule`` carrying where it
got to (``stage``, ``offset``...; never credentials, which stay in
``driver_info``) for every wait, so no thread ever sleeps. Its stages are
declared as a table (:attr:`IPMIFirmware.STAGES`, run by
:func:`alloc_framework.drivers.deferred.run_stages`):

1. ``start``: fetch the image (``settings[0]['url']``, size and time
   bounded) and check that the BMC can upgrade ``[ipmi]hpm_component``;
2. Initiate Upgrade Action *prepare*, then *upload for upgrade*;
3. Upload Firmware Block, ``[ipmi]hpm_block_size`` bytes each, at most
   ``[ipmi]hpm_blocks_per_call`` blocks per call: a large image takes
   several calls, the offset reached travels in the reschedule;
4. Finish Firmware Upload (the BMC checks the image), Activate Firmware;
5. Query Self-test Results until the new firmware reports it is sound.

A failure once the upgrade started sends Abort Firmware Upgrade.

A long-duration command that answers "command in progress" (0x80) is
polled with Get Upgrade Status every ``[ipmi]hpm_poll_interval`` seconds
(a reschedule each); its last completion code decides.

The image is downloaded once per update, by its first call, into the
conductor's image cache (:mod:`alloc_framework.drivers.modules.image_cache`,
``[ipmi]firmware_image_cache_dir``, bounded by
``[ipmi]firmware_image_cache_size``), keyed by its SHA-256, which travels
in the reschedules (``digest``); the upload calls read their blocks from
there. A call that misses the cache (another conductor took the node
over, or the entry was evicted) downloads the image again, and the
update fails unless it has the same SHA-256.
"""

import math
import time

from oslo_log import log
import requests

from alloc_framework.common import exception
from alloc_framework.drivers import base
from alloc_framework.drivers import deferred
from alloc_framework.drivers.modules import image_cache
from alloc_framework.drivers.modules.ipmi import common

LOG = log.getLogger(__name__)

NETFN_APP = 0x06
GET_DEVICE_ID = 0x01

NETFN_PICMG = 0x2C
PICMG_ID = 0x00
GET_TARGET_UPGRADE_CAPABILITIES = 0x2E
ABORT_FIRMWARE_UPGRADE = 0x30
INITIATE_UPGRADE_ACTION = 0x31
UPLOAD_FIRMWARE_BLOCK = 0x32
FINISH_FIRMWARE_UPLOAD = 0x33
GET_UPGRADE_STATUS = 0x34
ACTIVATE_FIRMWARE = 0x35
QUERY_SELFTEST_RESULTS = 0x36

# Initiate Upgrade Action actions.
ACTION_PREPARE = 0x01
ACTION_UPLOAD_FOR_UPGRADE = 0x02

# Completion code of a long-duration command still running.
IN_PROGRESS = 0x80
# Query Self-test Results: first result byte when all is well.
SELFTEST_OK = 0x55
SELFTEST_NOT_IMPLEMENTED = 0x56

# HPM.1 timeouts are in units of 5 seconds.
HPM_TIMEOUT_UNIT = 5
# Polls allowed when the BMC declares no time-out.
DEFAULT_POLLS = 60

COMPONENT = 'bmc'

_COMMAND_NAMES = {
    INITIATE_UPGRADE_ACTION: 'Initiate Upgrade Action',
    UPLOAD_FIRMWARE_BLOCK: 'Upload Firmware Block',
    FINISH_FIRMWARE_UPLOAD: 'Finish Firmware Upload',
    ACTIVATE_FIRMWARE: 'Activate Firmware',
}

_COMPLETION_CODES = {
    0x81: 'the component or image size is not what the BMC expects',
    0x82: 'the image failed the BMC\'s integrity check',
    0x83: 'the image does not match the component',
    0xc1: 'the BMC does not implement PICMG HPM.1',
}

_ARGSINFO = {
    'settings': {
        'description': 'A list with one object {"component": "bmc", '
                       '"url": "http(s)://..."}: the firmware image of the '
                       'BMC operational firmware (HPM.1 component '
                       '[ipmi]hpm_component).',
        'required': True,
    },
}


def _fail(task, reason):
    raise exception.FirmwareUpdateFailure(node=task.node.uuid, reason=reason)


def download(conf, task, url):
    """The chunks of the image at ``url``: bounded in size and in time.

    A generator, for :meth:`ImageCache.add`, which stores the chunks as
    they come.

    :raises: FirmwareUpdateFailure
    """
    limit = conf.ipmi.firmware_image_max_size
    allowed = conf.ipmi.firmware_image_timeout
    started = time.monotonic()
    received = 0
    try:
        with requests.get(url, stream=True, timeout=allowed) as resp:
            if resp.status_code != 200:
                _fail(task, 'downloading the image from %s answered HTTP '
                            '%s' % (url, resp.status_code))
            declared = resp.headers.get('Content-Length')
            if declared and declared.isdigit() and int(declared) > limit:
                _fail(task, 'the image at %s has %s bytes, more than '
                            '[ipmi]firmware_image_max_size (%d)'
                            % (url, declared, limit))
            for chunk in resp.iter_content(65536):
                received += len(chunk)
                if time.monotonic() - started > allowed:
                    # requests bounds each read, not the whole download.
                    _fail(task, 'downloading the image from %s took more '
                                'than [ipmi]firmware_image_timeout (%s s)'
                                % (url, allowed))
                if received > limit:
                    _fail(task, 'the image at %s is larger than '
                                '[ipmi]firmware_image_max_size (%d bytes)'
                                % (url, limit))
                yield chunk
    except requests.RequestException as exc:
        _fail(task, 'could not download the image from %s: %s' % (url, exc))
    if not received:
        _fail(task, 'the image at %s is empty' % url)


def fetch_image(conf, task, url, digest=None):
    """The image at ``url`` from the conductor's image cache, downloaded
    into it unless ``digest`` (its SHA-256, known from an earlier call)
    is there already.

    :returns: an :class:`image_cache.CachedImage`.
    :raises: FirmwareUpdateFailure, also when the image downloaded does
        not have ``digest``.
    """
    cache = image_cache.ImageCache(
        conf.ipmi.firmware_image_cache_dir,
        conf.ipmi.firmware_image_cache_size,
        # A live download ends within the timeout: older partial files
        # were left by a process that died.
        partial_age=2 * conf.ipmi.firmware_image_timeout)
    if digest is not None:
        cached = cache.get(digest)
        if cached is not None:
            return cached
    try:
        return cache.add(download(conf, task, url), expected=digest)
    except image_cache.DigestMismatch:
        _fail(task, 'the image at %s changed during the update' % url)


def _picmg(client, command, data=()):
    """A PICMG command: (completion code, data after the identifier)."""
    response = client.raw_command(netfn=NETFN_PICMG, command=command,
                                  data=[PICMG_ID] + list(data))
    if response.get('error') == 'timeout':
        from pyghmi import exceptions as pyghmi_exc
        raise pyghmi_exc.IpmiException('timeout')
    data = bytes(response.get('data') or b'')
    return response.get('code', 0), data[1:]


def _refused(task, command, code):
    name = _COMMAND_NAMES.get(command, 'HPM.1 command 0x%02x' % command)
    _fail(task, '%s: the BMC answered completion code 0x%02x%s'
                % (name, code, ' (%s)' % _COMPLETION_CODES[code]
                   if code in _COMPLETION_CODES else ''))


def read_version(bmc, client):
    """The firmware revision of Get Device ID, as ``major.minor``."""
    data = common.check(bmc, client.raw_command(
        netfn=NETFN_APP, command=GET_DEVICE_ID), 'Get Device ID')
    if len(data) < 4:
        raise exception.IPMIFailure(
            bmc=bmc, error='Get Device ID answered %d bytes' % len(data))
    # Major revision in bits 0-6, minor revision in BCD.
    return '%d.%02x' % (data[2] & 0x7f, data[3])


class IPMIFirmware(base.FirmwareInterface):
    """BMC firmware revision and HPM.1 update."""

    def get_properties(self):
        return dict(common.PROPERTIES)

    def validate(self, task):
        common.parse_driver_info(task.node)

    def get_components(self, task):
        bmc = common.parse_driver_info(task.node)
        version = common.converse(self.conf, bmc,
                                  lambda client: read_version(bmc, client),
                                  'reading the firmware revision')
        return [{'component': COMPONENT, 'current_version': version}]

    # --- update ---------------------------------------------------------

    @base.clean_step(priority=0, abortable=False, argsinfo=_ARGSINFO)
    @base.service_step(priority=0, abortable=False, argsinfo=_ARGSINFO)
    @deferred.deferrable
    def update(self, task, settings, stage=None, then=None, offset=0,
               size=None, digest=None, polls=None):
        """Update the BMC firmware with PICMG HPM.1 (see the module).

        Only ``settings`` comes from the caller; the other arguments are
        what the previous call left in its reschedule (``stage`` names
        the stage of :data:`STAGES` to run).

        :returns: a Reschedule while the update goes on, then
            ``{'updated': ['bmc'], 'components': [...], 'size', 'sha256'}``.
        """
        self.check_settings(settings, (COMPONENT,), at_most=1)
        url = settings[0]['url']
        bmc = common.parse_driver_info(task.node)
        state = {'settings': settings, 'stage': stage or 'start',
                 'then': then, 'offset': offset, 'size': size,
                 'digest': digest, 'polls': polls}
        image = None
        if state['stage'] in ('start', 'upload'):
            image = fetch_image(self.conf, task, url, digest)
            state['size'], state['digest'] = image.size, image.digest
        try:
            result = common.converse(
                self.conf, bmc,
                lambda client: self._abort_on_failure(
                    task, client, bmc, state, image),
                'updating the BMC firmware (%s)' % state['stage'],
                retry=False)
        except exception.IPMIFailure as exc:
            if not (getattr(exc, 'no_answer', False)
                    and state['stage'] == 'self-test'):
                raise
            # An activated BMC restarts: silence is expected for a while.
            LOG.info('Node %(node)s: the BMC does not answer after '
                     'activation yet: %(error)s',
                     {'node': task.node.uuid, 'error': exc})
            return self._poll(task, state, 'self-test')
        if isinstance(result, deferred.Reschedule):
            LOG.info('Node %(node)s: BMC firmware update at %(stage)s, '
                     'offset %(offset)s of %(size)s',
                     {'node': task.node.uuid, 'stage': result.arguments.get(
                         'stage'), 'offset': result.arguments.get('offset'),
                      'size': result.arguments.get('size')})
        return result

    def _abort_on_failure(self, task, client, bmc, state, image):
        try:
            return deferred.run_stages(self.STAGES, state['stage'], self,
                                       task, client, bmc, state, image)
        except exception.FirmwareUpdateFailure:
            if state['stage'] != 'start':
                # Leave the BMC out of its upgrade: best effort, the
                # failure is what the caller must see.
                try:
                    _picmg(client, ABORT_FIRMWARE_UPGRADE)
                except Exception:
                    LOG.warning('Node %s: Abort Firmware Upgrade failed',
                                task.node.uuid, exc_info=True)
            raise

    def _again(self, state, delay, **changes):
        args = dict(state, **changes)
        return deferred.Reschedule(delay=delay, **args)

    def _long(self, task, client, state, command, data, then):
        """Run a long-duration command; go on with ``then`` when done."""
        code, _ = _picmg(client, command, data)
        if code == IN_PROGRESS:
            return self._again(state, self.conf.ipmi.hpm_poll_interval,
                               stage='wait', then=then,
                               polls=state['polls'])
        if code:
            _refused(task, command, code)
        return None

    # --- the stages, each called as handler(self, task, client, bmc,
    # state, image); ``image`` is only there in ``start`` and ``upload``.

    def _start(self, task, client, bmc, state, image):
        code, caps = _picmg(client, GET_TARGET_UPGRADE_CAPABILITIES)
        if code or len(caps) < 7:
            _fail(task, 'the BMC does not answer Get Target Upgrade '
                        'Capabilities (completion code 0x%02x): no PICMG '
                        'HPM.1 support' % code)
        component = self.conf.ipmi.hpm_component
        if not caps[6] & (1 << component):
            _fail(task, 'the BMC does not offer HPM.1 component %d '
                        '([ipmi]hpm_component) for upgrade; it offers the '
                        'mask 0x%02x' % (component, caps[6]))
        longest = max(caps[2], caps[3], caps[5]) * HPM_TIMEOUT_UNIT
        interval = max(self.conf.ipmi.hpm_poll_interval, 1)
        state['polls'] = (max(math.ceil(longest / interval) + 1, 3)
                          if longest else DEFAULT_POLLS)
        return deferred.Next('prepare')

    def _prepare(self, task, client, bmc, state, image):
        return self._long(task, client, state, INITIATE_UPGRADE_ACTION,
                          [self._mask(), ACTION_PREPARE],
                          'begin-upload') or deferred.Next('begin-upload')

    def _begin_upload(self, task, client, bmc, state, image):
        wait = self._long(task, client, state, INITIATE_UPGRADE_ACTION,
                          [self._mask(), ACTION_UPLOAD_FOR_UPGRADE],
                          'upload')
        # The upload calls fetch the image (from the cache).
        return wait or self._again(state, 0, stage='upload', then=None,
                                   offset=0)

    def _finish(self, task, client, bmc, state, image):
        size = state['size']
        return self._long(task, client, state, FINISH_FIRMWARE_UPLOAD,
                          [self.conf.ipmi.hpm_component]
                          + list(size.to_bytes(4, 'little')),
                          'activate') or deferred.Next('activate')

    def _activate(self, task, client, bmc, state, image):
        return self._long(task, client, state, ACTIVATE_FIRMWARE, [],
                          'self-test') or deferred.Next('self-test')

    def _wait(self, task, client, bmc, state, image):
        """Poll a long-duration command; go on with ``then`` when done."""
        code, status = _picmg(client, GET_UPGRADE_STATUS)
        if code:
            _fail(task, 'Get Upgrade Status answered completion code '
                        '0x%02x' % code)
        if len(status) < 2:
            _fail(task, 'Get Upgrade Status answered %d bytes'
                        % len(status))
        if status[1] == IN_PROGRESS:
            return self._poll(task, state, 'wait')
        if status[1]:
            _refused(task, status[0], status[1])
        stage, state['then'] = state['then'], None
        if stage == 'upload':
            # The upload calls fetch the image (from the cache).
            return self._again(state, 0, stage='upload', offset=0)
        return deferred.Next(stage)

    def _mask(self):
        return 1 << self.conf.ipmi.hpm_component

    def _poll(self, task, state, stage):
        left = (state['polls'] if state['polls'] is not None
                else DEFAULT_POLLS) - 1
        if left < 0:
            _fail(task, 'the BMC did not finish the HPM.1 %s in the time '
                        'it declares' % (state['then'] or stage))
        return self._again(state, self.conf.ipmi.hpm_poll_interval,
                           stage=stage, polls=left)

    def _upload(self, task, client, bmc, state, image):
        block_size = self.conf.ipmi.hpm_block_size
        blocks = self.conf.ipmi.hpm_blocks_per_call
        offset = first = state['offset'] or 0
        # The blocks of this call, read from the cache at once.
        window = image.read(first, block_size * blocks)
        started = time.monotonic()
        budget = self.conf.ipmi.command_deadline / 2
        for _ in range(blocks):
            if offset >= image.size:
                break
            block = (offset // block_size) % 256
            start = offset - first
            code, _ = _picmg(client, UPLOAD_FIRMWARE_BLOCK,
                             [block] + list(window[start:start
                                                   + block_size]))
            if code == IN_PROGRESS:
                # The BMC is writing: come back for the same block.
                return self._again(state, 0, stage='upload', offset=offset)
            if code:
                _refused(task, UPLOAD_FIRMWARE_BLOCK, code)
            offset += block_size
            if time.monotonic() - started > budget:
                break
        offset = min(offset, image.size)
        if offset < image.size:
            return self._again(state, 0, stage='upload', offset=offset)
        state['offset'] = offset
        return self._again(state, 0, stage='finish')

    def _self_test(self, task, client, bmc, state, image):
        code, result = _picmg(client, QUERY_SELFTEST_RESULTS)
        if code == IN_PROGRESS:
            return self._poll(task, state, 'self-test')
        if code:
            _fail(task, 'Query Self-test Results answered completion code '
                        '0x%02x' % code)
        if not result or result[0] not in (SELFTEST_OK,
                                           SELFTEST_NOT_IMPLEMENTED):
            _fail(task, 'the new firmware failed its self-test (result '
                        '0x%s)' % result.hex())
        return {'updated': [COMPONENT],
                'components': [{'component': COMPONENT,
                                'current_version': read_version(bmc,
                                                                client)}],
                'size': state['size'], 'sha256': state['digest']}

    # The stages of an update (``stage``) and their handlers; a call
    # without a stage starts.
    STAGES = {
        'start': _start,
        'prepare': _prepare,
        'begin-upload': _begin_upload,
        'upload': _upload,
        'finish': _finish,
        'activate': _activate,
        'self-test': _self_test,
        'wait': _wait,
    }
