"""The planner: dense and sparse Jacobians and Hessians, and the choice of mode.

Whole Jacobians and Hessians in batched sweeps (never one sweep per basis vector), the
sparse ones compressed by a coloring, and the choice between them made from a census
of the function (``docs/planner.md``)::

    jacobian(f, x, mode="auto")        J, shape out.shape + in.shape (batched sweeps)
    jacfwd / jacrev                    the two fixed modes
    hessian(f, x), hvp(f, x, v)        forward-over-reverse by default, exactly symmetric
    sparse_jacobian / sparse_hessian   detected sparsity, coloring, compressed sweeps
    plan(f, x).explain()               the chosen mode, why, and the cost of each alternative
    executor=pool_or_dask_client       each chunk of a sweep one task on the workers
                                       (jacobians.distributed; DistributedSweepError)
    progress=True or callable          a bar, or a ProgressRecord after each chunk
                                       (jacobians.progress; docs/logging.md)
"""

# The repository's jacobians/ folder, imported from a checkout as a package of its own,
# would be a second copy of dualad.jacobians: refused.
if __name__ != "dualad.jacobians":
    raise ImportError(
        f"this is dualad's planner, installed as dualad.jacobians: "
        f"write `from dualad import jacobians` (or `import dualad.jacobians`), not `import jacobians` (imported here as {__name__!r})")

from .dense import jacobian, jacfwd, jacrev  # noqa: F401
from .hessian import hessian, hvp  # noqa: F401
from .sparse import sparse_jacobian, sparse_hessian  # noqa: F401
from .sparsity import jacobian_sparsity, hessian_sparsity  # noqa: F401
from .coloring import column_coloring, row_coloring, star_coloring  # noqa: F401
from .plan import plan, Plan  # noqa: F401
from . import nested  # noqa: F401  (the traced paths: jacobians inside transformations)
from .distributed import DistributedSweepError  # noqa: F401
from .progress import ProgressRecord  # noqa: F401
from .memory import DenseTooLarge  # noqa: F401
from ._common import TracedOutput  # noqa: F401

__all__ = ["jacobian", "jacfwd", "jacrev", "hessian", "hvp", "sparse_jacobian", "sparse_hessian",
           "jacobian_sparsity", "hessian_sparsity", "column_coloring", "row_coloring",
           "star_coloring", "plan", "Plan", "DistributedSweepError", "DenseTooLarge",
           "TracedOutput", "ProgressRecord"]
