"""autograd's differentiation API on top of dualad, for running autograd's own test suite
(bench/outside/autograd_suite.py). Measurement only: every name maps onto dualad's public
API; autograd.numpy is plain NumPy (see numpy/)."""
import builtins as _builtins

import numpy as _np

import dualad as _dualad
from dualad import jacobians as _jacobians
from dualad.extend import primal_value as _primal_value


def grad(fun, argnum=0):
    return _dualad.grad(fun, argnum)


def value_and_grad(fun, argnum=0):
    return _dualad.value_and_grad(fun, argnum)


def holomorphic_grad(fun, argnum=0):
    return _dualad.grad(fun, argnum, holomorphic=True)


def _curried(fun, argnum, args):
    return lambda x: fun(*args[:argnum], x, *args[argnum + 1:])


def elementwise_grad(fun, argnum=0):
    """The VJP with a cotangent of ones: the derivative of an elementwise function."""
    def g(*args):
        out, pullback = _dualad.vjp(_curried(fun, argnum, args), args[argnum])
        return pullback(_np.ones_like(out))[0]
    return g


deriv = elementwise_grad


def jacobian(fun, argnum=0):
    return lambda *args: _jacobians.jacobian(_curried(fun, argnum, args), args[argnum])


def hessian(fun, argnum=0):
    return lambda *args: _jacobians.hessian(_curried(fun, argnum, args), args[argnum])


def make_vjp(fun, argnum=0):
    def m(*args):
        out, pullback = _dualad.vjp(_curried(fun, argnum, args), args[argnum])
        return (lambda g: pullback(g)[0]), out
    return m


def isinstance(x, t):   # autograd.builtins.isinstance sees through boxes
    return _builtins.isinstance(_primal_value(x), t)


tuple, list, dict = _builtins.tuple, _builtins.list, _builtins.dict
