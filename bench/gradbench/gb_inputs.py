"""The inputs GradBench's evals send, made here as the evals make them (the ``input`` of an
``evaluate`` message, JSON-ready, without ``min_runs``/``min_seconds``).

Each eval (``python/gradbench/gradbench/evals/<name>/run.py``) seeds NumPy once
(``np.random.seed(31337)``, ``gmm``: ``default_rng(31337)`` per size) and then draws the
inputs of its sizes in its own order (sorted by the product of the sizes); to send the
same numbers for one size, the draws of the sizes before it are made and dropped.

``lstm``: the eval reads GradBench's text file ``evals/lstm/data/lstm_full.txt`` (not in
the offline mirror: a large file) and draws the parameters unseeded. Here: the text of
``text_path`` when given, else ``c`` random printable ASCII characters (seed 31337; 7
bits per character, as for ASCII text), and the parameters drawn after ``seed(31337)``.
"""
from __future__ import annotations

import math

import numpy as np

SEED = 31337

# the evals' default sizes (their argparse defaults)
LSE_N = [2500, 5000, 10000, 20000, 40000, 80000, 160000, 320000, 640000, 1280000]
ODE_N, ODE_S = [1000, 10000, 100000], [1, 10, 100]
KMEANS_K, KMEANS_N, KMEANS_D = [10, 100, 1000], [1000, 10000], [8, 16]
DET_L = [5, 6, 7, 8, 9, 10, 11]
LLSQ_N, LLSQ_M = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8196, 16392], [128]
GMM_D, GMM_K, GMM_N = [2, 10, 20, 32, 64], [5, 10, 25, 50, 100], 1000
LSTM_L, LSTM_C = [2, 4, 6], [1024, 4096, 8192]


def _sequence_draw(sizes, want, draw):
    """Seed, draw ``draw(size)`` for each size in ``sizes`` until ``want``; that draw."""
    np.random.seed(SEED)
    for size in sizes:
        value = draw(size)
        if size == want:
            return value
    raise ValueError(f"size {want} is not one of the eval's sizes {sizes}; pass "
                     "standard=False for a draw of its own")


def _draw(sizes, want, draw, standard):
    """The eval's own draw for a standard size (:func:`_sequence_draw`), else one draw of
    its own after ``seed(31337)``."""
    if standard and want in sizes:
        return _sequence_draw(sizes, want, draw)
    np.random.seed(SEED)
    return draw(want)


def _sorted(combos):
    return sorted(combos, key=math.prod)


def lse(n, standard=True):
    return {"x": _draw(LSE_N, n, lambda k: np.random.rand(k), standard).tolist()}


def ode(n, s, standard=True):
    combos = _sorted([(a, b) for a in ODE_N for b in ODE_S])
    x = _draw(combos, (n, s), lambda c: np.random.rand(c[0]), standard)
    return {"x": x.tolist(), "s": s}


def kmeans(k, n, d, standard=True):
    combos = _sorted([(a, b, c) for a in KMEANS_K for b in KMEANS_N for c in KMEANS_D])
    points = _draw(combos, (k, n, d), lambda c: np.random.rand(c[1], c[2]), standard).tolist()
    return {"points": points, "centroids": points[-k:]}


def det(ell, standard=True):
    return {"A": _draw(DET_L, ell, lambda e: np.random.rand(e * e), standard).tolist(),
            "ell": ell}


def llsq(n, m=128, standard=True):
    combos = _sorted([(a, b) for a in LLSQ_N for b in LLSQ_M])
    x = _draw(combos, (n, m), lambda c: np.random.rand(c[1]), standard)
    return {"x": x.tolist(), "n": n}


def gmm(d, k, n=GMM_N, m=0, gamma=1.0):
    rng = np.random.default_rng(seed=SEED)
    return {"d": d, "k": k, "n": n,
            "x": [list(rng.normal(size=d)) for _ in range(n)],
            "m": m, "gamma": gamma,
            "alpha": list(rng.normal(size=k)),
            "mu": [list(rng.uniform(size=d)) for _ in range(k)],
            "q": [list(rng.normal(size=d)) for _ in range(k)],
            "l": [list(rng.normal(size=d * (d - 1) // 2)) for _ in range(k)]}


def _text(c, text_path):
    if text_path:
        with open(text_path, encoding="utf8") as f:
            return f.read(c)
    rng = np.random.default_rng(SEED)
    return "".join(chr(v) for v in rng.integers(32, 127, size=c))


def lstm(layers, c, text_path=None):
    text = _text(c, text_path)
    bits = math.ceil(math.log2(max(ord(ch) for ch in text)))
    seq = np.array([[int(b) for b in bin(ord(ch))[2:].zfill(bits)] for ch in text],
                   dtype=np.float64)
    np.random.seed(SEED)
    state = np.random.random((2 * layers, bits))
    main_params = np.random.random((2 * layers, bits * 4))
    extra_params = np.random.random((3, bits))
    return {"main_params": main_params.tolist(), "extra_params": extra_params.tolist(),
            "state": state.tolist(), "sequence": seq.tolist()}


# particle and saddle draw nothing: their evals send one fixed input each
# (python/gradbench/gradbench/evals/{particle,saddle}/run.py), for all four functions
def particle(w=0.0):
    return {"w": float(w)}


def saddle(start=(1.0, 1.0)):
    return {"start": [float(s) for s in start]}
