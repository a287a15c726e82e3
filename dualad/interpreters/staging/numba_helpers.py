"""Functions the whole-program Numba code (:mod:`dualad.interpreters.staging.numba_whole`) calls: the
reductions, the scatter-add of an advanced index and ``einsum``, written as loops.

Their source is plain Python here and compiled with ``numba.njit`` on first use
(:func:`helpers`), so importing this module needs no Numba.

Sums follow NumPy's order where NumPy's is known: a sum over the trailing (contiguous)
axes is NumPy's pairwise summation (``pairwise_sum`` in NumPy's ``loops_utils``: blocks of
8 partial sums below 128 entries, halves above), started from ``+0.0``, so bitwise
NumPy's for a C-contiguous operand; a sum over the leading axes adds the rows in order,
as NumPy's reduction does. Other axis sets are moved to the end first (NumPy may visit
them in another order: the last bits can differ). ``einsum`` multiplies and adds in loop
order (NumPy may call BLAS: the last bits can differ). ``max``/``min`` propagate NaN.
"""
from __future__ import annotations

import threading

import numpy as np

from .fuse import COMPARE, EXPRESSIONS

__all__ = ["helpers", "einsum_kernel", "HELPER_SOURCE", "ELEMENTWISE", "FLAT"]

HELPER_SOURCE = '''
def _pw(a, lo, n):
    if n < 8:
        res = -0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    if n <= 128:
        r0 = a[lo]
        r1 = a[lo + 1]
        r2 = a[lo + 2]
        r3 = a[lo + 3]
        r4 = a[lo + 4]
        r5 = a[lo + 5]
        r6 = a[lo + 6]
        r7 = a[lo + 7]
        m = n - n % 8
        i = 8
        while i < m:
            j = lo + i
            r0 += a[j]
            r1 += a[j + 1]
            r2 += a[j + 2]
            r3 += a[j + 3]
            r4 += a[j + 4]
            r5 += a[j + 5]
            r6 += a[j + 6]
            r7 += a[j + 7]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += a[lo + i]
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pw(a, lo, n2) + _pw(a, lo + n2, n - n2)


def sum_all(x):
    a = np.ascontiguousarray(x).ravel()
    return 0.0 + _pw(a, 0, a.size)


def sum_rows(x, m, k):
    a = np.ascontiguousarray(x).ravel()
    out = np.empty(m, np.float64)
    for i in range(m):
        out[i] = 0.0 + _pw(a, i * k, k)
    return out


def isum_all(x):
    a = np.ascontiguousarray(x).ravel()
    r = 0
    for i in range(a.size):
        r += a[i]
    return r


def isum_rows(x, m, k):
    a = np.ascontiguousarray(x).ravel()
    out = np.zeros(m, np.int64)
    for i in range(m):
        for j in range(i * k, i * k + k):
            out[i] += a[j]
    return out


def scatter(u, pos, size):
    w = np.ascontiguousarray(np.broadcast_to(u, pos.shape)).ravel()
    p = pos.ravel()
    out = np.zeros(size, np.float64)
    for i in range(p.size):
        out[p[i]] += w[i]
    return out


def copy1(d, s):
    for i in range(d.shape[0]):
        d[i] = s[i]
    return d


def copy2(d, s):
    for i in range(d.shape[0]):
        for j in range(d.shape[1]):
            d[i, j] = s[i, j]
    return d


def copy3(d, s):
    for i in range(d.shape[0]):
        for j in range(d.shape[1]):
            for k in range(d.shape[2]):
                d[i, j, k] = s[i, j, k]
    return d


def bcast(x, shape):
    return np.ascontiguousarray(np.broadcast_to(x, shape))
'''

# Sums over the leading axes, float and integer: the same loop, the accumulator's dtype
# differs (``sum_lead``, ``isum_lead``).
_SUM_LEAD = """

def {prefix}sum_lead(x, k, m):
    a = np.ascontiguousarray(x).ravel()
    out = np.zeros(m, {dtype})
    for i in range(k):
        for j in range(m):
            out[j] += a[i * m + j]
    return out
"""
# max and min over everything, the trailing axes (rows) or the leading axes: one loop each,
# written once with the comparison ``{cmp}`` (``v != v``: a NaN wins, as in NumPy).
_EXTREMA = """

def {op}_all(x):
    a = np.ascontiguousarray(x).ravel()
    r = a[0]
    for i in range(1, a.size):
        v = a[i]
        if v {cmp} r or v != v:
            r = v
    return r


def {op}_rows(x, m, k):
    a = np.ascontiguousarray(x).ravel()
    out = np.empty(m, a.dtype)
    for i in range(m):
        r = a[i * k]
        for j in range(i * k + 1, i * k + k):
            v = a[j]
            if v {cmp} r or v != v:
                r = v
        out[i] = r
    return out


def {op}_lead(x, k, m):
    a = np.ascontiguousarray(x).ravel()
    out = a[:m].copy()
    for i in range(1, k):
        for j in range(m):
            v = a[i * m + j]
            if v {cmp} out[j] or v != v:
                out[j] = v
    return out
"""
HELPER_SOURCE += "".join(_SUM_LEAD.format(prefix=p, dtype=d)
                         for p, d in (("", "np.float64"), ("i", "np.int64")))
HELPER_SOURCE += "".join(_EXTREMA.format(op=op, cmp=c) for op, c in (("max", ">"), ("min", "<")))

# Elementwise operations as functions (``ew_add(a, b)``): Numba compiles each once per
# operand types and the programs call them, where an expression written in the program
# would be compiled again at every line (tens of ms each).
ELEMENTWISE = {"add": "a + b", "subtract": "a - b", "multiply": "a * b", "divide": "a / b",
               "maximum": "np.maximum(a, b)", "minimum": "np.minimum(a, b)",
               "equal": "a == b", "not_equal": "a != b", "less": "a < b",
               "less_equal": "a <= b", "greater": "a > b", "greater_equal": "a >= b",
               "negative": "-a", "square": "a * a", "reciprocal": "1.0 / a",
               "absolute": "np.abs(a)", "where": "np.where(a, b, c)"}
for _f in ("sqrt", "exp", "log", "expm1", "log1p", "sin", "cos", "tan", "tanh", "sinh", "cosh",
           "arctan", "arcsin", "arccos", "arcsinh", "log2", "log10"):
    ELEMENTWISE[_f] = "np.%s(a)" % _f
HELPER_SOURCE += "".join(
    f"\n\ndef ew_{k}({'a, b, c' if k == 'where' else 'a, b' if ' b' in v else 'a'}):"
    f"\n    return {v}\n" for k, v in ELEMENTWISE.items())

# The same over operands of one shape (``fl_add_as(a, s)``: ``a`` an array, ``s`` a
# scalar), as one flat loop: compiled in a fraction of the time a broadcasting expression
# of 2 or 3 dimensions takes.
FLAT = {}
for _name, (_arity, _expr) in EXPRESSIONS.items():
    if _name == "broadcast_to":
        continue
    _dt = "np.bool_" if _name in COMPARE else "np.float64"
    _pats = ["a"] if _arity == 1 else ["aa", "as", "sa"] if _arity == 2 else \
        ["aaa", "aas", "asa", "ass"]
    for _pat in _pats:
        _names = [f"x{k}[i]" if c == "a" else f"x{k}" for k, c in enumerate(_pat)]
        _lines = [f"def fl_{_name}_{_pat}({', '.join(f'a{k}' for k in range(_arity))}):"]
        for _k, _c in enumerate(_pat):
            _lines.append(f"    x{_k} = np.ascontiguousarray(a{_k}).ravel()" if _c == "a"
                          else f"    x{_k} = a{_k}")
        _lines += ["    out = np.empty(x0.size, %s)" % _dt, "    for i in range(x0.size):",
                   f"        out[i] = {_expr.format(*_names)}", "    return out.reshape(a0.shape)"]
        HELPER_SOURCE += "\n\n" + "\n".join(_lines) + "\n"
        FLAT[(_name, _pat)] = f"fl_{_name}_{_pat}"

_LOCK = threading.Lock()
_CACHE = {}


def helpers(numba):
    """``{name: njit dispatcher}`` of the functions in :data:`HELPER_SOURCE` (compiled
    lazily by Numba, each at its first call, for its argument types)."""
    with _LOCK:
        got = _CACHE.get("helpers")
        if got is None:
            ns = {"np": np}
            exec(compile(HELPER_SOURCE, "<dualad.jit numba helpers>", "exec"), ns)  # noqa: S102
            got = {}
            jit = numba.njit(fastmath=False, error_model="numpy", nogil=True)
            for name, fn in list(ns.items()):
                if callable(fn) and getattr(fn, "__module__", None) is None and name != "np":
                    ns[name] = got[name] = jit(fn)   # (_pw calls itself through ns)
            _CACHE["helpers"] = got
    return got


def einsum_kernel(numba, subs, out, shapes):
    """An njit function of ``len(subs)`` arrays computing ``einsum(subs -> out)`` for
    operands of ``shapes`` by loops (every index letter a ``for``; the output letters
    outside, the summed ones inside, each output entry summed from ``0.0`` in loop order)."""
    key = ("einsum", subs, out, shapes)
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is not None:
        return hit
    size = {}
    for sub, shape in zip(subs, shapes):
        for c, d in zip(sub, shape):
            size[c] = d
    inner = [c for c in dict.fromkeys("".join(subs)) if c not in out]
    args = [f"a{k}" for k in range(len(subs))]
    lines = [f"def einsum_loops({', '.join(args)}):"]
    oshape = tuple(size[c] for c in out)
    ind = "    "
    for c in out:
        lines.append(f"{ind}for i_{c} in range({size[c]}):")
        ind += "    "
    lines.append(f"{ind}acc = 0.0")
    ind2 = ind
    for c in inner:
        lines.append(f"{ind2}for i_{c} in range({size[c]}):")
        ind2 += "    "
    prod = " * ".join(f"a{k}[{', '.join(f'i_{c}' for c in sub)}]" if sub else f"a{k}"
                      for k, sub in enumerate(subs))
    lines.append(f"{ind2}acc += {prod}")
    if out:
        lines.insert(1, f"    r = np.empty({oshape!r}, np.float64)")
        lines.append(f"{ind}r[{', '.join(f'i_{c}' for c in out)}] = acc")
        lines.append("    return r")
    else:
        lines.append("    return acc")
    ns = {"np": np}
    exec(compile("\n".join(lines) + "\n", "<dualad.jit numba einsum>", "exec"), ns)  # noqa: S102
    fn = numba.njit(fastmath=False, error_model="numpy", nogil=True)(ns["einsum_loops"])
    with _LOCK:
        return _CACHE.setdefault(key, fn)
