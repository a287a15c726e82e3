"""The coverage table, measured: which functions dualad differentiates, in which mode, and
whether the SymPy oracle checks the rules they reach.

Every row of :data:`verification.coverage_table.ENTRIES` is a public function as users
call it (``np.linalg.slogdet(A)``, ``scipy.special.gammaln(x)`` on traced values,
``dualad.scipy.stats.norm.logpdf(x, loc, scale)``), a sample call inside its domain and
the arguments it is differentiated in. :func:`measure` *runs* it:

- forward: ``dualad.jvp`` in vector mode (every basis direction in one sweep);
- reverse: ``dualad.vjp`` with a batch of basis cotangents (one backward sweep);

and compares both Jacobians with central differences of the plain call
(:mod:`verification.numeric`; Richardson extrapolation decides a disagreement). The
traced value must equal the plain one, a ``dualad.scipy`` function's plain value SciPy's,
and ``scipy.special.f`` on traced values must agree with ``dualad.scipy.special.f``.
Verdicts per mode: ``ok``, ``zero``, ``raises``, ``pending``, ``FAILS`` (the document's
header, :data:`~verification.coverage_table.HEADER`, defines them).

The SymPy column: a forward sweep records the primitives a call reaches, and
:func:`sympy_status` says, for each, whether its rules are compared with ``sympy.diff``:
by the registry's rule checker (``check_registry``), or, for a translation that checker
does not reach or cannot evaluate with NumPy, here (with SciPy evaluating SymPy's
special functions where NumPy cannot).

``python -m dualad.verification.coverage`` prints the document and exits 1 if a row does not
give what it claims; ``--write docs/coverage.md`` regenerates the document.
"""
from __future__ import annotations

import contextlib
import ctypes
import importlib
import re
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import dualad
from dualad.extend import rule_table, Box, Dual, JVPTrace, REGISTRY, flatten, primal_value

JVP = rule_table("jvp", per_argument=True)
VJP = rule_table("vjp", per_argument=True)
JVP_ALL = rule_table("jvp_all")
VJP_ALL = rule_table("vjp_all")

from . import coverage_keywords, numeric
from .batching import vmap_kind
from .jit import jit_kind
from .sampling import fill_arguments
from .coverage_table import (ENTRIES, GROUPS, HEADER, PRIMITIVES_NOTE, SAMPLE_NOTES, SAMPLES,
                             Entry, autograd_functions, qualified_name)

__all__ = ["Entry", "ENTRIES", "Result", "measure", "measure_all", "render", "sympy_status",
           "primitive_rows", "failures", "pending", "missing_entries", "autograd_functions",
           "main"]

RTOL = 1e-5          # central differences: |J - J_num| <= RTOL * max(|J_num|, 1)
ZERO_ATOL = 1e-7     # differences this small are zero
VALUE_RTOL = 1e-9    # traced value vs plain value, dualad.scipy vs SciPy


# --- the namespace sample calls are evaluated in --------------------------------------
class _Missing:
    """A module that does not exist yet: every attribute is missing (a pending row)."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        raise AttributeError(f"{self._name} does not exist yet (no attribute {attr!r})")


def _module(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return _Missing(name)


# the modules the sample calls name; sl, ss, ssig, si only in SciPy reference values
ALIASES = {"np": "numpy", "sc": "scipy.special", "dnp": "dualad.numpy",
           "ds": "dualad.scipy.special", "dl": "dualad.scipy.linalg",
           "dst": "dualad.scipy.stats", "dsig": "dualad.scipy.signal",
           "dint": "dualad.scipy.integrate", "sl": "scipy.linalg", "ss": "scipy.stats",
           "ssig": "scipy.signal", "si": "scipy.integrate"}
REFERENCE = {"ds.": "sc.", "dl.": "sl.", "dst.": "ss.", "dsig.": "ssig.", "dint.": "si.",
             "dnp.": "np."}   # a dualad.scipy row's value must be SciPy's


def namespace():
    ns = {alias: _module(mod) for alias, mod in ALIASES.items()}
    ns.update({k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in SAMPLES.items()})
    return ns


def _head(expr):
    m = re.match(r"\s*([A-Za-z_][\w.]*)\s*\(", expr)
    return m.group(1) if m else None


def resolve(expr, ns):
    """The callable a sample call starts with (``np.linalg.slogdet``), or None."""
    head = _head(expr)
    if head is None:
        return None
    obj = ns[head.split(".")[0]]
    for part in head.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def reference_expr(entry):
    """SciPy's own call for a ``dualad.scipy`` row (its value must match), or None."""
    if entry.ref is not None:
        return entry.ref or None
    for mine, theirs in REFERENCE.items():
        if entry.expr.lstrip().startswith(mine):
            return entry.expr.replace(mine, theirs)
    return None


def alt_expr(entry, ns):
    """``dualad.scipy.special.f`` for a ``scipy.special.f`` row, when dualad has it."""
    head = _head(entry.expr)
    if head and head.startswith("sc.") and hasattr(ns["ds"], head[3:]):
        return "ds." + entry.expr.lstrip()[3:]
    return None


# --- one row, measured ------------------------------------------------------------------
@dataclass
class Result:
    entry: Entry
    forward: str = "FAILS"
    reverse: str = "FAILS"
    sympy: str = "—"
    primitives: tuple = ()
    alt: str | None = None
    detail: list = field(default_factory=list)
    keywords: dict = field(default_factory=dict)   # {keyword: (verdict, call)}: coverage_keywords

    @property
    def pending(self):
        return self.forward == "pending"

    @property
    def ok(self):
        """Every mode gives what the row claims (a pending row claims nothing yet)."""
        return self.pending or (self.forward, self.reverse) == self.entry.claims


def _flat(out):
    """Every floating output leaf, raveled and concatenated (complex as Re, Im)."""
    parts = []
    for leaf in flatten(out)[0]:
        if not isinstance(leaf, (Box, np.ndarray, np.generic, float, complex, int)):
            continue    # dtypes, strings, None: not values
        kind = np.result_type(primal_value(leaf)).kind
        if kind == "f":
            parts.append(dualad.numpy.ravel(leaf))
        elif kind == "c":
            parts += [dualad.numpy.ravel(np.real(leaf)), dualad.numpy.ravel(np.imag(leaf))]
    if not parts:
        return np.zeros(0)
    return parts[0] if len(parts) == 1 else dualad.numpy.concatenate(parts)


def _caller(expr, wrt, ns):
    code = compile(expr, expr, "eval")

    def call(*xs):
        local = dict(ns)
        local.update(zip(wrt, xs))
        return eval(code, local)  # noqa: S307 - the table's own sample calls
    return call


class _Recorder(JVPTrace):
    """A forward sweep that notes every primitive the traced values reach."""

    __slots__ = ("seen",)

    def process(self, prim, args, params):
        self.seen.add(prim.name)
        return super().process(prim, args, params)


def _reached(call, primals):
    trace = _Recorder()
    trace.seen = set()
    try:
        call(*[Dual(trace, p, np.zeros_like(p)) for p in primals])
    finally:
        trace.alive = False
    return tuple(sorted(trace.seen))


def _basis(primals):
    n = sum(p.size for p in primals)
    out, off = [], 0
    for p in primals:
        t = np.zeros((n, p.size))
        t[off:off + p.size] = np.eye(p.size)
        out.append(t.reshape((n,) + p.shape))
        off += p.size
    return out


def _numeric_jacobian(g, primals, rich=False):
    cols = []
    for i, p in enumerate(primals):
        def gi(x, i=i):
            return np.asarray(g(*primals[:i], x, *primals[i + 1:]))
        for e in np.eye(p.size):
            e = e.reshape(p.shape)
            cols.append(numeric.richardson(gi, p, e)[0] if rich else
                        numeric.central_difference(gi, p, e))
    m = np.size(g(*primals))
    return np.stack(cols, axis=1).reshape(m, len(cols)) if m else np.zeros((0, len(cols)))


def _clear_error(e, entry):
    short = entry.name.rsplit(".", 1)[-1].strip("_")
    return short.lower() in str(e).lower()


def _agrees(J, J_num):
    scale = np.maximum(np.abs(J_num), 1.0)
    return bool(np.all(np.abs(J - J_num) <= RTOL * scale))


def _verdict(J, J_num, get_rich):
    if np.all(J == 0):
        if np.all(np.abs(J_num) <= ZERO_ATOL):
            return "zero", ""
        if np.all(np.abs(get_rich()) <= ZERO_ATOL):
            return "zero", ""
        return "FAILS", "zero derivative but the differences are not (a dropped derivative)"
    if _agrees(J, J_num) or _agrees(J, get_rich()):
        return "ok", ""
    err = float(np.max(np.abs(J - get_rich())))
    return "FAILS", f"Jacobian differs from finite differences (max abs error {err:.2e})"


def _close(a, b, rtol=VALUE_RTOL):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=1e-12, equal_nan=True))


def measure(entry, ns=None, whole=True):
    """Run one row in both modes against central differences; a :class:`Result`.
    ``whole=False`` (a keyword probe) skips the primitives reached and the alternative
    call."""
    ns = namespace() if ns is None else ns
    res = Result(entry)
    try:
        resolve(entry.expr, ns)
    except AttributeError as e:
        res.forward = res.reverse = "pending"
        res.detail.append(str(e))
        return res
    call = _caller(entry.expr, entry.wrt, ns)
    primals = [np.asarray(ns[w], dtype=float) for w in entry.wrt]
    g = lambda *xs: _flat(call(*xs))  # noqa: E731
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            plain = np.asarray(g(*primals))
            numeric_J = _Numeric(g, primals)
        except Exception as e:  # noqa: BLE001 - not even the plain call runs
            res.detail.append(f"plain call: {type(e).__name__}: {e}")
            plain = numeric_J = None
        else:
            _check_values(res, entry, ns, plain)
        for mode in ("forward", "reverse"):
            setattr(res, mode, _run_mode(res, mode, g, primals, plain, numeric_J))
        if not whole:
            return res
        try:
            res.primitives = _reached(call, primals)
        except Exception:  # noqa: BLE001 - a call that raises on traced values reaches nothing
            res.primitives = ()
        _check_alt(res, entry, ns, primals)
    if any(d.startswith("value") for d in res.detail):
        res.forward = res.reverse = "FAILS"
    res.sympy = function_sympy_status(res.primitives)
    return res


class _Numeric:
    """Central differences now; Richardson extrapolation when asked (only to decide)."""

    def __init__(self, g, primals):
        self.g, self.primals = g, primals
        self.central = _numeric_jacobian(g, primals)
        self._rich = None

    def rich(self):
        if self._rich is None:
            self._rich = _numeric_jacobian(self.g, self.primals, rich=True)
        return self._rich


def _run_mode(res, mode, g, primals, plain, numeric_J):
    try:
        value, J = _jacobian(mode, g, primals, None if plain is None else plain.size)
    except Exception as e:  # noqa: BLE001
        res.detail.append(f"{mode}: {type(e).__name__}: {str(e)[:200]}")
        return "raises" if _clear_error(e, res.entry) else "FAILS"
    if plain is None:
        res.detail.append(f"{mode}: runs traced although the plain call does not")
        return "FAILS"
    verdict, why = _verdict(J, numeric_J.central, numeric_J.rich)
    if not _close(value, plain, 1e-10):
        verdict, why = "FAILS", "traced value differs from the plain value"
    if why:
        res.detail.append(f"{mode}: {why}")
    return verdict


def _jacobian(mode, g, primals, m):
    n = sum(p.size for p in primals)
    if m is None:            # the plain call failed: just run the mode
        return dualad.jvp(g, tuple(primals), tuple(_basis(primals))) if mode == "forward" \
            else dualad.vjp(g, *primals)
    if mode == "forward":
        value, T = dualad.jvp(g, tuple(primals), tuple(_basis(primals)))
        return value, np.asarray(T).reshape(n, m).T
    value, pullback = dualad.vjp(g, *primals)
    if m == 0:
        return value, np.zeros((0, n))
    cts = pullback(np.eye(m))
    return value, np.concatenate([np.asarray(c).reshape(m, -1) for c in cts], axis=1)


def _check_values(res, entry, ns, plain):
    ref = reference_expr(entry)
    if ref is None:
        return
    try:
        expected = np.asarray(_flat(eval(ref, dict(ns))))  # noqa: S307
    except Exception as e:  # noqa: BLE001
        res.detail.append(f"value: the SciPy reference {ref} raised {type(e).__name__}: {e}")
        return
    if not _close(plain, expected):
        res.detail.append(f"value: differs from SciPy's {ref}")


def _check_alt(res, entry, ns, primals):
    alt = alt_expr(entry, ns)
    if alt is None or res.forward not in ("ok", "zero"):
        return
    tangents = tuple(_basis(primals))
    try:
        g1 = lambda *xs: _flat(_caller(entry.expr, entry.wrt, ns)(*xs))  # noqa: E731
        g2 = lambda *xs: _flat(_caller(alt, entry.wrt, ns)(*xs))  # noqa: E731
        v1, t1 = dualad.jvp(g1, tuple(primals), tangents)
        v2, t2 = dualad.jvp(g2, tuple(primals), tangents)
        same = _close(v1, v2, 1e-14) and _close(t1, t2, 1e-12)
    except Exception as e:  # noqa: BLE001
        same = False
        res.detail.append(f"{alt}: {type(e).__name__}: {e}")
    res.alt = alt if same else None
    if not same:
        res.forward = "FAILS"
        res.detail.append(f"forward: {alt} disagrees with {entry.expr}")


_CACHE = {}


def measure_all(entries=None):
    """Every row measured (cached per process: the table is deterministic)."""
    key = None if entries is None else tuple(entries)
    if key not in _CACHE:
        ns = namespace()
        with _one_blas_thread():
            _CACHE[key] = [measure(e, ns) for e in (ENTRIES if entries is None else entries)]
            for r in _CACHE[key]:
                if r.entry.group in coverage_keywords.GROUPS and not r.pending:
                    r.keywords = coverage_keywords.probe(
                        r.entry, ns, lambda e: measure(e, ns, whole=False))
    return _CACHE[key]


@contextlib.contextmanager
def _one_blas_thread():
    """The sample matrices are 3×3: BLAS threads only contend for the cores, and on a busy
    machine each LAPACK call gets ~30 times slower. The OpenBLAS that NumPy and SciPy
    wheels bundle has a thread-count setter; elsewhere this does nothing."""
    import scipy
    setters = []
    for mod in (np, scipy):
        libs = Path(mod.__file__).resolve().parent.parent / f"{mod.__name__}.libs"
        for path in sorted(libs.glob("*openblas*")):
            try:
                lib = ctypes.CDLL(str(path))
            except OSError:
                continue
            for suffix in ("64_", ""):
                get = getattr(lib, f"scipy_openblas_get_num_threads{suffix}", None)
                put = getattr(lib, f"scipy_openblas_set_num_threads{suffix}", None)
                if get is not None and put is not None:
                    setters.append((put, get()))
                    put(1)
                    break
    try:
        yield
    finally:
        for put, n in setters:
            put(n)


def failures(results):
    return [r for r in results if not r.ok]


def pending(results):
    return sorted({r.entry.name for r in results if r.pending})


# --- the SymPy column ---------------------------------------------------------------------
def _registry_runs_oracle(prim):
    """Whether ``check_rule`` (run on every primitive by ``check_registry``) compares this
    primitive with ``sympy.diff``: its own sample loop, with the comparisons stubbed out to
    count the calls (which samples qualify is the rule checker's decision, not ours)."""
    from . import rules, symbolic
    calls = []
    saved = symbolic.compare, symbolic.compare_at
    symbolic.compare = lambda *a, **k: calls.append(1) or (True, "probe")
    symbolic.compare_at = lambda *a, **k: calls.append(1) or True
    try:
        rng = np.random.default_rng(0)
        nondiff = set(prim.nondiff_argnums)
        for smp in rules.default_samples(prim):
            vals, diff = rules._materialize(smp, rng, nondiff)
            if not any(np.iscomplexobj(vals[i]) for i in diff):
                rules._check_sympy(rules.RuleReport(prim.name), prim, prim, vals, diff,
                                   dict(smp.get("params", {})), "probe", smp)
            if calls:
                return True
    finally:
        symbolic.compare, symbolic.compare_at = saved
    return False


def _oracle_here(prim):
    """The rules on symbols (forward and reverse) against ``sympy.diff``, both evaluated
    at the primitive's smallest real sample: with NumPy if it can, else with SciPy
    evaluating SymPy's special functions. ``"numpy"``/``"scipy"`` (which evaluated) if
    they agree, False if not, None without a real sample."""
    import sympy
    from . import rules
    from .symbolic import rules_jacobian, sympy_jacobian
    rng = np.random.default_rng(0)
    best = None
    for smp in rules.default_samples(prim):
        vals, diff = rules._materialize(smp, rng, set(prim.nondiff_argnums))
        if diff and not any(np.iscomplexobj(vals[i]) for i in diff):
            size = sum(np.size(vals[i]) for i in diff)
            if best is None or size < best[0]:
                best = (size, vals, diff, dict(smp.get("params", {})))
    if best is None:
        return None
    _, vals, diff, kw = best
    f = lambda *xs: prim(*fill_arguments(vals, diff, xs), **kw)  # noqa: E731
    shapes = [np.shape(vals[i]) for i in diff]
    point = [float(c) for i in diff for c in np.ravel(vals[i])]
    J_sym, xs = sympy_jacobian(f, shapes)
    names = {str(s): s for s in xs}
    J_ads = []
    for mode in ("forward", "reverse"):
        J_ad, xs2 = rules_jacobian(f, shapes, mode=mode)
        J_ads.append(J_ad.xreplace({s: names[str(s)] for s in xs2}))
    for modules in ("numpy", ["scipy", "numpy"]):
        try:
            ev = [np.asarray(sympy.lambdify(xs, J, modules=modules)(*point))
                  for J in [J_sym] + J_ads]
            ev = [e.astype(complex if any(np.iscomplexobj(v) for v in ev) else float)
                  for e in ev]
        except Exception:  # noqa: BLE001 - NumPy lacks the function: SciPy evaluates it
            if modules == "numpy":
                continue
            raise
        if all(np.allclose(J, ev[0], rtol=1e-9, atol=1e-12) for J in ev[1:]):
            return "numpy" if modules == "numpy" else "scipy"
        return False
    return False


_SYMPY = {}
ORACLE_LABELS = {"registry": "oracle", "numpy": "oracle (here)",
                 "scipy": "oracle (here, SciPy-evaluated)"}


def sympy_status(name):
    """A registered primitive's SymPy status: ``oracle`` (``check_registry`` compares its
    rules with ``sympy.diff``), ``oracle (here)`` / ``oracle (here, SciPy-evaluated)``
    (it has a translation that checker does not reach or cannot evaluate, so the
    comparison is run here), ``n/a (...)``, ``—`` (no translation) or ``FAILS``."""
    if name not in _SYMPY:
        prim = REGISTRY[name]
        if prim.zero_derivative or getattr(prim, "stops_gradient", False):  # (stop_gradient)
            status = "n/a (zero derivative)"
        elif prim.sympy is None:
            status = "—"
        elif _registry_runs_oracle(prim):
            status = ORACLE_LABELS["registry"]
        else:
            try:
                how = _oracle_here(prim)
            except Exception:  # noqa: BLE001 - a translation SymPy cannot run is a failure
                how = False
            status = "n/a (complex only)" if how is None else \
                ORACLE_LABELS.get(how, "FAILS")
        _SYMPY[name] = status
    return _SYMPY[name]


def function_sympy_status(primitives):
    """A row's SymPy column from the statuses of the primitives it reaches."""
    diff = [p for p in primitives if not REGISTRY[p].zero_derivative]
    if not diff:
        return "n/a"
    status = {p: sympy_status(p) for p in diff}
    if "FAILS" in status.values():
        return "FAILS"
    without = sorted(p for p, s in status.items() if not s.startswith("oracle"))
    if len(without) == len(diff):
        return "—"
    if without:
        return "partial (no SymPy: " + ", ".join(without) + ")"
    return "oracle (SciPy-evaluated)" if ORACLE_LABELS["scipy"] in status.values() \
        else "oracle"


def _defining_modules():
    """Primitive name -> the dualad module that declares it (read from the sources)."""
    root = Path(dualad.__file__).parent
    direct = re.compile(r"Primitive\(\s*[\"'](\w+)[\"']")
    assigned = re.compile(r"^(\w+?)(?:_p)?\s*=\s*(?:register\()?[\w.]+\(\s*[\"'](\w+)[\"']",
                          re.M)
    found = {}
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        mod = ".".join(("dualad",) + path.relative_to(root).with_suffix("").parts)
        for m in direct.finditer(text):
            found.setdefault(m.group(1), mod)
        for m in assigned.finditer(text):
            if m.group(1) == m.group(2):
                found.setdefault(m.group(2), mod)
    return found


def primitive_rows(results=None):
    """One row per registered primitive: name, module, JVP, VJP, SymPy, rows reaching it."""
    reached = {}
    for r in results or []:
        for p in r.primitives:
            reached[p] = reached.get(p, 0) + 1
    modules = _defining_modules()
    rows = []
    for name in sorted(REGISTRY):
        prim = REGISTRY[name]

        def rule(rules, whole):
            if prim.zero_derivative or getattr(prim, "stops_gradient", False):
                return "zero"
            return ("linear " if prim.linear else "") + "rule" if (rules or whole) else "—"
        rows.append(dict(name=name, module=modules.get(name, "?"),
                         jvp=rule(JVP.get(prim), JVP_ALL.get(prim)), vjp=rule(VJP.get(prim), VJP_ALL.get(prim)),
                         vmap=_vmap_cell(prim), jit=jit_kind(prim), sympy=sympy_status(name),
                         reached=reached.get(name, 0)))
    return rows


def _vmap_cell(prim):
    """The vmap column: rule / derived / loop (``verification.batching.vmap_kind``)."""
    kind = vmap_kind(prim)
    return kind.replace(" (loops over a batched argument ", ", loops over ").rstrip(")") \
        if kind.startswith("rule (") else kind


# --- is every function in the table? -----------------------------------------------------
def missing_entries(entries=ENTRIES):
    """Public functions of dualad with no row: NumPy/SciPy callables of the front end's
    dispatch tables, and the functions of ``dualad.scipy.*`` that SciPy has by that name."""
    import scipy
    from dualad.extend import NUMPY_FUNCTIONS as FUNCTIONS, NUMPY_UFUNCS as UFUNCS
    ns = namespace()
    names, covered = {e.name for e in entries}, set()
    for e in entries:
        try:
            covered.add(id(resolve(e.expr, ns)))
        except AttributeError:
            pass
    missing = {qualified_name(fn) for fn in list(UFUNCS) + list(FUNCTIONS)
               if id(fn) not in covered and not fn.__name__.startswith("_")}
    for alias, sub in (("ds", "special"), ("dl", "linalg"), ("dsig", "signal"),
                       ("dint", "integrate"), ("dst", "stats")):
        mine, theirs = ns[alias], importlib.import_module(f"scipy.{sub}")
        for attr in [] if isinstance(mine, _Missing) else dir(mine):
            obj = getattr(mine, attr)
            if attr.startswith("_") or not hasattr(theirs, attr) or isinstance(obj, type(scipy)):
                continue
            if sub != "stats":
                if callable(obj):
                    missing.add(f"scipy.{sub}.{attr}")
                continue
            missing |= {f"scipy.stats.{attr}.{m}" for m in dir(obj) if not m.startswith("_")
                        and callable(getattr(obj, m)) and hasattr(getattr(theirs, attr), m)}
    return sorted(missing - names)


# --- the document ---------------------------------------------------------------------------
def _cell(text):
    return str(text).replace("|", "\\|")


def _counts(results):
    c = {"functions": len({r.entry.name for r in results}), "rows": len(results)}
    for mode in ("forward", "reverse"):
        c[f"{mode} ok"] = sum(getattr(r, mode) == "ok" for r in results)
    for verdict in ("zero", "raises", "pending"):
        c[verdict] = sum(r.forward == verdict or r.reverse == verdict for r in results)
    c["FAILS"] = sum("FAILS" in (r.forward, r.reverse) for r in results)
    c["SymPy oracle"] = sum(r.sympy.startswith("oracle") for r in results)
    return c


def _sample_text(name, value):
    value = np.asarray(value)
    text = f"`{np.round(value, 4).tolist()}`"
    return text + (f" (`{SAMPLE_NOTES[name]}`)" if name in SAMPLE_NOTES else "")


def render(results):
    """The Markdown document (docs/coverage.md)."""
    out = [HEADER.strip(), ""]
    out += ["| name | value |", "|---|---|"]
    out += [f"| `{k}` | {_cell(_sample_text(k, v))} |" for k, v in SAMPLES.items()]
    keys = list(_counts(results))
    out += ["", "## Summary", "", "| namespace | " + " | ".join(keys) + " |",
            "|---" * (len(keys) + 1) + "|"]
    by_group = {g: [r for r in results if r.entry.group == g] for g in GROUPS}
    for g, rs in list(by_group.items()) + [("**total**", results)]:
        out.append(f"| {g} | " + " | ".join(str(v) for v in _counts(rs).values()) + " |")
    for g, rs in by_group.items():
        c = _counts(rs)
        out += ["", f"## {g}", "",
                f"{c['functions']} functions in {c['rows']} rows: forward ok "
                f"{c['forward ok']}, reverse ok "
                f"{c['reverse ok']}, zero by design {c['zero']}, raises {c['raises']}, "
                f"pending {c['pending']}, FAILS {c['FAILS']}; SymPy oracle on "
                f"{c['SymPy oracle']}.", "",
                "| function | sample call | w.r.t. | forward | reverse | SymPy | primitives "
                "| keywords |", "|---|---|---|---|---|---|---|---|"]
        for r in rs:
            call = f"`{r.entry.expr}`" + (f" = `{r.alt}`" if r.alt else "")
            out.append("| " + " | ".join(_cell(c) for c in (
                r.entry.name, call, ", ".join(r.entry.wrt), _mark(r.forward),
                _mark(r.reverse), r.sympy, ", ".join(r.primitives) or "—",
                coverage_keywords.cell(r.keywords))) + " |")
    kc = coverage_keywords.counts(r.keywords for r in results)
    out += ["", "## Keywords", "", f"Documented keywords tried on the NumPy and SciPy rows "
            f"(the keywords column): {kc['ok']} work, {kc['raises']} raise a clear error, "
            f"{kc['untried']} untried (no sample value NumPy accepts there), {kc['RAW']} "
            f"unclear errors, {kc['FAILS']} wrong values or derivatives."]
    rows = primitive_rows(results)
    out += ["", f"## Registered primitives ({len(rows)})", "", PRIMITIVES_NOTE.strip(), "",
            "| primitive | module | JVP | VJP | vmap | jit | SymPy | rows reaching it |",
            "|---|---|---|---|---|---|---|---|"]
    out += [f"| {p['name']} | {p['module']} | {p['jvp']} | {p['vjp']} | {p['vmap']} | "
            f"{p['jit']} | {p['sympy']} | {p['reached']} |" for p in rows]
    return "\n".join(out) + "\n"


def _mark(verdict):
    return "**FAILS**" if verdict == "FAILS" else verdict


def main(argv=None):
    import argparse
    parser = argparse.ArgumentParser(prog="python -m dualad.verification.coverage",
                                     description="Measure dualad's coverage table.")
    parser.add_argument("--write", metavar="PATH", help="write the Markdown document here")
    parser.add_argument("--write-signatures", metavar="PATH",
                        help="write the keyword column's parameter snapshot here "
                             "(verification/coverage_signatures.py) and exit")
    args = parser.parse_args(argv)
    if args.write_signatures:
        coverage_keywords.write_signatures(args.write_signatures, namespace(), ENTRIES)
        return 0
    results = measure_all()
    text = render(results)
    if args.write:
        Path(args.write).write_text(text, encoding="utf-8")
        print(f"wrote {args.write} ({len(results)} rows)")
    else:
        print(text)
    bad = failures(results)
    for r in bad:
        print(f"FAILED {r.entry.name}: {r.entry.expr} forward {r.forward}, reverse {r.reverse}"
              f" (claims {'/'.join(r.entry.claims)}); " + "; ".join(r.detail), file=sys.stderr)
    if pending(results):
        print(f"pending (not in dualad yet): {', '.join(pending(results))}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
