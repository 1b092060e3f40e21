"""Option types shared by the option groups."""

import math

from oslo_config import cfg
from oslo_config import types


class FiniteFloat(types.Float):
    """A float as ``types.Float`` reads it, but never NaN nor infinite.

    Python's ``float()`` reads ``nan`` and ``inf``, and a NaN passes every
    ``min``/``max`` bound (it compares false with everything): an interval
    or deadline of ``nan`` would never elapse, or spin, instead of being
    refused at start-up like any other invalid value.
    """

    def __call__(self, value):
        value = super().__call__(value)
        if value is not None and not math.isfinite(value):
            raise ValueError('Should be a finite number, but found %s'
                             % value)
        return value


class FloatOpt(cfg.FloatOpt):
    """``cfg.FloatOpt`` whose values must be finite (see FiniteFloat)."""

    def __init__(self, name, min=None, max=None, **kwargs):
        super().__init__(name, min=min, max=max, **kwargs)
        self.type = FiniteFloat(min=min, max=max)
