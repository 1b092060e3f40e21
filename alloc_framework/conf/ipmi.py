"""Options of the [ipmi] group: the ``ipmi`` hardware type (pyghmi).

They are registered through the hardware plugin options mechanism
(``alloc_framework.hardware.opts`` entry point ``ipmi``, see
:mod:`alloc_framework.conf.hardware`), like those of any other hardware
plugin, so they exist wherever the ``ipmi`` interfaces can be loaded.
"""

from oslo_config import cfg

from alloc_framework.conf import opt_types

GROUP = 'ipmi'

opts = [
    opt_types.FloatOpt(
        'command_deadline',
        default=20.0,
        min=1.0,
        help='Seconds one conversation with a BMC (log in, the '
             'commands of one driver call, log out) may take. A '
             'BMC that does not answer in time fails the driver '
             'call with an error naming the BMC; the conductor '
             'thread never waits longer than this.'),
    cfg.IntOpt('command_retries',
               default=0,
               min=0,
               max=5,
               help='How many more times a conversation that failed '
                    'because the BMC did not answer is tried, at once '
                    '(there is no pause between attempts). A BMC that '
                    'refuses the credentials is never retried.'),
    cfg.IntOpt('power_state_reads',
               default=3,
               min=1,
               max=20,
               deprecated_for_removal=True,
               deprecated_reason='A power change now waits for the '
                                 'requested state for at most '
                                 '[conductor]power_state_change_timeout '
                                 'seconds, reading it every '
                                 '[ipmi]power_state_poll_interval seconds.',
               help='Ignored.'),
    opt_types.FloatOpt(
        'power_state_poll_interval',
        default=1.0,
        min=0.01,
        help='Seconds between two reads of the power state while '
             'a power change is awaited (for at most '
             '``[conductor]power_state_change_timeout``). Each '
             'read is a conversation of its own (log in, Get '
             'Chassis Status, log out). The pause waits on the '
             'conductor\'s stop event, so a stopping conductor '
             'ends it at once.'),
    cfg.IntOpt('hpm_component',
               default=1,
               min=0,
               max=7,
               help='The PICMG HPM.1 component number of the BMC '
                    'operational firmware, updated for the ``bmc`` '
                    'firmware component.'),
    cfg.IntOpt('hpm_block_size',
               default=64,
               min=1,
               max=200,
               help='Bytes of firmware image sent per HPM.1 Upload '
                    'Firmware Block command.'),
    cfg.IntOpt('hpm_blocks_per_call',
               default=256,
               min=1,
               help='At most this many firmware blocks are uploaded per '
                    'call of the firmware update; a larger image is '
                    'uploaded over several calls of the deferred action, '
                    'which carries the offset reached.'),
    cfg.IntOpt('hpm_poll_interval',
               default=5,
               min=0,
               help='Seconds before the firmware update asks the BMC '
                    'again whether a long HPM.1 operation (prepare, '
                    'finish upload, activation, self-test) is over. The '
                    'wait is a deferred action reschedule, never a sleep.'),
    cfg.IntOpt('firmware_image_max_size',
               default=64 * 1024 * 1024,
               min=1,
               help='Largest firmware image, in bytes, the firmware '
                    'update downloads; a larger one fails the update.'),
    opt_types.FloatOpt(
        'firmware_image_timeout',
        default=60.0,
        min=1.0,
        help='Seconds the download of a firmware image may take '
             '(connecting, each read, and the whole download).'),
    cfg.StrOpt('firmware_image_cache_dir',
               default='$state_path/ipmi_firmware_images',
               help='Directory where the conductor keeps the firmware '
                    'images of IPMI updates, named by their SHA-256: an '
                    'update downloads its image once, in its first call, '
                    'and its upload calls read it from here.'),
    cfg.IntOpt('firmware_image_cache_size',
               default=256 * 1024 * 1024,
               min=0,
               help='Bytes the firmware image cache may hold. Storing an '
                    'image evicts the least recently used others beyond '
                    'this bound; the image of the update that stored it is '
                    'kept even alone over the bound. A larger value lets '
                    'more concurrent updates of different images read '
                    'their image from disk instead of downloading it '
                    'again; 0 keeps only the last image.'),
]


def list_opts():
    """``[(group, options)]`` for ``alloc_framework.hardware.opts``."""
    return [(GROUP, opts)]
