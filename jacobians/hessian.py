"""Dense Hessians of scalar functions: ``hessian`` and ``hvp``.

The four compositions of the two modes (:mod:`jacobians.hessian_sweeps`) give rows
``V H`` of ``H = ∇²f`` for a chunk ``V`` of directions, each ceil(n / B) sweeps:
forward-over-reverse (one vector-mode JVP through the gradient's reverse sweep),
reverse-over-reverse, reverse-over-forward and forward-over-forward (n² work). The
result is made exactly symmetric, ``H ← (H + Hᵀ) / 2`` (rounding differs between
``∂²f/∂x_i∂x_j`` and ``∂²f/∂x_j∂x_i``). ``mode="auto"`` is forward-over-reverse (the
forward sweep rides on one reverse sweep, so each chunk costs a small multiple of one
gradient, with no second-order tape), or, when the modelled dense cost makes a pattern
detection worth it and a star or acyclic coloring needs far fewer directions than n,
the same sweeps compressed by the coloring and decompressed into the dense result
(:mod:`jacobians.auto`). A dense Hessian over ``max_memory`` bytes is refused, naming
``sparse_hessian`` (:mod:`jacobians.memory`).
"""
from __future__ import annotations

__all__ = ["hessian", "hvp"]

from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

import dualad
from dualad.extend import Box, shape_of

from ._common import DEFAULT_MAX_MEMORY, composes, fname
from .auto import hessian_auto
from .hessian_sweeps import (HESSIAN_MODES, _grad_of, check_hessian_mode,  # noqa: F401
                             check_real_inputs, hessian_chunk, hessian_rows, scalar_problem,
                             structured_square)
from .distributed import Workers
from .progress import check_progress
from .budget import hessian_chunk_within, hessian_within
from .memory import refuse_dense, symmetrize
from .sweeps import result_dtype

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ._common import ArrayIn, ArrayOut, Container


@overload
def hessian(f: Callable[..., ArrayOut], x: ArrayIn, /, *args: Any,
            mode: str = "auto", argnums: Literal[0] = 0, chunk_size: int | None = None,
            max_memory: int = ..., executor: Any = None,
            retries: int = 2,
            has_aux: bool = False, holomorphic: bool = False,
            progress: Any = None) -> np.ndarray[Any, Any]: ...
@overload
def hessian(f: Callable[..., Any], /, *, mode: str = "auto", argnums: int | Sequence[int] = 0,
            chunk_size: int | None = None, max_memory: int = ...,
            executor: Any = None, retries: int = 2,
            has_aux: bool = False, holomorphic: bool = False,
            progress: Any = None) -> Callable[..., Any]: ...
@overload
def hessian(f: Callable[..., Any], x: Container, /, *args: Any, mode: str = "auto",
            argnums: int | Sequence[int] = 0, chunk_size: int | None = None, max_memory: int = ...,
            executor: Any = None, retries: int = 2,
            has_aux: bool = False, holomorphic: bool = False, progress: Any = None) -> Any: ...
@overload
def hessian(f: Callable[..., Container], x: ArrayIn, /, *args: Any, mode: str = "auto",
            argnums: int | Sequence[int] = 0, chunk_size: int | None = None, max_memory: int = ...,
            executor: Any = None, retries: int = 2,
            has_aux: bool = False, holomorphic: bool = False, progress: Any = None) -> Any: ...
@overload
def hessian(f: Callable[..., Any], x: ArrayIn, /, *args: Any, mode: str = "auto",
            argnums: int | Sequence[int], chunk_size: int | None = None, max_memory: int = ...,
            executor: Any = None, retries: int = 2,
            has_aux: bool = False, holomorphic: bool = False, progress: Any = None) -> Any: ...
@composes("hessian")
def hessian(f: Callable[..., Any], *args: Any, mode: str = "auto",
            argnums: int | Sequence[int] = 0, chunk_size: int | None = None,
            max_memory: int = DEFAULT_MAX_MEMORY, executor: Any = None, retries: int = 2,
            has_aux: bool = False, holomorphic: bool = False, progress: Any = None) -> Any:
    r"""The Hessian of scalar ``f`` at ``args``: shape ``in.shape + in.shape``, exactly symmetric.

    The Hessian :math:`H = \nabla^2 f(x)` is assembled from Hessian-vector products
    :math:`H V` for chunks ``V`` of one-hot directions, by one of the four compositions of
    the two modes: forward-over-reverse (a vector-mode JVP through the gradient's reverse
    sweep: each chunk costs a small multiple of one gradient, no second-order tape),
    reverse-over-reverse (a pullback of the recorded gradient), reverse-over-forward
    (the gradient of a JVP) or forward-over-forward (:math:`n^2` work). The result is made
    exactly symmetric, :math:`H \leftarrow (H + H^\top)/2`, since rounding differs between
    :math:`\partial^2 f/\partial x_i \partial x_j` and
    :math:`\partial^2 f/\partial x_j \partial x_i`. ``mode="auto"`` is
    forward-over-reverse, or, when the modelled dense cost makes a pattern detection worth
    it and a star or acyclic coloring (:func:`sparse_hessian`) needs far fewer directions
    than ``n``, the same sweeps compressed by the coloring and decompressed into the dense
    result.

    Parameters
    ----------
    f : callable
        The scalar function, ``f(*args)`` returning a 0-d value (or a size-1 array).
    *args : array_like or container of array_like
        The point. Without ``args``, the function ``x ↦ H(x)`` is returned.
    mode : str, optional
        ``"auto"`` (default), ``"forward-over-reverse"``, ``"reverse-over-reverse"``,
        ``"reverse-over-forward"`` or ``"forward-over-forward"`` (also ``"fwd-rev"``,
        ``"rev-rev"``, ``"rev-fwd"``, ``"fwd-fwd"``).
    argnums : int or tuple of int, optional
        Which positional arguments are differentiated (default 0); a tuple gives the
        blocks ``H[i][j]`` of the joint Hessian.
    chunk_size : int, optional
        Directions per sweep (default: as many as fit in ``max_memory``).
    max_memory : int, optional
        Bytes for the whole call (default 256 MiB; docs/memory.md) in modes ``"auto"``
        and ``"forward-over-reverse"``: the result, the gradient's tape with each
        direction's tangents, the constants its recording copies. When not even one
        direction fits, the rows come by reverse over forward under a
        :func:`dualad.remat_plan` schedule (the result is the store-all one). Other
        modes: one sweep's tangents and the dense result.
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Each chunk of Hessian rows becomes one task on the workers.
    retries : int, optional
        Resubmissions of a chunk lost with its worker (default 2).
    has_aux : bool, optional
        ``f`` returns ``(out, aux)``: the result is ``(J, aux)``, the derivative of
        ``out`` and ``aux`` as ``f`` returned it (not differentiated; ``f`` runs once
        more, at the point, for it). JAX's keyword.
    holomorphic : bool, optional
        The differentiated arguments must be complex (a TypeError otherwise); the result
        is the complex derivative. dualad differentiates complex code holomorphically
        either way (docs/complex.md): JAX's keyword, kept for its check.
    progress : bool or callable, optional
        ``True``: a tqdm bar per sweep on stderr (a line of text without tqdm); a
        callable: called with a :class:`~jacobians.progress.ProgressRecord` after each
        chunk (see :func:`jacobian`). Default None: nothing.

    Returns
    -------
    numpy.ndarray or container or callable
        ``H`` of shape ``in.shape + in.shape`` (nested blocks for several arguments), or
        the curried function without ``args``.

    Raises
    ------
    dualad.jacobians.memory.DenseTooLarge
        The dense Hessian needs more than ``max_memory`` bytes (use
        :func:`sparse_hessian`).
    ValueError
        An unknown ``mode``, or ``f`` does not return a scalar.

    See Also
    --------
    hvp : One Hessian-vector product, without the matrix.
    sparse_hessian : Only the structural nonzeros, as a SciPy CSR matrix.
    dualad.hessian : The plain function transformation.

    Notes
    -----
    Forward-over-reverse is the usual choice for Hessians [1]_: the forward sweep rides on
    the reverse one, so ``n`` products cost about ``n / chunk_size`` gradient sweeps.

    References
    ----------
    .. [1] A. Griewank and A. Walther, *Evaluating Derivatives*, 2nd ed., SIAM, 2008,
       chapter 5 (second-order adjoints).

    Examples
    --------
    >>> from dualad import jacobians
    >>> def f(x):
    ...     return x[0] ** 2 * x[1] + np.sin(x[1])
    >>> print(jacobians.hessian(f, np.array([1.0, 0.0])))
    [[0. 2.]
     [2. 0.]]
    >>> H = jacobians.hessian(f, mode="reverse-over-reverse")
    >>> print(np.round(H(np.array([2.0, np.pi / 2])), 6))
    [[ 3.141593  4.      ]
     [ 4.       -1.      ]]
    """
    mode = check_hessian_mode(mode)
    progress = check_progress("hessian", f, progress)
    if not args:
        def hess_f(*a):
            return hessian(f, *a, mode=mode, argnums=argnums, chunk_size=chunk_size,
                           max_memory=max_memory, executor=executor, retries=retries,
                           progress=progress)
        hess_f.__name__ = f"hessian({fname(f)})"
        return hess_f
    workers = None if executor is None else Workers("hessian", executor, retries,
                                                    chunk_size is not None)
    problem = scalar_problem("hessian", f, args, argnums)
    check_real_inputs(problem)
    problem.executor, problem.progress = workers, progress
    refuse_dense("hessian", problem, max_memory, result_dtype(problem), "hessian")
    if workers is None and mode == "auto" and chunk_size is None:
        chunk = hessian_chunk_within(problem, max_memory)    # the whole call's bytes
        if chunk:
            return structured_square(problem, hessian_auto(problem, chunk, max_memory))
        mode = "forward-over-reverse"        # the tape does not fit: a remat schedule
    if workers is None and mode == "forward-over-reverse":
        return structured_square(problem, hessian_within(problem, chunk_size, max_memory))
    if mode == "auto":
        return structured_square(problem, hessian_auto(problem, chunk_size, max_memory))
    chunk = hessian_chunk(problem, mode, chunk_size, max_memory)
    # Rows of H/2 (seeds scaled by ½, exact in floating point), so one pass gives the
    # exactly symmetric (H + Hᵀ)/2.
    h = hessian_rows(problem, mode, None, chunk, scale=0.5)
    return structured_square(problem, symmetrize(h if h.flags.writeable else np.array(h)))


@overload
def hvp(f: Callable[..., Any], x: np.ndarray[Any, Any], v: Any, /, *args: Any,
        argnums: Literal[0] = 0) -> np.ndarray[Any, Any]: ...
@overload
def hvp(f: Callable[..., Any], /) -> Callable[..., Any]: ...
@overload
def hvp(f: Callable[..., Any], /, *args: Any, argnums: int | Sequence[int] = 0) -> Any: ...
@composes("hvp", curry=True)
def hvp(f: Callable[..., Any], x: Any, v: Any, *args: Any,
        argnums: int | Sequence[int] = 0) -> Any:
    r"""The Hessian-vector product :math:`\nabla^2 f(x)\, v` by forward-over-reverse.

    One JVP (tangent ``v``) through one gradient sweep of scalar ``f``: a small multiple of
    the cost of the gradient, without forming the Hessian. A batch of ``B`` vectors, ``v``
    of shape ``(B, *x.shape)``, goes through in one vector-mode sweep. ``hvp(f)`` returns the
    function ``(x, v, *args) ↦ H v``.

    Parameters
    ----------
    f : callable
        The scalar function, ``f(x, *args)`` (or with ``x`` at position ``argnums``).
        Without ``x`` and ``v``, the curried function is returned.
    x : array_like
        The point.
    v : array_like
        The vector, shape ``x.shape``, or ``(B, *x.shape)`` for ``B`` products at once.
    *args : object
        Further positional arguments of ``f``, not differentiated.
    argnums : int, optional
        The position of ``x`` among ``f``'s arguments (default 0).

    Returns
    -------
    numpy.ndarray
        :math:`H v`, of ``v``'s shape.

    Raises
    ------
    ValueError
        ``v`` has neither shape ``x.shape`` nor ``(B, *x.shape)``, or ``f`` is not scalar.
    TypeError
        ``x`` is a container (use :func:`hessian`).

    See Also
    --------
    hessian : The whole matrix.
    dualad.hvp : The same product as a function transformation.

    Examples
    --------
    >>> from dualad import jacobians
    >>> def f(x):
    ...     return np.sum(x ** 3)
    >>> x = np.array([1.0, 2.0])
    >>> print(jacobians.hvp(f, x, np.array([1.0, 1.0])))
    [ 6. 12.]
    >>> print(jacobians.hvp(f, x, np.eye(2)))        # two products in one sweep
    [[ 6.  0.]
     [ 0. 12.]]
    """
    call_args = list(args)
    call_args.insert(int(argnums), x)
    problem = scalar_problem("hvp", f, call_args, int(argnums))
    v = v if isinstance(v, Box) else np.asarray(v)
    xs = problem.in_shapes[0]
    if len(problem.leaves) != 1:
        raise TypeError(f"hvp({problem.name}): x must be one array, got a container of "
                        f"{len(problem.leaves)}; for containers use jacobians.hessian")
    if shape_of(v) != tuple(xs) and shape_of(v)[1:] != tuple(xs):
        raise ValueError(f"hvp({problem.name}): v has shape {v.shape}, but x has shape "
                         f"{tuple(xs)}; v must have shape {tuple(xs)} or (B, *{tuple(xs)})")
    return dualad.jvp(_grad_of(problem), problem.primals(), (v,), lazy=True)[1][0]
