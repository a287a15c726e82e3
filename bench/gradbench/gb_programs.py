"""The GradBench objectives the runner and the tool differentiate, each over a namespace
``xp`` (NumPy -- and so dualad --, ``jax.numpy``, ``torch``, ``autograd.numpy``).

``ode``, ``det``, ``kmeans`` and ``lse`` are bench/gradbench_numpy.py's. Written here from
GradBench's eval descriptions (github.com/gradbench/gradbench, ``evals/<name>/README.md``
and the reference ``cpp/gradbench/evals/<name>.hpp``); GradBench ships none of these three
as a NumPy program (its JAX/PyTorch tools and C++ references only):

- ``gmm``: ADBench's Gaussian-mixture log posterior with GradBench's fixes (Q lower
  triangular with exp(q) on the diagonal, ``l`` filled column by column, a Wishart prior on
  the precision matrices), in the vectorised form GradBench's README derives.
- ``llsq``: 1/2 sum_i (s_i - sum_j x_j t_i^j)^2, t_i = -1 + 2 i / (n - 1), s_i = sign(t_i).
- ``lstm``: ADBench's diagonal LSTM (per layer: gates = [in, h, in, h] * w + b; forget,
  ingate, outgate sigmoid; change tanh), loss = -mean over steps and bits of
  ygold * (ypred - log(sum(exp(ypred)) + 2)) (the "+ 2" is the reference's).

Everything not differentiated (data, index arrays, constants) is closed over, built once.
"""
from __future__ import annotations

import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from gradbench_numpy import (det_objective, kmeans_objective, lse_objective,  # noqa: E402,F401
                             ode_objective, ode_state)


def _torch(xp):
    return xp.__name__ == "torch"


def cat(xp, parts, axis=0):
    return xp.cat(parts, dim=axis) if _torch(xp) else xp.concatenate(parts, axis=axis)


def amax(xp, a, axis):
    if _torch(xp):
        return xp.amax(a, dim=axis, keepdim=True)
    return xp.max(a, axis=axis, keepdims=True)


def logsumexp(xp, a, axis):
    """log(sum(exp(a), axis)), shifted by the maximum as GradBench's tools do."""
    m = amax(xp, a, axis)
    return xp.squeeze(m, axis) + xp.log(xp.sum(xp.exp(a - m), axis))


def constant(xp, a):
    """A NumPy array as a constant of ``xp`` (index arrays included)."""
    if _torch(xp):
        return xp.from_numpy(np.ascontiguousarray(a))
    if xp.__name__.startswith("jax"):
        return xp.asarray(a)
    return a


# --- gmm ---------------------------------------------------------------------------------
def _tril_gather(d):
    """Flat (d*d) positions into [0, l]: 1 + the index in l of entry (r, c) of the strictly
    lower triangle (filled column by column), 0 on and above the diagonal."""
    g = np.zeros(d * d, dtype=np.int64)
    pos = 1
    for c in range(d - 1):
        for r in range(c + 1, d):
            g[r * d + c] = pos
            pos += 1
    return g


def multigammaln(a, p):
    """log of the multivariate gamma function Gamma_p(a) (a constant here)."""
    return (p * (p - 1) / 4 * math.log(math.pi)
            + sum(math.lgamma(a - j / 2) for j in range(p)))


def gmm_objective(xp, x, m, gamma):
    """f(alpha, mu, q, l) for data x (n, d), Wishart parameters m, gamma."""
    n, d = x.shape
    xc = constant(xp, x)
    gather = constant(xp, _tril_gather(d))
    nn = d + m + 1
    const = -n * d * 0.5 * math.log(2 * math.pi)
    C = nn * d * math.log(gamma / math.sqrt(2)) - multigammaln(0.5 * nn, d)

    def f(alpha, mu, q, l):
        k = alpha.shape[0]
        Qdiags = xp.exp(q)
        sum_qs = xp.sum(q, 1)
        zero = l[:, :1] * 0.0
        Ls = xp.reshape(cat(xp, [zero, l], 1)[:, gather], (k, d, d))
        xcentered = xc[:, None, :] - mu[None, :, :]
        Lx = Qdiags * xcentered + xp.einsum("ijk,mik->mij", Ls, xcentered)
        inner = alpha + sum_qs - 0.5 * xp.sum(Lx ** 2, 2)
        slse = xp.sum(logsumexp(xp, inner, 1))
        prior = -xp.sum(0.5 * gamma * gamma * (xp.sum(Qdiags ** 2, 1) + xp.sum(l ** 2, 1))
                        - m * sum_qs)
        return const + slse - n * logsumexp(xp, alpha, 0) + prior + k * C
    return f


# --- llsq --------------------------------------------------------------------------------
def llsq_objective(xp, n, m):
    t = -1.0 + np.arange(n) * 2.0 / (n - 1.0)
    T = np.cumprod(np.concatenate([np.ones((n, 1)), np.repeat(t[:, None], m - 1, 1)], 1), 1)
    Tc, sc = constant(xp, T), constant(xp, np.sign(t))

    def f(x):
        r = sc - Tc @ x
        return 0.5 * xp.sum(r * r)
    return f


# --- ode, the steps as a scan (JAX's spelling) ---------------------------------------------
def ode_state_scan(xp, s, scan):
    """gradbench_numpy.ode_state with the s Runge-Kutta steps as ``scan(step, y0, None,
    length=s)`` (``jax.lax.scan``: GradBench's JAX tool writes its loop so; the unrolled
    loop takes jax.jit minutes to compile at s = 30)."""
    def f(x):
        def rhs(y):
            return cat(xp, [x[:1], x[1:] * y[:-1]])
        h = 2.0 / s

        def step(y, _):
            k1 = rhs(y)
            k2 = rhs(y + h / 2 * k1)
            k3 = rhs(y + h / 2 * k2)
            k4 = rhs(y + h * k3)
            return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4), None
        return scan(step, x * 0.0, None, length=s)[0]
    return f


# --- lstm --------------------------------------------------------------------------------
def lstm_objective(xp, state, sequence, scan=None):
    """f(main_params, extra_params); state (2 layers, b) and sequence (c, b) fixed. The
    time steps are a Python loop, or ``scan`` over them when given (jax.lax.scan)."""
    c, b = sequence.shape
    layers = state.shape[0] // 2
    seq = constant(xp, sequence)      # one (c, b) array, a row per step (as the reference)
    st = constant(xp, state)

    def sigmoid(z):
        return 1.0 / (1.0 + xp.exp(-z))

    def step(main, extra, hidden, cell, now, gold):
        """One character: the layers' new hidden and cell states, sum(ygold * ynorm)."""
        hidden, cell = list(hidden), list(cell)
        inp = now * extra[0]
        for i in range(layers):
            gates = cat(xp, [inp, hidden[i], inp, hidden[i]]) * main[2 * i] + main[2 * i + 1]
            forget = sigmoid(gates[:b])
            ingate = sigmoid(gates[b:2 * b])
            outgate = sigmoid(gates[2 * b:3 * b])
            change = xp.tanh(gates[3 * b:])
            cell[i] = cell[i] * forget + ingate * change
            hidden[i] = outgate * xp.tanh(cell[i])
            inp = hidden[i]
        ypred = inp * extra[1] + extra[2]
        ynorm = ypred - xp.log(xp.sum(xp.exp(ypred)) + 2.0)
        return hidden, cell, xp.sum(gold * ynorm)

    def f(main, extra):
        hidden = [st[2 * i] for i in range(layers)]
        cell = [st[2 * i + 1] for i in range(layers)]
        total = 0.0
        for t in range(c - 1):
            hidden, cell, part = step(main, extra, hidden, cell, seq[t], seq[t + 1])
            total = total + part
        return -total / ((c - 1) * b)

    def f_scan(main, extra):
        def body(carry, now_gold):
            hidden, cell, total = carry
            hidden, cell, part = step(main, extra, hidden, cell, *now_gold)
            return (tuple(hidden), tuple(cell), total + part), None
        init = (tuple(st[2 * i] for i in range(layers)),
                tuple(st[2 * i + 1] for i in range(layers)), xp.zeros(()))
        total = scan(body, init, (seq[:-1], seq[1:]))[0][2]
        return -total / ((c - 1) * b)
    return f if scan is None else f_scan
