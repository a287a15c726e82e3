"""dualad: forward- and reverse-mode automatic differentiation of plain NumPy code.

One registry of primitives (``dualad.ops``), interpreted by dual numbers (forward mode,
``dualad.interpreters.forward``), by a tape (reverse mode, ``dualad.interpreters.reverse``),
by batching (``vmap``, ``dualad.interpreters.batching``) and by staging (``jit``,
``dualad.interpreters.staging``). Plain ``numpy`` calls on traced values reach the registry
through the NumPy protocols (``dualad.frontend``). The map of the code is
docs/architecture.md; adding a primitive or an interpreter, docs/guide_internals.md. A
gradient::

    import numpy as np
    import dualad

    dualad.grad(lambda x: np.sum(np.sin(x) ** 2))(np.array([0.5, 1.0]))

The names in ``__all__`` are the public interface (``help(dualad)`` lists them):
the functional transformations (:func:`grad`, :func:`value_and_grad`, :func:`jvp`,
:func:`vjp`, :func:`hvp`, :func:`derivative`, :func:`vmap`, :func:`jit`), the planner's
Jacobians and Hessians by JAX's names (:func:`jacobian`, :func:`jacfwd`, :func:`jacrev`,
:func:`hessian`: ``dualad.jacobians``' own functions, loaded on first use), Taylor mode
(:func:`jet`, :func:`taylor`) and the differential operators it computes in one batched
sweep (:func:`laplacian`, :func:`hessian_diagonal`, :func:`hessian_trace`,
:func:`biharmonic`), loops and memory (:func:`scan`, :func:`while_loop`, :func:`checkpoint`), custom rules (:func:`primitive`,
:class:`Function`), implicit differentiation (:func:`custom_root`,
:func:`custom_linear_solve`), :func:`stop_gradient`, :func:`detect_anomaly`, the
teaching :func:`trace`, and the errors users meet. :mod:`dualad.autograd` is the
PyTorch-style imperative face, :class:`GradientTape` TensorFlow's tape, :mod:`dualad.lax`
the JAX spellings and :mod:`dualad.tree` the pytrees (``jax.tree_util``'s names, and
registering your own classes).
:mod:`dualad.extend` is the interface for declaring primitives and writing interpreters
(``Primitive``, ``REGISTRY``, ``sample``, ``Dual``, ``Var``: still importable from
``dualad`` as attributes, listed in ``dualad.extend.__all__``). The planner and the
oracles are :mod:`dualad.jacobians` and :mod:`dualad.verification`.
"""
# The order matters once: the registry is filled (ops) before the NumPy protocols are
# installed on the boxes (dispatch), which the NumPy namespace (numpy) reads.
from . import ops  # noqa: F401  (fills the registry)
from .frontend import dispatch as _dispatch  # noqa: F401  (installs the NumPy protocols)
from . import numpy  # noqa: F401
from . import array_api  # noqa: F401  (the array API namespace; installs __array_namespace__)
from . import autograd  # noqa: F401
from .transforms.api import jvp, vjp, grad, value_and_grad, hvp  # noqa: F401
from .transforms.taylor import jet, taylor, derivative  # noqa: F401
from .transforms.operators import laplacian, hessian_diagonal, hessian_trace, biharmonic  # noqa: F401
from .core.tracer import EscapedTracerError  # noqa: F401
from .core.primitive import REGISTRY, Primitive, sample  # noqa: F401  (dualad.extend's)
from .interpreters.forward.dual import Dual  # noqa: F401
from .interpreters.reverse.tape import Var  # noqa: F401
from .transforms.custom import primitive, Function  # noqa: F401
from .transforms.custom_jvp import custom_jvp  # noqa: F401
from .transforms.custom_vjp import custom_vjp  # noqa: F401
from .interpreters.reverse.anomaly import detect_anomaly, AnomalyError  # noqa: F401
from .transforms.checkpoint import checkpoint  # noqa: F401
from .transforms.remat import RematWarning  # noqa: F401
from .transforms.remat_schedule import remat_plan  # noqa: F401
from .transforms import remat_sweep as _remat_sweep  # noqa: F401  (fills api.BUDGETED)
from .interpreters.batching.vmap import vmap  # noqa: F401
from .transforms.scan import scan  # noqa: F401  (over the package's name, as vmap)
from .transforms.while_loop import while_loop  # noqa: F401  (as scan)
from .transforms.stop import stop_gradient  # noqa: F401
from .transforms.gradient_tape import GradientTape  # noqa: F401  (TensorFlow's tape)
from . import lax  # noqa: F401  (JAX-style spellings: dualad.lax.stop_gradient)
from .interpreters.staging.api import jit, JitRetraceWarning  # noqa: F401
from .interpreters.staging.default import JitFallbackWarning  # noqa: F401
from .interpreters.reverse.heap import keep_heap  # noqa: F401  (opt-in allocator setting)

# The one place where the layers above the core hand it what it builds with (the rules
# derived from partials and by transposition, the object-array hook): in this order, after
# the registry's modules are loaded; see dualad.core.primitive.Builders.
from .core.primitive import install_builders as _install_builders  # noqa: E402
from .ops.core.elementwise import rules_from_partial as _from_partial  # noqa: E402
from .transforms.api import transposed_rule as _transpose  # noqa: E402
from .frontend.objects import packed_arguments as _object_arrays  # noqa: E402
_install_builders(from_partial=_from_partial, transpose=_transpose,
                  object_arrays=_object_arrays)
del _install_builders, _from_partial, _transpose, _object_arrays

from .core import families as _families  # noqa: F401,E402  (last: the lazily declared families)
from .core.lazy import attach as _attach  # noqa: E402
from typing import TYPE_CHECKING as _TYPE_CHECKING  # noqa: E402

if _TYPE_CHECKING:   # for type checkers only: the lazy attributes below, with their types
    from .transforms.implicit import custom_linear_solve, custom_root  # noqa: F401
    from .teaching.evaltrace import trace  # noqa: F401
del _TYPE_CHECKING, _dispatch, _families

__version__ = "0.1.0"

# The public modules (dir(dualad) lists them, loaded or not) and the internal packages
# (dir(dualad) leaves them out; reach them through dualad.extend).
PUBLIC_MODULES = ("numpy", "scipy", "array_api", "lax", "autograd", "extend", "revolve",
                  "teaching", "jacobians", "verification", "tree")
INTERNAL = ("core", "interpreters", "frontend", "transforms", "ops", "_autograd_methods",
            "PUBLIC_MODULES", "INTERNAL")

# What loads on first use (SPEC 1; docs/architecture.md, "What loads lazily"): the
# implicit-differentiation functions (dualad.transforms.implicit imports scipy.sparse and
# scipy.linalg), the teaching trace (dualad.trace), the dualad.scipy mirrors, and any
# public submodule (dualad.jacobians, dualad.verification, dualad.extend, ...) as an
# attribute. dir(dualad) lists what an eager import listed.
__getattr__, __dir__ = _attach(__name__, attributes={
    "custom_root": "dualad.transforms.implicit",
    "custom_linear_solve": "dualad.transforms.implicit",
    "trace": "dualad.teaching.evaltrace",
    # JAX's spellings of the planner's functions (the same objects as dualad.jacobians')
    "jacobian": "dualad.jacobians", "jacfwd": "dualad.jacobians", "jacrev": "dualad.jacobians",
    "hessian": "dualad.jacobians"},
    listed=PUBLIC_MODULES, hidden=INTERNAL)

# What ``help(dualad)`` lists and ``from dualad import *`` gives: the user-facing functions,
# classes and errors. The extension surface (Primitive, REGISTRY, sample, Dual, Var) stays
# importable from here but is documented, and listed, in dualad.extend.
__all__ = [
    # functional transformations
    "grad", "value_and_grad", "jvp", "vjp", "hvp", "derivative", "vmap", "jit",
    # Jacobians and Hessians (dualad.jacobians', by JAX's names)
    "jacobian", "jacfwd", "jacrev", "hessian",
    # Taylor mode
    "jet", "taylor",
    # differential operators (batched Taylor sweeps)
    "laplacian", "hessian_diagonal", "hessian_trace", "biharmonic",
    # loops, memory, implicit differentiation
    "scan", "while_loop", "checkpoint", "remat_plan", "RematWarning", "custom_root",
    "custom_linear_solve", "stop_gradient",
    # TensorFlow's tape
    "GradientTape",
    # custom rules
    "primitive", "Function", "custom_jvp", "custom_vjp",
    # debugging, teaching, allocator
    "detect_anomaly", "trace", "keep_heap",
    # errors and warnings users meet
    "AnomalyError", "EscapedTracerError", "JitRetraceWarning", "JitFallbackWarning",
]
