"""autograd.misc.flatten for the shim: a container of arrays as one flat vector."""
import numpy as np

import dualad.numpy as dnp
from dualad.core.tree import flatten as _leaves


def flatten(value):
    """(flat vector, unflatten): the leaves of ``value`` raveled and concatenated;
    unflatten(v) rebuilds the container from a vector (traced or not)."""
    leaves, rebuild = _leaves(value)
    shapes = [np.shape(leaf) for leaf in leaves]
    flat = (dnp.concatenate([dnp.ravel(leaf) for leaf in leaves]) if leaves
            else np.zeros(0))

    def unflatten(v):
        out, start = [], 0
        for shape in shapes:
            size = int(np.prod(shape))
            out.append(dnp.reshape(v[start:start + size], shape))
            start += size
        return rebuild(out)
    return flat, unflatten


def flatten_func(func, example):
    _, unflatten = flatten(example)
    return (lambda flat, *args: func(unflatten(flat), *args)), unflatten, flatten(example)[0]
