"""Gradient-descent optimizers with autograd.misc.optimizers' call signature, for the
shim (written here from the algorithms' definitions: Kingma & Ba 2015 for Adam).
``grad(x, i)`` returns the gradient at iterate i; x may be a container of arrays."""
import numpy as np

from .flatten import flatten


def _flat_optimizer(step):
    def optimizer(grad, x0, callback=None, *args, **kwargs):
        x, unflatten = flatten(x0)
        x = np.asarray(x, dtype=float)

        def flat_grad(v, i):
            return np.asarray(flatten(grad(unflatten(v), i))[0], dtype=float)
        flat_callback = (None if callback is None else
                         (lambda v, i, g: callback(unflatten(v), i, unflatten(g))))
        return unflatten(step(flat_grad, x, flat_callback, *args, **kwargs))
    return optimizer


@_flat_optimizer
def sgd(grad, x, callback=None, num_iters=200, step_size=0.1, mass=0.9):
    velocity = np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        velocity = mass * velocity - (1.0 - mass) * g
        x = x + step_size * velocity
    return x


@_flat_optimizer
def rmsprop(grad, x, callback=None, num_iters=100, step_size=0.1, gamma=0.9, eps=1e-8):
    avg_sq = np.ones(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        avg_sq = gamma * avg_sq + g ** 2 * (1 - gamma)
        x = x - step_size * g / (np.sqrt(avg_sq) + eps)
    return x


@_flat_optimizer
def adam(grad, x, callback=None, num_iters=100, step_size=0.001, b1=0.9, b2=0.999, eps=1e-8):
    m = np.zeros(len(x))
    v = np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * g ** 2 + b2 * v
        mhat = m / (1 - b1 ** (i + 1))
        vhat = v / (1 - b2 ** (i + 1))
        x = x - step_size * mhat / (np.sqrt(vhat) + eps)
    return x
