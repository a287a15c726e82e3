"""dualad: forward- and reverse-mode automatic differentiation of plain NumPy code.

One registry of primitives (``dualad.ops``), interpreted by dual numbers (forward
mode, ``dualad.forward``) and by a tape (reverse mode: recording in ``dualad.tape``, the
backward sweep in ``dualad.sweep``). Plain ``numpy`` calls on traced values reach the
registry through the NumPy protocols (``dualad.dispatch``)::

    import numpy as np
    import dualad

    dualad.grad(lambda x: np.sum(np.sin(x) ** 2))(np.array([0.5, 1.0]))

The names in ``__all__`` are the public interface (``help(dualad)`` lists them):
the functional transformations (:func:`grad`, :func:`value_and_grad`, :func:`jvp`,
:func:`vjp`, :func:`hvp`, :func:`derivative`, :func:`vmap`, :func:`jit`), loops and
memory (:func:`scan`, :func:`checkpoint`), custom rules (:func:`primitive`,
:class:`Function`), implicit differentiation (:func:`custom_root`,
:func:`custom_linear_solve`), :func:`stop_gradient`, :func:`detect_anomaly`, the
teaching :func:`trace`, and the errors users meet. :mod:`dualad.autograd` is the
PyTorch-style imperative face and :mod:`dualad.lax` the JAX spellings.
:mod:`dualad.extend` is the interface for declaring primitives and writing interpreters
(``Primitive``, ``REGISTRY``, ``sample``, ``Dual``, ``Var``: still importable from
``dualad`` as attributes, listed in ``dualad.extend.__all__``). The planner and the
oracles are :mod:`dualad.jacobians` and :mod:`dualad.verification`.
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
from .primitive import REGISTRY, Primitive, sample  # noqa: F401  (dualad.extend's)
from .forward import Dual  # noqa: F401
from .tape import Var  # noqa: F401
from .custom import primitive, Function  # noqa: F401
from .custom_rules import custom_jvp, custom_vjp  # noqa: F401
from .anomaly import detect_anomaly, AnomalyError  # noqa: F401
from .checkpoint import checkpoint  # noqa: F401
from .vmap import vmap  # noqa: F401
from .scan import scan  # noqa: F401  (over the package's name, as vmap)
from .stop import stop_gradient  # noqa: F401
from . import lax  # noqa: F401  (JAX-style spellings: dualad.lax.stop_gradient)
from .jit import jit, JitRetraceWarning  # noqa: F401
from .jit.default import JitFallbackWarning  # noqa: F401
from .heap import keep_heap  # noqa: F401  (opt-in allocator setting)

from . import families  # noqa: F401,E402  (last: the lazily declared families, see below)
from .lazy import attach as _attach  # noqa: E402
from typing import TYPE_CHECKING as _TYPE_CHECKING  # noqa: E402

if _TYPE_CHECKING:   # for type checkers only: the lazy attributes below, with their types
    from .implicit import custom_linear_solve, custom_root  # noqa: F401
    from .teaching.evaltrace import trace  # noqa: F401
del _TYPE_CHECKING

__version__ = "0.1.0"

# What loads on first use (SPEC 1; docs/architecture.md, "What loads lazily"): the
# implicit-differentiation functions (dualad.implicit imports scipy.sparse and
# scipy.linalg), the teaching trace (dualad.trace), the dualad.scipy mirrors, and any
# public submodule (dualad.jacobians, dualad.verification, dualad.extend, ...) as an
# attribute. dir(dualad) lists what an eager import listed.
__getattr__, __dir__ = _attach(__name__, attributes={
    "custom_root": "dualad.implicit", "custom_linear_solve": "dualad.implicit",
    "trace": "dualad.teaching.evaltrace"},
    listed=("implicit", "scipy", "teaching"), hidden=("families", "lazy"))

# What ``help(dualad)`` lists and ``from dualad import *`` gives: the user-facing functions,
# classes and errors. The extension surface (Primitive, REGISTRY, sample, Dual, Var) stays
# importable from here but is documented, and listed, in dualad.extend.
__all__ = [
    # functional transformations
    "grad", "value_and_grad", "jvp", "vjp", "hvp", "derivative", "vmap", "jit",
    # loops, memory, implicit differentiation
    "scan", "checkpoint", "custom_root", "custom_linear_solve", "stop_gradient",
    # custom rules
    "primitive", "Function", "custom_jvp", "custom_vjp",
    # debugging, teaching, allocator
    "detect_anomaly", "trace", "keep_heap",
    # errors and warnings users meet
    "AnomalyError", "EscapedTracerError", "JitRetraceWarning", "JitFallbackWarning",
]
