"""Random expression programs over smooth registry operations, for the fuzzer
(tests/dualad/test_fuzz.py) and the tests that reuse its programs (jit under
transformations, one-hot seeds): a program is a list of instructions over earlier values,
:func:`build` makes it a function of an (N,) array."""
import numpy as np
from hypothesis import strategies as st

N = 4
rng = np.random.default_rng(7)
W = rng.standard_normal((N, N)) / 2

# Each op maps earlier values (arrays of shape (N,)) to a new one, smoothly.
UNARY = {
    "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "arctan": np.arctan,
    "square": lambda a: np.square(a) * 0.5, "exp_tanh": lambda a: np.exp(np.tanh(a)),
    "log1p_sq": lambda a: np.log1p(a * a), "sqrt1p": lambda a: np.sqrt(1.0 + a * a),
    "sinh_tanh": lambda a: np.sinh(np.tanh(a)), "matvec": lambda a: W @ a,
    "cumsum": lambda a: np.cumsum(a) * 0.5, "flip": lambda a: a[::-1],
    "roll_idx": lambda a: a[np.array([1, 2, 3, 0])], "mean_bcast": lambda a: a - np.mean(a),
    "reshape_t": lambda a: a.reshape(2, 2).T.ravel(), "einsum": lambda a: np.einsum("ij,j->i", W, a),
    "recip1p": lambda a: 1.0 / (1.0 + a * a), "arcsinh": np.arcsinh,
    "prod_tanh": lambda a: np.prod(np.tanh(a) + 2.0) * a,
}
BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (2.0 + b * b), "logaddexp": np.logaddexp,
    "hypot1": lambda a, b: np.hypot(a, 1.0 + b * b), "atan2": lambda a, b: np.arctan2(a, 2.0 + b * b),
    "pow": lambda a, b: (1.5 + np.tanh(a)) ** (1.0 + 0.3 * np.tanh(b)),
    "outer_sum": lambda a, b: np.sum(np.outer(a, b), axis=0) * 0.3,
    "concat_half": lambda a, b: np.concatenate([a[:2], b[2:]]),
    "stack_sum": lambda a, b: np.sum(np.stack([a, b]), axis=0),
    "where": lambda a, b: np.where(np.arange(N) % 2 == 0, a, b),
    "dot_scale": lambda a, b: a * np.dot(a, b) * 0.2,
}
NAMES = list(UNARY) + list(BINARY)

instruction = st.tuples(st.sampled_from(NAMES), st.integers(0, 10 ** 6), st.integers(0, 10 ** 6))
programs = st.lists(instruction, min_size=1, max_size=8)
points = st.lists(st.floats(-1.5, 1.5), min_size=N, max_size=N).map(np.array)


def build(program):
    def f(x):
        values = [x]
        for name, i, j in program:
            a = values[i % len(values)]
            b = values[j % len(values)]
            values.append(UNARY[name](a) if name in UNARY else BINARY[name](a, b))
        weights = np.linspace(0.5, 1.0, len(values))
        total = 0.0
        for w, v in zip(weights, values):
            total = total + w * np.sum(np.tanh(v))
        return total
    return f


def central_gradient(f, x, h=1e-6):
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e[k] = h
        g[k] = (f(x + e) - f(x - e)) / (2 * h)
    return g
