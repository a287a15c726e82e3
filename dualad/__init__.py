"""dualad: forward- and reverse-mode automatic differentiation of plain NumPy code.

One registry of primitives (:mod:`dualad.ops`), interpreted by dual numbers
(forward mode, :mod:`dualad.forward`) and by a tape (reverse mode: recording in
:mod:`dualad.tape`, the backward sweep in :mod:`dualad.sweep`). Plain ``numpy`` calls on traced values reach the
registry through the NumPy protocols (:mod:`dualad.dispatch`).
"""
from . import ops  # noqa: F401  (fills the registry)
from . import dispatch  # noqa: F401  (installs the NumPy protocols on traced values)
from .api import jvp, vjp, grad, value_and_grad, hvp, derivative  # noqa: F401
from .tracer import REGISTRY, Primitive, sample  # noqa: F401
from .forward import Dual  # noqa: F401
from .tape import Var  # noqa: F401

__version__ = "0.1.0"
from .custom import primitive, Function  # noqa: E402,F401
from . import autograd  # noqa: E402,F401
from .teaching.evaltrace import trace  # noqa: E402,F401
from . import numpy  # noqa: E402,F401
from .anomaly import detect_anomaly, AnomalyError  # noqa: E402,F401
from .checkpoint import checkpoint  # noqa: E402,F401
from .tracer import EscapedTracerError  # noqa: E402,F401
from .heap import keep_heap  # noqa: E402,F401  (opt-in allocator setting)
