"""autograd.test_util on top of dualad.verification.check_grads.

autograd's check_grads(f, modes, order)(*args) checks f's derivatives in its arguments
against finite differences; here each checked argument (an array, or a container of
arrays: autograd's vspaces) is flattened into one real or complex vector, which
dualad.verification.check_grads checks in both modes to the same order."""
import itertools

import numpy as np

import dualad.numpy as dnp
from dualad.core.tree import flatten
from dualad.verification import check_grads as _check_grads


def _as_vector(arg):
    """(flat vector, rebuild) for an array or a container of arrays."""
    leaves, rebuild = flatten(arg)
    arrays = [np.asarray(leaf) for leaf in leaves]
    complex_ = any(np.iscomplexobj(a) for a in arrays)
    dtype = complex if complex_ else float
    flat = (np.concatenate([a.astype(dtype).ravel() for a in arrays]) if arrays
            else np.zeros(0))
    shapes = [a.shape for a in arrays]
    scalars = [np.ndim(leaf) == 0 and not isinstance(leaf, np.ndarray) for leaf in leaves]

    def unflatten(v):
        out, start = [], 0
        for shape, scalar in zip(shapes, scalars):
            size = int(np.prod(shape))
            piece = dnp.reshape(v[start:start + size], shape)
            out.append(piece if not scalar or shape else dnp.reshape(piece, ()))
            start += size
        return rebuild(out)
    if len(leaves) == 1 and leaves[0] is arg:    # a plain array: no rebuilding needed
        return np.asarray(arg, dtype=dtype), lambda v: v
    return flat, unflatten


def check_grads(f, argnum=0, modes=("fwd", "rev"), order=2):
    from ._jit import ON, replayed
    if ON:        # --jit: check jit(f), i.e. grad(jit(f)), jvp(jit(f)), ... to this order
        f = replayed(f)

    def run(*args, **kwargs):
        nums = argnum if isinstance(argnum, (tuple, list)) else (argnum,)
        vectors = [_as_vector(args[i]) for i in nums]

        def g(*xs):
            a = list(args)
            for i, x, (_, unflatten) in zip(nums, xs, vectors):
                a[i] = unflatten(x)
            return f(*a, **kwargs)
        _check_grads(g, tuple(v for v, _ in vectors), order=order, modes=tuple(modes))
    return run


def combo_check(fun, *args, **kwargs):
    def run(*arg_lists, **kwarg_lists):
        keys = list(kwarg_lists)
        for a in itertools.product(*arg_lists):
            for kv in itertools.product(*[kwarg_lists[k] for k in keys]):
                check_grads(fun, *args, **kwargs)(*a, **dict(zip(keys, kv)))
    return run


def scalar_close(a, b):
    return abs(a - b) < 1e-6 or abs(a - b) / abs(a + b) < 1e-6


def check_equivalent(x, y):
    assert np.allclose(x, y)
