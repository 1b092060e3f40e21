"""Options of the example plugin, group ``[example_hw]``."""

from oslo_config import cfg

opts = [
    cfg.StrOpt('identify_state', default='blinking',
               choices=['on', 'blinking'],
               help='What the LED does during the identify clean step '
                    'when the step is given no state.'),
]


def list_opts():
    """``[(group, [options])]``, the ``oslo.config.opts`` format."""
    return [('example_hw', opts)]
