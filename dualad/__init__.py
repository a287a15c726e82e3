"""dualad: forward- and reverse-mode automatic differentiation of plain NumPy code.

One registry of primitives (:mod:`dualad.ops`), interpreted by dual numbers
(forward mode, :mod:`dualad.forward`) and by a tape (reverse mode: recording in
:mod:`dualad.tape`, the backward sweep in :mod:`dualad.sweep`). Plain ``numpy`` calls on traced values reach the
registry through the NumPy protocols (:mod:`dualad.dispatch`).

The names below are the public interface; :mod:`dualad.extend` is the one for
declaring primitives and writing interpreters. The planner and the oracles are
:mod:`dualad.jacobians` and :mod:`dualad.verification`.
"""
# The order matters once: the registry is filled (ops) before the NumPy protocols are
# installed on the boxes (dispatch), which the NumPy namespace (numpy) reads.
from . import ops  # noqa: F401  (fills the registry)
from . import dispatch  # noqa: F401  (installs the NumPy protocols on traced values)
from . import numpy  # noqa: F401
from . import array_api  # noqa: F401  (the array API namespace; installs __array_namespace__)
from . import autograd  # noqa: F401
from .api import jvp, vjp, grad, value_and_grad, hvp, derivative  # noqa: F401
from .tracer import EscapedTracerError  # noqa: F401
from .primitive import REGISTRY, Primitive, sample
from .forward import Dual  # noqa: F401
from .tape import Var  # noqa: F401
from .custom import primitive, Function  # noqa: F401
from .teaching.evaltrace import trace  # noqa: F401
from .anomaly import detect_anomaly, AnomalyError  # noqa: F401
from .checkpoint import checkpoint  # noqa: F401
from .vmap import vmap  # noqa: F401
from .scan import scan  # noqa: F401  (over the package's name, as vmap)
from .implicit import custom_linear_solve, custom_root  # noqa: F401
from .stop import stop_gradient  # noqa: F401
from . import lax  # noqa: F401  (JAX-style spellings: dualad.lax.stop_gradient)
from .jit import jit, JitRetraceWarning  # noqa: F401
from .heap import keep_heap  # noqa: F401  (opt-in allocator setting)

__version__ = "0.1.0"
