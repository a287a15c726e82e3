"""Dense Jacobians in batched sweeps: ``jacobian``, ``jacfwd``, ``jacrev``.

For ``F: R^n -> R^m`` with Jacobian ``J`` (m x n), ``forward`` is ceil(n / B) vector-mode
JVPs of B columns of the identity each, ``reverse`` one tape swept back ceil(m / B) times
with B rows of the identity as cotangents (:mod:`jacobians.sweeps`): never one sweep per
basis vector. The chunk size B is ``chunk_size`` or the largest that keeps one sweep's
tangents within ``max_memory`` bytes (from a census of the function: see
:mod:`jacobians.cost`). ``mode="auto"`` (:mod:`jacobians.auto`) weighs those two and,
where the modelled dense cost makes a pattern detection worth it, the compressed sweeps
of a coloring decompressed into the same dense result. A dense result larger than
``max_memory`` bytes is refused before anything is allocated, naming ``sparse_jacobian``
(:mod:`jacobians.memory`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, overload

__all__ = ["jacobian_flat", "jacobian", "jacfwd", "jacrev"]

from ._common import DEFAULT_MAX_MEMORY, Problem, composes, fname
from .auto import fixed_chunk, jacobian_auto
from .budget import jacobian_within
from .distributed import Workers, attach
from .progress import check_progress
from .sweeps import (MODES, check_mode, chunk_for, forward_flat, get_census,  # noqa: F401
                     reverse_flat, signature)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import numpy as np

    from ._common import ArrayIn, ArrayOut, Container

    Mode = Literal["auto", "forward", "reverse", "mixed"]


def jacobian_flat(problem, mode, chunk_size=None, max_memory=DEFAULT_MAX_MEMORY):
    """The flat dense Jacobian (m x n) of ``problem`` in ``mode``."""
    if mode in ("auto", "mixed"):
        return jacobian_auto(problem, chunk_size, max_memory, mode=mode)
    if problem.executor is None:
        return jacobian_within(problem, mode, chunk_size, max_memory)
    chunk = fixed_chunk(problem, mode, chunk_size, max_memory)
    return (forward_flat if mode == "forward" else reverse_flat)(problem, chunk,
                                                                 max_memory=max_memory)


# --- the public functions ---------------------------------------------------------------------
def _curried(api, f, kwargs, run):
    def jac_f(*args):
        return run(f, *args, **kwargs)
    jac_f.__name__ = f"{api}({fname(f)})"
    return jac_f


@overload
def jacobian(f: Callable[..., ArrayOut], x: ArrayIn, /, *args: Any,
             mode: Mode = "auto", argnums: Literal[0] = 0, chunk_size: int | None = None,
             max_memory: int = ..., executor: Any = None,
             retries: int = 2,
             has_aux: bool = False, holomorphic: bool = False,
             progress: Any = None) -> np.ndarray[Any, Any]: ...
@overload
def jacobian(f: Callable[..., Any], /, *, mode: Mode = "auto", argnums: int | Sequence[int] = 0,
             chunk_size: int | None = None, max_memory: int = ...,
             executor: Any = None, retries: int = 2,
             has_aux: bool = False, holomorphic: bool = False,
             progress: Any = None) -> Callable[..., Any]: ...
@overload
def jacobian(f: Callable[..., Any], x: Container, /, *args: Any, mode: Mode = "auto",
             argnums: int | Sequence[int] = 0, chunk_size: int | None = None, max_memory: int = ...,
             executor: Any = None, retries: int = 2,
             has_aux: bool = False, holomorphic: bool = False, progress: Any = None) -> Any: ...
@overload
def jacobian(f: Callable[..., Container], x: ArrayIn, /, *args: Any, mode: Mode = "auto",
             argnums: int | Sequence[int] = 0, chunk_size: int | None = None, max_memory: int = ...,
             executor: Any = None, retries: int = 2,
             has_aux: bool = False, holomorphic: bool = False, progress: Any = None) -> Any: ...
@overload
def jacobian(f: Callable[..., Any], x: ArrayIn, /, *args: Any, mode: Mode = "auto",
             argnums: int | Sequence[int], chunk_size: int | None = None, max_memory: int = ...,
             executor: Any = None, retries: int = 2,
             has_aux: bool = False, holomorphic: bool = False, progress: Any = None) -> Any: ...
@composes("jacobian")
def jacobian(f: Callable[..., Any], *args: Any, mode: Mode = "auto",
             argnums: int | Sequence[int] = 0, chunk_size: int | None = None,
             max_memory: int = DEFAULT_MAX_MEMORY, executor: Any = None, retries: int = 2,
             has_aux: bool = False, holomorphic: bool = False, progress: Any = None) -> Any:
    r"""The Jacobian of ``f`` at ``args``, of shape ``out.shape + in.shape``.

    For :math:`F: \mathbb{R}^n \to \mathbb{R}^m` (the differentiated arguments and the
    outputs seen as flat vectors) the Jacobian :math:`J_f(x)` is assembled column by
    column from forward sweeps :math:`J e_j` (``n`` directions) or row by row from
    reverse sweeps :math:`e_i^\top J` (``m`` cotangents), never one sweep per basis
    vector: each sweep pushes a chunk of ``chunk_size`` directions at once (vector-mode
    JVPs, or batched pullbacks of one recorded tape). ``mode="auto"`` lets the planner
    choose from a census of ``f``: the cheaper of the two dense modes by its cost model
    and, where the modelled cost makes a pattern detection worth it, the compressed
    sweeps of a sparse coloring decompressed into the same dense result (see
    :func:`plan` and ``docs/planner.md``).

    Parameters
    ----------
    f : callable
        The function, ``f(*args)``, returning an array or a container (tuple, list,
        dict) of arrays.
    *args : array_like or container of array_like
        The point. Without ``args``, ``jacobian(f, ...)`` returns the function
        ``x ↦ J(x)`` (curried).
    mode : {"auto", "forward", "reverse", "mixed"}, optional
        ``"forward"``: ``n`` one-hot tangents through vector-mode JVPs;
        ``"reverse"``: ``m`` one-hot cotangents through batched pullbacks of one tape;
        ``"mixed"``: ``J_g J_h`` through a narrow cut ``f = g ∘ h`` of the program, or a
        chain of cuts (docs/mixed.md), refused with the reason when there is none;
        ``"auto"`` (default): the planner's choice, as described above (mixed mode
        included when the model says it pays).
    argnums : int or tuple of int, optional
        Which positional arguments are differentiated (default 0). A tuple gives one
        block per argument.
    chunk_size : int, optional
        Directions per sweep. Default: as many as keep one sweep's tangents (or
        cotangents) within ``max_memory`` bytes.
    max_memory : int, optional
        Bytes for the whole call (default 256 MiB): with ``mode="forward"`` or
        ``"reverse"``, the result, the tape and every sweep's tangents or cotangents are
        counted (docs/memory.md); with ``"auto"``, the dense result and one sweep's
        directions. A larger result is refused before anything is allocated.
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Each chunk of directions becomes one task on the executor's workers; the
        census, the planning and the assembly stay in the calling process. The result
        equals the local call's with the same ``chunk_size`` bitwise.
    retries : int, optional
        How many times a chunk lost to the infrastructure (a dead worker) is resubmitted
        (default 2). Errors raised by ``f`` itself are not retried.
    has_aux : bool, optional
        ``f`` returns ``(out, aux)``: the result is ``(J, aux)``, the derivative of
        ``out`` and ``aux`` as ``f`` returned it (not differentiated; ``f`` runs once
        more, at the point, for it). JAX's keyword.
    holomorphic : bool, optional
        The differentiated arguments must be complex (a TypeError otherwise); the result
        is the complex derivative. dualad differentiates complex code holomorphically
        either way (docs/complex.md): JAX's keyword, kept for its check.
    progress : bool or callable, optional
        Report each sweep's chunks as they finish (:mod:`jacobians.progress`,
        docs/logging.md). ``True``: a tqdm bar on stderr (``pip install
        "dualad[progress]"``; without tqdm, one line of text rewritten in place). A
        callable: called on the calling thread with a
        :class:`~jacobians.progress.ProgressRecord` ``(sweep, done, total, elapsed,
        remaining)`` after each chunk; what it raises stops the call. Default None:
        nothing (inside a transformation, where nothing is chunked, it is ignored).

    Returns
    -------
    numpy.ndarray or container or callable
        ``J`` with shape ``out.shape + in.shape``. Several differentiated arguments or
        container inputs/outputs give nested results: outputs, then arguments, then
        leaves. Without ``args``, the function ``x ↦ J(x)``.

    Raises
    ------
    dualad.jacobians.memory.DenseTooLarge
        The dense Jacobian needs more than ``max_memory`` bytes (a ``ValueError``; the
        message names :func:`sparse_jacobian` and the ``max_memory`` that would do).
    ValueError
        An unknown ``mode``, an empty or out-of-range ``argnums``.
    DistributedSweepError
        Under ``executor=``: ``f`` raised in a task, or chunks were lost more than
        ``retries`` times.

    See Also
    --------
    jacfwd, jacrev : The two fixed modes.
    sparse_jacobian : Only the structural nonzeros, as a SciPy CSR matrix.
    plan : Prepare once, evaluate at many points, and explain the choice.
    dualad.jvp, dualad.vjp : One Jacobian-vector or vector-Jacobian product.

    Notes
    -----
    Forward mode costs about ``n / chunk_size`` sweeps of a small multiple of one
    evaluation of ``f``, reverse mode one recording plus ``m / chunk_size`` pullbacks, so
    wide functions (:math:`m \ll n`) favour reverse and tall ones forward
    [1]_. Inside a transformation (``dualad.grad``, ``jit``, ``vmap``, ...) the result
    is traced and differentiable again.

    References
    ----------
    .. [1] A. Griewank and A. Walther, *Evaluating Derivatives: Principles and
       Techniques of Algorithmic Differentiation*, 2nd ed., SIAM, 2008, chapters 3-4.

    Examples
    --------
    >>> from dualad import jacobians
    >>> def f(x):
    ...     return np.stack([x[0] * x[1], np.sin(x[2])])
    >>> x = np.array([1.0, 2.0, 0.0])
    >>> print(jacobians.jacobian(f, x))
    [[2. 1. 0.]
     [0. 0. 1.]]
    >>> print(jacobians.jacobian(f, x, mode="reverse", chunk_size=1))
    [[2. 1. 0.]
     [0. 0. 1.]]

    With several arguments, one block per argument:

    >>> dfa, dfb = jacobians.jacobian(lambda a, b: a * b, np.ones(2), np.array([2.0, 3.0]),
    ...                               argnums=(0, 1))
    >>> print(dfa)
    [[2. 0.]
     [0. 3.]]

    Curried, and composed with itself for the Hessian:

    >>> J = jacobians.jacobian(lambda x: x ** 3)
    >>> print(jacobians.jacobian(lambda x: np.diagonal(J(x)))(np.array([1.0, 2.0])))
    [[ 6.  0.]
     [ 0. 12.]]
    """
    mode = check_mode("jacobian", mode, MODES + ("mixed",))
    if not args:
        return _curried("jacobian", f, dict(mode=mode, argnums=argnums, chunk_size=chunk_size,
                                            max_memory=max_memory, executor=executor,
                                            retries=retries, progress=progress), jacobian)
    problem = attach("jacobian", Problem("jacobian", f, args, argnums), executor, retries,
                     chunk_size)
    problem.progress = check_progress("jacobian", f, progress)
    return problem.structured(jacobian_flat(problem, mode, chunk_size, max_memory))


def _in_mode(api, mode, f, args, argnums, chunk_size, max_memory, executor, retries,
             progress=None):
    """``jacobian(f, *args, mode=mode)`` called as ``api`` (jacfwd, jacrev): curried
    without ``args``, and errors name ``api``, not the jacobian it calls."""
    if not args:
        return _curried(api, f, dict(argnums=argnums, chunk_size=chunk_size,
                                     max_memory=max_memory, executor=executor,
                                     retries=retries, progress=progress),
                        jacfwd if mode == "forward" else jacrev)
    if executor is not None:
        Workers(api, executor, retries)       # misuse named as api, not jacobian
    check_progress(api, f, progress)
    return jacobian(f, *args, mode=mode, argnums=argnums, chunk_size=chunk_size,
                    max_memory=max_memory, executor=executor, retries=retries,
                    progress=progress)


@overload
def jacfwd(f: Callable[..., ArrayOut], x: ArrayIn, /, *args: Any,
           argnums: Literal[0] = 0, chunk_size: int | None = None,
           max_memory: int = ..., executor: Any = None,
           retries: int = 2,
           has_aux: bool = False, holomorphic: bool = False,
           progress: Any = None) -> np.ndarray[Any, Any]: ...
@overload
def jacfwd(f: Callable[..., Any], /, *, argnums: int | Sequence[int] = 0,
           chunk_size: int | None = None, max_memory: int = ...,
           executor: Any = None, retries: int = 2,
           has_aux: bool = False, holomorphic: bool = False,
           progress: Any = None) -> Callable[..., Any]: ...
@overload
def jacfwd(f: Callable[..., Any], x: Container, /, *args: Any,
           argnums: int | Sequence[int] = 0, chunk_size: int | None = None, max_memory: int = ...,
           executor: Any = None, retries: int = 2,
           has_aux: bool = False, holomorphic: bool = False, progress: Any = None) -> Any: ...
@overload
def jacfwd(f: Callable[..., Container], x: ArrayIn, /, *args: Any,
           argnums: int | Sequence[int] = 0, chunk_size: int | None = None, max_memory: int = ...,
           executor: Any = None, retries: int = 2,
           has_aux: bool = False, holomorphic: bool = False, progress: Any = None) -> Any: ...
@overload
def jacfwd(f: Callable[..., Any], x: ArrayIn, /, *args: Any,
           argnums: int | Sequence[int], chunk_size: int | None = None, max_memory: int = ...,
           executor: Any = None, retries: int = 2,
           has_aux: bool = False, holomorphic: bool = False, progress: Any = None) -> Any: ...
@composes("jacfwd")
def jacfwd(f: Callable[..., Any], *args: Any, argnums: int | Sequence[int] = 0,
           chunk_size: int | None = None, max_memory: int = DEFAULT_MAX_MEMORY,
           executor: Any = None, retries: int = 2,
           has_aux: bool = False, holomorphic: bool = False, progress: Any = None) -> Any:
    r"""The Jacobian in forward mode: batched JVPs, one column per direction.

    ``jacobian(f, *args, mode="forward")``: the columns :math:`J e_j` of the Jacobian
    are pushed forward ``chunk_size`` at a time through vector-mode JVPs, about
    ``n / chunk_size`` sweeps of a small multiple of one evaluation of ``f`` each. The
    cheaper mode when the differentiated input has fewer elements than the output.

    Parameters
    ----------
    f : callable
        The function, ``f(*args)``, returning an array or a container of arrays.
    *args : array_like or container of array_like
        The point. Without ``args``, the function ``x ↦ J(x)`` is returned.
    argnums : int or tuple of int, optional
        Which positional arguments are differentiated (default 0).
    chunk_size : int, optional
        Tangent directions per sweep (default: as many as fit in ``max_memory``).
    max_memory : int, optional
        Bytes for the whole call: the result, one evaluation's live values and each
        direction's tangents (default 256 MiB; docs/memory.md). Too small for one
        direction: a ``ValueError`` naming the least that would do.
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Each chunk of columns becomes one task on the workers (see :func:`jacobian`).
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
        ``J`` of shape ``out.shape + in.shape`` (nested for several arguments or
        containers), or the curried function without ``args``.

    Raises
    ------
    dualad.jacobians.memory.DenseTooLarge
        The dense Jacobian needs more than ``max_memory`` bytes.
    DistributedSweepError
        Under ``executor=``: ``f`` raised in a task, or chunks were lost too often.

    See Also
    --------
    jacobian : The same with the mode chosen by the planner.
    jacrev : Reverse mode, one row per cotangent.

    Examples
    --------
    >>> from dualad import jacobians
    >>> print(jacobians.jacfwd(np.sin, np.array([0.0, np.pi])))
    [[ 1.  0.]
     [ 0. -1.]]
    >>> print(jacobians.jacfwd(lambda x: np.outer(x, x))(np.array([1.0, 2.0])).shape)
    (2, 2, 2)
    """
    return _in_mode("jacfwd", "forward", f, args, argnums, chunk_size, max_memory, executor,
                    retries, progress)


@overload
def jacrev(f: Callable[..., ArrayOut], x: ArrayIn, /, *args: Any,
           argnums: Literal[0] = 0, chunk_size: int | None = None,
           max_memory: int = ..., executor: Any = None,
           retries: int = 2,
           has_aux: bool = False, holomorphic: bool = False,
           progress: Any = None) -> np.ndarray[Any, Any]: ...
@overload
def jacrev(f: Callable[..., Any], /, *, argnums: int | Sequence[int] = 0,
           chunk_size: int | None = None, max_memory: int = ...,
           executor: Any = None, retries: int = 2,
           has_aux: bool = False, holomorphic: bool = False,
           progress: Any = None) -> Callable[..., Any]: ...
@overload
def jacrev(f: Callable[..., Any], x: Container, /, *args: Any,
           argnums: int | Sequence[int] = 0, chunk_size: int | None = None, max_memory: int = ...,
           executor: Any = None, retries: int = 2,
           has_aux: bool = False, holomorphic: bool = False, progress: Any = None) -> Any: ...
@overload
def jacrev(f: Callable[..., Container], x: ArrayIn, /, *args: Any,
           argnums: int | Sequence[int] = 0, chunk_size: int | None = None, max_memory: int = ...,
           executor: Any = None, retries: int = 2,
           has_aux: bool = False, holomorphic: bool = False, progress: Any = None) -> Any: ...
@overload
def jacrev(f: Callable[..., Any], x: ArrayIn, /, *args: Any,
           argnums: int | Sequence[int], chunk_size: int | None = None, max_memory: int = ...,
           executor: Any = None, retries: int = 2,
           has_aux: bool = False, holomorphic: bool = False, progress: Any = None) -> Any: ...
@composes("jacrev")
def jacrev(f: Callable[..., Any], *args: Any, argnums: int | Sequence[int] = 0,
           chunk_size: int | None = None, max_memory: int = DEFAULT_MAX_MEMORY,
           executor: Any = None, retries: int = 2,
           has_aux: bool = False, holomorphic: bool = False, progress: Any = None) -> Any:
    r"""The Jacobian in reverse mode: batched pullbacks of one tape, one row per cotangent.

    ``jacobian(f, *args, mode="reverse")``: ``f`` is recorded once and the rows
    :math:`e_i^\top J` are pulled back ``chunk_size`` cotangents at a time, about
    ``m / chunk_size`` sweeps. The cheaper mode when the output has fewer elements than
    the differentiated input (a gradient is the case ``m = 1``).

    Parameters
    ----------
    f : callable
        The function, ``f(*args)``, returning an array or a container of arrays.
    *args : array_like or container of array_like
        The point. Without ``args``, the function ``x ↦ J(x)`` is returned.
    argnums : int or tuple of int, optional
        Which positional arguments are differentiated (default 0).
    chunk_size : int, optional
        Cotangents per sweep (default: as many as fit in ``max_memory``).
    max_memory : int, optional
        Bytes for the whole call: the result, the tape, the constants its recording
        copies and each direction's cotangents (default 256 MiB; docs/memory.md). When
        the tape does not fit, the sweeps follow a :func:`dualad.remat_plan` schedule
        (``dualad.vjp(f, x, max_memory=...)``; the result is the store-all one).
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Each chunk of rows becomes one task on the workers, each recording its own tape
        (see :func:`jacobian`).
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
        ``J`` of shape ``out.shape + in.shape`` (nested for several arguments or
        containers), or the curried function without ``args``.

    Raises
    ------
    dualad.jacobians.memory.DenseTooLarge
        The dense Jacobian needs more than ``max_memory`` bytes.
    DistributedSweepError
        Under ``executor=``: ``f`` raised in a task, or chunks were lost too often.

    See Also
    --------
    jacobian : The same with the mode chosen by the planner.
    jacfwd : Forward mode, one column per direction.

    Examples
    --------
    >>> from dualad import jacobians
    >>> def f(x):
    ...     return np.array([np.sum(x ** 2), np.prod(x)])
    >>> print(jacobians.jacrev(f, np.array([1.0, 2.0, 3.0])))
    [[2. 4. 6.]
     [6. 3. 2.]]
    """
    return _in_mode("jacrev", "reverse", f, args, argnums, chunk_size, max_memory, executor,
                    retries, progress)
