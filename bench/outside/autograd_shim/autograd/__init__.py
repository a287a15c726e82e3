"""autograd's differentiation API on top of dualad, for running autograd's own test suite
(bench/outside/autograd_suite.py). Measurement only: every name maps onto dualad's public
API; autograd.numpy is plain NumPy (see numpy/)."""
import builtins as _builtins
import os as _os

import numpy as _np

import dualad as _dualad
from dualad import jacobians as _jacobians
from dualad.extend import primal_value as _primal_value


def grad(fun, argnum=0):
    return _checked(fun, argnum, _dualad.grad(fun, argnum), with_value=False)


def value_and_grad(fun, argnum=0):
    return _checked(fun, argnum, _dualad.value_and_grad(fun, argnum), with_value=True)


def hessian_vector_product(fun, argnum=0):
    return lambda *args: _dualad.hvp(_curried(fun, argnum, args[:-1]),
                                     args[argnum], args[-1])


# AG_SHIM_CHECK=N: the first N gradients a program asks for are each checked against a
# Richardson-extrapolated central difference of the program's own function along a random
# direction (the RNGs it uses restored before every evaluation), logged as JSON lines to
# AG_SHIM_LOG; then the program stops (SystemExit 0): bench/outside/autograd_examples.py.
_CHECK = int(_os.environ.get("AG_SHIM_CHECK", "0"))
_checks_done = [0]


def _checked(fun, argnum, gradient, with_value):
    if not _CHECK:
        return gradient
    from ._check import check_gradient, is_traced

    def g(*args, **kwargs):
        if is_traced(args[argnum]):
            return gradient(*args, **kwargs)
        out = check_gradient(fun, argnum, gradient, args, kwargs, with_value,
                             _checks_done[0])
        _checks_done[0] += 1
        if _checks_done[0] >= _CHECK:
            raise SystemExit(0)
        return out
    return g


def holomorphic_grad(fun, argnum=0):
    return _dualad.grad(fun, argnum, holomorphic=True)


def _curried(fun, argnum, args):
    return lambda x: fun(*args[:argnum], x, *args[argnum + 1:])


def elementwise_grad(fun, argnum=0):
    """The VJP with a cotangent of ones: the derivative of an elementwise function."""
    def g(*args):
        out, pullback = _dualad.vjp(_curried(fun, argnum, args), args[argnum])
        return pullback(_np.ones_like(out))[0]
    if not _CHECK:
        return g
    from ._check import check_elementwise, is_traced

    def checked(*args):
        if is_traced(args[argnum]):
            return g(*args)
        out = check_elementwise(fun, argnum, g, args, _checks_done[0])
        _checks_done[0] += 1
        if _checks_done[0] >= _CHECK:
            raise SystemExit(0)
        return out
    return checked


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


# AG_SHIM_JIT=1 (autograd_suite.py --jit): every derivative above runs under dualad.jit and
# answers from a replay of the compiled program (see _jit.py).
from . import _jit as _jit_mode  # noqa: E402

if _jit_mode.ON:
    def _jitting(make):
        def made(fun, argnum=0):
            return _jit_mode.replayed(make(fun, argnum))
        return made
    grad = _jitting(grad)
    value_and_grad = _jitting(value_and_grad)
    holomorphic_grad = _jitting(holomorphic_grad)
    hessian_vector_product = _jitting(hessian_vector_product)
    elementwise_grad = deriv = _jitting(elementwise_grad)
    jacobian = _jitting(jacobian)
    hessian = _jitting(hessian)
    _make_vjp = make_vjp

    def make_vjp(fun, argnum=0):
        def m(*args):
            pull = _jit_mode.replayed(lambda g, *a: _make_vjp(fun, argnum)(*a)[0](g))
            return (lambda g: pull(g, *args)), _jit_mode.replayed(fun)(*args)
        return m
