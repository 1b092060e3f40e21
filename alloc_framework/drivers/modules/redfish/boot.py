"""The ``redfish-virtual-media`` boot interface: boot an ISO from the BMC.

The node boots an ISO image that its BMC attaches as a virtual CD or DVD
(Redfish ``VirtualMedia`` of the Managers that manage the system, or of
the system itself on newer BMCs), with a one-time boot source override
to ``Cd``:

* the instance: ``instance_info['boot_iso']`` (:meth:`prepare_instance`,
  used by the ``ramdisk`` deploy interface);
* a deploy or service ramdisk: ``instance_info['deploy_iso']``, else
  ``driver_info['redfish_deploy_iso']`` (:meth:`prepare_ramdisk`).

The URLs are upstream ironic's keys, and must be ``http`` or ``https``
URLs without credentials (they are stored on the node and shown by the
API). Whatever a CD/DVD device holds is ejected before the new image is
inserted. The BMC fetches the image itself: a BMC that cannot (a wrong
URL, a server that refuses it) refuses the insertion and the error names
the field, not the URL.

Every request is bounded by ``[redfish]connection_timeout`` and
``read_timeout``; nothing here waits for the node.
"""

from urllib import parse as urlparse

from oslo_log import log
import sushy
from sushy import exceptions as sushy_exc

from alloc_framework.common import exception
from alloc_framework.drivers import base
from alloc_framework.drivers.modules.redfish import utils

LOG = log.getLogger(__name__)

BOOT_ISO = 'boot_iso'
DEPLOY_ISO = 'deploy_iso'
DRIVER_DEPLOY_ISO = 'redfish_deploy_iso'

PROPERTIES = {
    DRIVER_DEPLOY_ISO: 'Optional. The http(s) URL of the ISO of the deploy '
                       'ramdisk, booted from virtual media when the node '
                       'boots a ramdisk (instance_info deploy_iso takes '
                       'precedence).',
}

# The media types of a device that can boot an ISO.
_CD_TYPES = {sushy.VirtualMediaType.CD, sushy.VirtualMediaType.DVD}


def check_iso_url(node, where, key, value):
    """Check that ``value`` is an http(s) URL without credentials.

    :param where: ``instance_info`` or ``driver_info``, for the message.
    :raises: InvalidParameterValue naming ``<where>.<key>``.
    """
    field = '%s.%s' % (where, key)
    if not isinstance(value, str) or not value.strip():
        raise exception.InvalidParameterValue(
            err='%s of node %s must be the http or https URL of an ISO '
                'image.' % (field, node.uuid))
    try:
        url = urlparse.urlsplit(value.strip())
        _ = url.port  # raises for a bad port
    except ValueError as exc:
        raise exception.InvalidParameterValue(
            err='%s of node %s is not a valid URL: %s' % (field, node.uuid,
                                                          exc))
    if url.scheme not in ('http', 'https') or not url.hostname:
        raise exception.InvalidParameterValue(
            err='%s of node %s must be an http or https URL with a host '
                '(scheme %r): the BMC fetches the image itself.'
                % (field, node.uuid, url.scheme))
    if url.username is not None or url.password is not None:
        raise exception.InvalidParameterValue(
            err='%s of node %s must not carry credentials: the URL is '
                'stored on the node and shown by the API.'
                % (field, node.uuid))
    return value.strip()


def boot_iso(node):
    """The validated ``instance_info['boot_iso']`` of ``node``.

    :raises: MissingParameterValue, InvalidParameterValue
    """
    value = (node.instance_info or {}).get(BOOT_ISO)
    if value is None or value == '':
        raise exception.MissingParameterValue(
            err='Missing instance_info.boot_iso of node %s: the '
                'redfish-virtual-media boot interface boots the instance '
                'from the http(s) URL of its ISO image.' % node.uuid)
    return check_iso_url(node, 'instance_info', BOOT_ISO, value)


def deploy_iso(node):
    """The validated deploy ISO of ``node`` and where it was found.

    :returns: ``(field, url)``; ``(None, None)`` when none is set.
    :raises: InvalidParameterValue
    """
    for where, key, source in (
            ('instance_info', DEPLOY_ISO, node.instance_info),
            ('driver_info', DRIVER_DEPLOY_ISO, node.driver_info)):
        value = (source or {}).get(key)
        if value is not None and value != '':
            return ('%s.%s' % (where, key),
                    check_iso_url(node, where, key, value))
    return None, None


def _collections(system):
    """The VirtualMedia collections of the system's Managers, then its own.

    A Manager without virtual media, or a system without a
    ``VirtualMedia`` link, gives nothing.
    """
    try:
        managers = system.managers
    except sushy_exc.MissingAttributeError:
        managers = []
    for manager in managers:
        try:
            yield manager.virtual_media
        except sushy_exc.MissingAttributeError:
            continue
    try:
        yield system.virtual_media
    except sushy_exc.MissingAttributeError:
        return


def cd_devices(node, system):
    """The virtual media devices of ``system`` that take a CD or DVD.

    :raises: RedfishError when there is none.
    """
    found = []
    seen = set()
    for collection in _collections(system):
        for device in collection.get_members():
            if device.path in seen:
                continue
            seen.add(device.path)
            if _CD_TYPES & set(device.media_types or ()):
                found.append(device)
    if not found:
        raise exception.RedfishError(
            error='The Redfish BMC of node %s has no virtual media device '
                  'that accepts a CD or DVD: the redfish-virtual-media boot '
                  'interface cannot attach an ISO.' % node.uuid)
    return found


def _eject(node, devices):
    for device in devices:
        if device.inserted or device.image:
            device.eject_media()
            LOG.info('Node %(node)s: ejected the virtual media of %(dev)s',
                     {'node': node.uuid, 'dev': device.identity})


def attach_and_boot(node, conn, field, url):
    """Eject what the CD/DVD devices hold, insert ``url``, boot it once.

    :param conn: an open :class:`utils.Connection`.
    :param field: where ``url`` comes from (``instance_info.boot_iso``),
        for messages: the URL itself is never repeated.
    :raises: RedfishError naming the field when the BMC refuses.
    """
    system = conn.system()
    devices = cd_devices(node, system)
    _eject(node, devices)
    device = devices[0]
    try:
        device.insert_media(url, inserted=True, write_protected=True)
    except sushy_exc.HTTPError as exc:
        raise exception.RedfishError(
            error='The Redfish BMC of node %s refused to insert the image of '
                  '%s into its virtual media %s: %s'
                  % (node.uuid, field, device.identity, utils.short(exc)),
            status=getattr(exc, 'status_code', None))
    system.set_system_boot_options(
        sushy.BootSource.CD, enabled=sushy.BootSourceOverrideEnabled.ONCE)
    LOG.info('Node %(node)s: inserted the image of %(field)s into virtual '
             'media %(dev)s; it boots from it once',
             {'node': node.uuid, 'field': field, 'dev': device.identity})


class RedfishVirtualMediaBoot(base.BootInterface):
    """Boots ISO images attached as a virtual CD by the Redfish BMC."""

    def get_properties(self):
        return dict(utils.PROPERTIES, **PROPERTIES)

    def validate(self, task):
        """``driver_info`` is valid and ``instance_info.boot_iso`` is an
        http(s) URL; a deploy ISO, when set, too. Talks to nothing.

        :raises: MissingParameterValue, InvalidParameterValue
        """
        utils.parse_driver_info(task.node, self.conf)
        boot_iso(task.node)
        deploy_iso(task.node)

    def _attach(self, task, field, url):
        with utils.Connection(task.node, self.conf) as conn:
            attach_and_boot(task.node, conn, field, url)

    def _eject_all(self, task):
        with utils.Connection(task.node, self.conf) as conn:
            _eject(task.node, cd_devices(task.node, conn.system()))

    def prepare_ramdisk(self, task, ramdisk_params):
        """Boot the deploy ISO once from virtual media.

        ``ramdisk_params`` cannot be passed to an ISO the BMC fetches
        as it is; they are ignored.

        :raises: MissingParameterValue when no deploy ISO is set.
        """
        field, url = deploy_iso(task.node)
        if url is None:
            raise exception.MissingParameterValue(
                err='Missing instance_info.deploy_iso or '
                    'driver_info.redfish_deploy_iso of node %s: the http(s) '
                    'URL of the deploy ramdisk ISO.' % task.node.uuid)
        self._attach(task, field, url)

    def clean_up_ramdisk(self, task):
        """Eject the virtual CD/DVD media."""
        self._eject_all(task)

    def prepare_instance(self, task):
        """Boot ``instance_info.boot_iso`` once from virtual media.

        :raises: MissingParameterValue, InvalidParameterValue, RedfishError
        """
        self._attach(task, 'instance_info.boot_iso', boot_iso(task.node))

    def clean_up_instance(self, task):
        """Eject the virtual CD/DVD media."""
        self._eject_all(task)
