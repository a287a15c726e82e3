"""The coverage table's keywords column: every keyword NumPy (or SciPy) documents for a
row's function, tried on the row's sample call.

For each keyword the row's call does not pass already, a sample value (:data:`VALUES`,
the first one NumPy itself accepts for that call) is added to the call and the call is
measured as a row is (:func:`verification.coverage.measure`: the traced value against
NumPy's value with the same keyword, forward and reverse Jacobians against central
differences). Verdicts:

- ``ok``: the keyword works (value and derivative checked; ``zero`` rows included);
- ``raises``: a clear error naming the keyword (and no Python "unexpected keyword");
- ``RAW``: an error that does not name the keyword, or Python's bare
  "unexpected keyword argument" (a defect);
- ``FAILS``: a wrong value or derivative (a defect);
- ``untried``: no sample value in :data:`VALUES` that NumPy accepts for this call.

``out=`` is left out (in-place updates are documented on their own).
"""
from __future__ import annotations

__all__ = ["VALUES", "GROUPS", "UFUNC_KEYWORDS", "GUFUNC_KEYWORDS", "SKIP", "ALIASES",
           "callee", "params", "documented", "to_try", "with_keyword", "probe", "cell",
           "counts", "NEWER", "write_signatures"]

import ast
import inspect
from pathlib import Path

import numpy as np

# Sample values of keywords, as source text. ``{d}`` is the call's first argument (the
# data), ``{m}`` a boolean mask of its shape (not all true).
_MASK = "(np.arange(np.size({d})).reshape(np.shape({d})) % 3 != 1)"
VALUES = {
    "axis": ["0", "-1"], "keepdims": ["True"], "dtype": ["np.complex128", "np.float64", "bool"],
    "initial": ["0.5"], "where": [_MASK, "True"], "ddof": ["1"], "correction": ["1"],
    "mean": ["np.mean({d}, keepdims=True)", "np.nanmean({d}, keepdims=True)"],
    "casting": ["'same_kind'"], "order": ["'C'", "'K'"], "subok": ["True"],
    "copy": ["True"], "device": ["'cpu'"], "like": ["{d}", "x"], "decimals": ["1"],
    "equal_nan": ["True"], "return_index": ["True"], "return_inverse": ["True"],
    "return_counts": ["True"], "sorted": ["True"], "kind": ["'stable'", "'introselect'", "'table'"], "stable": ["True"],
    "side": ["'right'"], "right": ["True"], "invert": ["True"], "assume_unique": ["True"],
    "n": ["2"], "prepend": ["0.1"], "append": ["0.2"], "to_end": ["0.3"],
    "to_begin": ["0.1"], "edge_order": ["2"], "dx": ["0.5"], "returned": ["True"],
    "method": ["'nearest'", "'linear'", "'inverted_cdf'"], "overwrite_input": ["True"], "nan": ["0.5"],
    "posinf": ["2.0"], "neginf": ["-2.0"], "rcond": ["1e-10"], "rtol": ["1e-10"],
    "tol": ["1e-10"], "hermitian": ["True"], "ord": ["1", "2", "'fro'"],
    "compute_uv": ["False"], "full_matrices": ["False"], "mode": ["'same'", "'reduced'", "'clip'", "'edge'"],
    "UPLO": ["'U'"], "offset": ["1"], "k": ["1"], "include_initial": ["True"],
    "optimize": ["True"], "endpoint": ["False"], "num": ["4"], "period": ["6.0"],
    "discont": ["1.0"], "trim": ["'f'"], "increasing": ["True"], "N": ["2"], "m": ["2"],
    "lbnd": ["0.5"], "shift": ["1"], "axis1": ["0", "1"], "axis2": ["0", "1"], "tensor": ["True"],
    "weights": ["np.ones(np.shape({d}))", "np.ones(np.shape({d}))|method='inverted_cdf'"], "dtype_int": ["int"], "left": ["0.0"],
    "bins": ["np.array([0.5])"], "unwrap": ["True"], "x": ["np.linspace(0.0, 1.0, 3)"],
    "atol": ["1e-3"], "sorter": ["None"], "max_work": ["None"], "shape": ["np.shape({d})"],
    "deg": ["True"], "default": ["0.5"], "start": ["0"], "retstep": ["True"], "base": ["2.0"],
    "minlength": ["5"], "rowvar": ["False"], "bias": ["True"], "norm": ["'ortho'"],
    "p": ["2"], "upper": ["True"], "range": ["(0.0, 1.0)"], "density": ["True"],
    "fweights": ["np.array([1, 2, 1])"], "aweights": ["np.array([0.5, 1.0, 2.0])"],
    "s": ["np.shape({d})"], "y": ["{d} + 0.5"], "axisa": ["0"], "axisb": ["0"],
    "axisc": ["0"], "min": ["0.4"], "max": ["0.7"],
    "b": ["np.full(np.shape({d}), 0.5)"], "return_sign": ["True"], "q": ["2.0"],
    "signature": [],   # filled per ufunc: its own float loop, 'dd->d'
}
GROUPS = ("numpy", "numpy.linalg", "numpy.fft", "scipy.special")   # the rows probed
UFUNC_KEYWORDS = ("where", "casting", "order", "dtype", "subok", "signature")
GUFUNC_KEYWORDS = ("axes", "axis", "keepdims")
SKIP = {"out"}
ALIASES = [("a_min", "min"), ("a_max", "max")]   # np.clip's two names of each bound


def callee(entry, ns):
    """The function a row calls (the outermost call of its sample expression), its call
    node and the parsed expression; None when the row is not a plain call."""
    tree = ast.parse(entry.expr.strip(), mode="eval")
    node = tree.body
    while isinstance(node, (ast.Subscript, ast.Attribute)) and not isinstance(node, ast.Call):
        node = node.value
    if not isinstance(node, ast.Call):
        return None
    try:
        fn = eval(compile(ast.Expression(node.func), "<callee>", "eval"), dict(ns))  # noqa: S307
    except Exception:  # noqa: BLE001 - a pending row
        return None
    return fn, node, tree


# parameter kinds in the snapshot: p positional-only, pk positional-or-keyword, k
# keyword-only, vp *args, vk **kwargs
_CODES = {"POSITIONAL_ONLY": "p", "POSITIONAL_OR_KEYWORD": "pk", "KEYWORD_ONLY": "k",
          "VAR_POSITIONAL": "vp", "VAR_KEYWORD": "vk"}
_KINDS = {v: k for k, v in _CODES.items()}


def _key(fn):
    return f"{getattr(fn, '__module__', None) or ''}.{getattr(fn, '__qualname__', '')}"


def params(fn):
    """``[(name, kind)]``: ``fn``'s parameters (kind as ``inspect.Parameter.kind.name``),
    from :mod:`verification.coverage_signatures` (NumPy 2.4's signatures, written by
    ``python -m dualad.verification.coverage --write-signatures``: NumPy before 2.4 cannot
    introspect its C functions, and the table must be the same on every NumPy), else
    from ``inspect``."""
    from .coverage_signatures import SIGNATURES
    got = SIGNATURES.get(_key(fn))
    if got is not None:
        return [(name, _KINDS[kind]) for name, kind in (p.split(":") for p in got.split())]
    try:
        return [(p.name, p.kind.name) for p in inspect.signature(fn).parameters.values()]
    except (TypeError, ValueError):
        return []


def documented(fn):
    """The keywords NumPy (or SciPy) documents for ``fn``: its signature's named
    parameters; a ufunc's keywords (NumPy 2.2 gives ufuncs no signature)."""
    if isinstance(fn, np.ufunc):   # generalized ufuncs take no where=
        kws = [k for k in UFUNC_KEYWORDS if not (fn.signature and k == "where")]
        return kws + (list(GUFUNC_KEYWORDS) if fn.signature else [])
    names = [n for n, kind in params(fn) if kind in ("POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY")]
    if fn is np.clip:   # np.clip passes its **kwargs, the ufunc keywords, to its ufunc
        names += list(UFUNC_KEYWORDS)
    return names


def to_try(fn, node):
    """Documented keywords the row's call does not pass (positionally or by name)."""
    names = documented(fn)
    taken = set()
    if not isinstance(fn, np.ufunc):
        ps = [(n, kind) for n, kind in params(fn) if kind != "VAR_KEYWORD"]
        npos = len(node.args)
        if any(kind == "VAR_POSITIONAL" for _, kind in ps[:npos + 1]):
            npos = len(ps)
        taken = {n for n, _ in ps[:npos]}
    taken |= {k.arg for k in node.keywords}
    for pair in ALIASES:   # a keyword whose other name the call passes: NumPy refuses both
        if taken & set(pair):
            taken |= set(pair)
    return [k for k in names if k not in taken and k not in SKIP]


def _values(fn, kw, data):
    if kw == "signature" and isinstance(fn, np.ufunc):   # its float64 loop
        loops = [t for t in fn.types if t.split("->")[0] == "d" * fn.nin]
        return [repr(t) for t in (loops or [t for t in fn.types if t.startswith("d")])][:1]
    if kw == "signature" and fn is np.clip:
        return ["'ddd->d'"]
    if kw == "axes" and isinstance(fn, np.ufunc):
        return ["[(0,), (0,), ()]", "[(0,), (0,)]", "[(-2, -1), (-2, -1), (-1, -2)]",
                "[(-1, -2), (-1,), (-1,)]", "[(-1,), (-1, -2), (-1,)]"]
    if kw == "axes":
        return ["(0,)", "1", "None", "(1, 0)"]
    return [v.format(d=data, m=_MASK.format(d=data)) for v in VALUES.get(kw, [])]


def with_keyword(tree, node, kw, value):
    """The call with ``kw=value`` added; ``value`` may carry keywords the sample value
    needs after a ``|`` (``weights=w|method='inverted_cdf'``)."""
    value, *extra = value.split("|")
    added = [ast.keyword(arg=kw, value=ast.parse(value, mode="eval").body)]
    for item in extra:
        k, v = item.split("=", 1)
        added.append(ast.keyword(arg=k.strip(), value=ast.parse(v, mode="eval").body))
    node.keywords.extend(added)
    try:
        return ast.unparse(tree)
    finally:
        del node.keywords[-len(added):]


def probe(entry, ns, measure):
    """{keyword: (verdict, the call tried)} for a row (empty when it is not a plain call
    of a NumPy or SciPy function). ``measure`` is :func:`verification.coverage.measure`."""
    from dataclasses import replace
    found = callee(entry, ns)
    if found is None:
        return {}
    fn, node, tree = found
    data = ast.unparse(node.args[0]) if node.args else "x"
    out = {}
    for kw in to_try(fn, node):
        if kw == "where" and isinstance(fn, np.ufunc):
            # NumPy leaves the masked entries uninitialized (and some SciPy ufuncs crash
            # the process on such a plain call): only the traced call, which must raise
            expr = with_keyword(tree, node, kw, _values(fn, kw, data)[0])
            out[kw] = (_traced_raises(entry, expr, ns, kw), expr)
            continue
        # Every sample value NumPy accepts here is tried: a defect on any of them is
        # reported; else the keyword works if it works for one of them (e.g. a real
        # dtype=, where a complex one raises clearly).
        tried = []
        for value in _values(fn, kw, data):
            expr = with_keyword(tree, node, kw, value)
            if not _finite(expr, ns):
                continue       # outside the function's domain (nan): not a test
            res = measure(replace(entry, expr=expr, claim="ok"))
            if any(d.startswith("plain call") for d in res.detail):
                continue       # NumPy itself rejects this value here: try the next
            tried.append((_verdict(res, kw, entry), expr))
        out[kw] = next((t for v in ("FAILS", "RAW", "ok", "raises") for t in tried
                        if t[0] == v), ("untried", ""))
    return out


def _finite(expr, ns):
    import warnings
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            value = eval(expr, dict(ns))  # noqa: S307
        leaves = value if isinstance(value, tuple) else (value,)
        return all(np.all(np.isfinite(np.asarray(v, dtype=complex))) for v in leaves
                   if np.asarray(v).dtype.kind in "fc")
    except Exception:  # noqa: BLE001 - measure reports it
        return True


def _traced_raises(entry, expr, ns, kw):
    import dualad
    code = compile(expr, expr, "eval")
    primals = [np.asarray(ns[w], dtype=float) for w in entry.wrt]

    def call(*xs):
        return eval(code, {**ns, **dict(zip(entry.wrt, xs))})  # noqa: S307
    try:
        dualad.vjp(call, *primals)
    except Exception as e:  # noqa: BLE001
        text = str(e)
        if "unexpected keyword" in text or (kw not in text and "raises" not in entry.claims):
            return "RAW"
        return "raises"
    return "FAILS"   # a value where NumPy has none


def _verdict(res, kw, entry):
    modes = (res.forward, res.reverse)
    if all(m in ("ok", "zero") for m in modes):
        return "ok"
    errors = [d for d in res.detail if d.startswith(("forward:", "reverse:"))]
    if "raises" in modes or (errors and "FAILS" in modes and not any(
            d.startswith("value") or "Jacobian" in d for d in res.detail)):
        text = " ".join(errors)
        if "unexpected keyword" in text:
            return "RAW"
        if kw not in text and "raises" not in entry.claims:   # a row that raises anyway
            return "RAW"
        return "raises"
    return "FAILS"


def cell(probes):
    """The table cell: the keywords that work, then those that raise."""
    if not probes:
        return "—"
    by = {}
    for kw, (verdict, _) in probes.items():
        by.setdefault(verdict, []).append(kw)
    parts = [", ".join(by.pop("ok", []))]
    for verdict in ("raises", "untried", "RAW", "FAILS"):
        if by.get(verdict):
            parts.append(f"{verdict}: " + ", ".join(by[verdict]))
    return "; ".join(p for p in parts if p) or "—"


def counts(all_probes):
    c = {"ok": 0, "raises": 0, "untried": 0, "RAW": 0, "FAILS": 0}
    for probes in all_probes:
        for verdict, _ in probes.values():
            c[verdict] += 1
    return c


# Keywords newer than NumPy 2.2 (CI's oldest): left out of the snapshot, so the table is
# the same on every supported NumPy (tests/dualad/frontend/test_keywords.py tries them where present).
NEWER = {"numpy.unique": {"sorted"}}


def write_signatures(path, ns, entries):
    """Write :mod:`verification.coverage_signatures` from the installed NumPy/SciPy
    (``python -m dualad.verification.coverage --write-signatures PATH``)."""
    import textwrap
    table = {}
    for e in entries:
        found = callee(e, ns) if e.group in GROUPS else None
        if found is None or isinstance(found[0], np.ufunc):
            continue
        fn = found[0]
        try:
            sig = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            continue
        skip = NEWER.get(e.name, set())
        table[_key(fn)] = " ".join(f"{p.name}:{_CODES[p.kind.name]}" for p in sig
                                   if p.name not in skip)
    lines = ['"""Parameters of the functions the coverage table\'s keyword column tries',
             "(generated by ``python -m dualad.verification.coverage --write-signatures",
             'verification/coverage_signatures.py`` from NumPy 2.4; do not edit)."""',
             "SIGNATURES = {"]
    for k in sorted(table):
        body = textwrap.wrap(table[k], 99 - 12 - len(k))
        lines.append(f"    {k!r}: (" + "\n".join(
            ("" if i == 0 else "        ") + repr(b + (" " if i < len(body) - 1 else ""))
            for i, b in enumerate(body)) + "),")
    lines.append("}")
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
