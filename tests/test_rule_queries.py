"""Rules don't know who runs them: they ask :mod:`dualad.core.values`, the one interpreter
query, and the answer comes from the value's own trace (``Box``/``Trace`` methods with a
plain value's default, overridden by the batching and staging interpreters).

(a) statically (``ast``, as ``test_layering.py``): no module under ``dualad/ops``,
``dualad/core``, ``dualad/scipy`` or ``dualad/array_api`` imports an interpreter
(``dualad.interpreters``), the NumPy front end (``dualad.frontend``), the
transformations (``dualad.transforms``) or the extension surface that re-exports them
(``dualad.extend``), but for the exceptions listed below;
(b) behaviour: each query's answer on a plain array, under vmap, jit, grad and jvp (and
vmap of grad, where the batch sits under a derivative's box).
"""
import numpy as np
import pytest

import dualad
import import_graph
from dualad.core.boxes import PrimalBox
from dualad.core.tracer import Box, Trace
from dualad.core import values as Q

RULE_TREES = ("dualad.ops", "dualad.core", "dualad.scipy", "dualad.array_api")
ABOVE = ("dualad.interpreters", "dualad.frontend", "dualad.transforms",
         "dualad.extend")   # extend re-exports interpreters: no back door through it

# (importing module, imported module): why it is allowed, for now.
EXCEPTIONS: dict[tuple[str, str], str] = {}   # none (array_types moved into the core)
# The SciPy front ends differentiate the user's function (the ODE right-hand side, the
# integrand, the optimizer's objective) with jvp/vjp/grad/custom_root as a user calls
# them: a use of the transformations, not a rule asking how it is run. Listed so that a
# new one is seen (and no interpreter is ever reached this way).
SCIPY_USES_TRANSFORMS = {
    ("dualad.scipy._ivp", "dualad.transforms.api"),
    ("dualad.scipy._ivp_events", "dualad.transforms.api"),
    ("dualad.scipy.integrate", "dualad.transforms.api"),
    ("dualad.scipy._quadrature", "dualad.transforms.api"),
    ("dualad.scipy.optimize._stationary", "dualad.transforms.api"),
    ("dualad.scipy.optimize._common", "dualad.transforms.implicit"),
    # solve_ivp's rules replay their augmented dynamics through dualad.jit (Replayed,
    # jit with a fallback), taken from the public extension surface
    ("dualad.scipy._ivp", "dualad.extend"),
}


def _under(name, trees):
    return any(name == t or name.startswith(t + ".") for t in trees)


def upward_imports():
    """``{(source, target): line}`` for every import from a rule tree into a tree above."""
    found = {}
    for imp in import_graph.imports():
        if _under(imp.source, RULE_TREES) and _under(imp.target, ABOVE):
            found.setdefault((imp.source, imp.target), imp.line)
    return found


def test_rules_import_no_interpreter_front_end_or_transformation():
    found = upward_imports()
    bad = {edge: line for edge, line in found.items()
           if edge not in EXCEPTIONS and edge not in SCIPY_USES_TRANSFORMS}
    assert not bad, "rules that import what runs them (ask dualad.core.values instead):\n" + \
        "\n".join(f"  {s} (line {line}) imports {t}" for (s, t), line in sorted(bad.items()))
    assert not any(_under(t, ("dualad.interpreters",)) for _, t in found), found
    stale = (set(EXCEPTIONS) | SCIPY_USES_TRANSFORMS) - set(found)
    assert not stale, f"listed exceptions no longer needed, remove them: {sorted(stale)}"


def test_the_check_sees_a_late_import(tmp_path):
    """Imports inside functions count (a late import that dodges a cycle is still one)."""
    path = tmp_path / "rule.py"
    path.write_text("def f():\n    from ..interpreters.batching.tracer import BatchTracer\n")
    known = {"dualad.ops.rule": (path, False),
             "dualad.interpreters.batching.tracer": (path, False)}
    targets = [imp.target for imp in import_graph.imports(known)]
    assert "dualad.interpreters.batching.tracer" in targets


def test_values_imports_no_interpreter():
    assert not [t for (s, t) in upward_imports() if s == "dualad.core.values"]


# --- (b) behaviour -------------------------------------------------------------------

X = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -6.0]])
x = X[0]
MODES = ("plain", "vmap", "jit", "grad", "jvp", "vmap(grad)")


def run(mode, body):
    """Call ``body(v)`` on the input as ``mode`` presents it; returns ``(answers, out)``:
    what ``body`` returned (its ``"answers"`` entry, plain Python values read at trace
    time) and the transformation's output (``body``'s ``"out"``, a value to return)."""
    seen = {}

    def f(v):
        got = body(v)
        seen.update(got.get("answers", {}))
        out = got.get("out")
        return np.sum(v * v) if out is None else out

    def scalar(v):
        f(v)
        return np.sum(v * v)

    if mode == "plain":
        out = f(x)
    elif mode == "vmap":
        out = dualad.vmap(f)(X)
    elif mode == "jit":
        out = dualad.jit(f)(x)
    elif mode == "grad":
        out = dualad.grad(scalar)(x)
    elif mode == "jvp":
        out = dualad.jvp(f, (x,), (np.ones(3),))[0]
    else:
        out = dualad.vmap(dualad.grad(scalar))(X)
    return seen, out


@pytest.mark.parametrize("mode", MODES)
def test_is_batched(mode):
    seen, _ = run(mode, lambda v: {"answers": {"a": Q.is_batched(v), "b": Q.is_batched([1.0, v]),
                                               "c": Q.is_batched({"k": v})}})
    want = mode in ("vmap", "vmap(grad)")
    assert seen == {"a": want, "b": want, "c": want}


@pytest.mark.parametrize("mode", MODES)
def test_is_staged_staged_only_staged_unbatched(mode):
    seen, _ = run(mode, lambda v: {"answers": {
        "staged": Q.is_staged(v), "in_list": Q.is_staged((v, 1.0)),
        "only": Q.staged_only(v), "unbatched": Q.staged_unbatched(v)}})
    jit = mode == "jit"
    assert seen == {"staged": jit, "in_list": jit, "only": jit, "unbatched": jit}


@pytest.mark.parametrize("mode", MODES)
def test_map_value(mode):
    """``fn`` of each example's plain value, with no derivative."""
    def body(v):
        m = Q.map_value(v, lambda a: a > 0.0)
        return {"answers": {"boxed": isinstance(m, Box)},
                "out": m if mode in ("vmap", "plain", "jit") else None}
    seen, out = run(mode, body)
    assert seen["boxed"] == (mode in ("vmap", "vmap(grad)"))   # only the batch stays
    if mode in ("vmap", "plain", "jit"):
        np.testing.assert_array_equal(out, (X if mode == "vmap" else x) > 0.0)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("query", ["nondiff_value", "staged_value"])
def test_values_without_derivative(mode, query):
    """``nondiff_value``: the value, no derivative box, the batch kept; ``staged_value``
    the same, but a jit trace's box kept so that what is computed from it is recorded."""
    def body(v):
        w = getattr(Q, query)(v)
        return {"answers": {"boxed": isinstance(w, Box), "staged": Q.is_staged(w),
                            "batched": Q.is_batched(w)},
                "out": 2.0 * w if mode in ("vmap", "plain", "jit") else None}
    seen, out = run(mode, body)
    batched = mode in ("vmap", "vmap(grad)")
    kept_jit = query == "staged_value" and mode == "jit"
    assert seen == {"boxed": batched or kept_jit, "staged": kept_jit, "batched": batched}
    if mode in ("vmap", "plain", "jit"):
        np.testing.assert_array_equal(out, 2.0 * (X if mode == "vmap" else x))
    if mode == "grad":   # no derivative flows through it
        g = dualad.grad(lambda v: np.sum(getattr(Q, query)(v) * v))(x)
        np.testing.assert_allclose(g, x)


@pytest.mark.parametrize("mode", MODES)
def test_per_example(mode):
    """A function of plain values, once per example: ``y_b = fn(x_b)``."""
    def body(v):
        k = Q.per_example(np.argmax, (v,), {})
        return {"answers": {"batched": Q.is_batched(k),
                            "k": None if isinstance(k, Box) else int(k)},
                "out": k if mode == "vmap" else None}
    seen, out = run(mode, body)
    if mode in ("vmap", "vmap(grad)"):
        assert seen["batched"]
    else:
        assert seen == {"batched": False, "k": int(np.argmax(x))}
    if mode == "vmap":
        np.testing.assert_array_equal(out, np.argmax(X, axis=1))


def test_per_example_names_a_ragged_result():
    with pytest.raises(ValueError, match="vmap of nonzero"):
        dualad.vmap(lambda v: Q.per_example(np.flatnonzero, (v > 0.7,), name="nonzero"))(X)


@pytest.mark.parametrize("mode", MODES)
def test_looped_call(mode):
    """A differentiable function, once per example; its derivative stays."""
    calls = []

    def square(a):
        calls.append(np.shape(a))
        return a * a

    def body(v):
        return {"out": np.sum(Q.looped_call(square, v))}

    if mode == "vmap(grad)":   # the batch under grad's box cannot be sliced from here
        with pytest.raises(NotImplementedError, match="reads its arguments' values"):
            run(mode, body)
        return
    _, out = run(mode, body)
    if mode == "vmap":
        np.testing.assert_allclose(out, np.sum(X * X, axis=1))
        assert calls == [(3,), (3,)]           # one call per example
    elif mode == "grad":
        np.testing.assert_allclose(out, 2 * x)
    elif mode == "jvp":
        np.testing.assert_allclose(out, np.sum(x * x))
        t = dualad.jvp(lambda v: np.sum(Q.looped_call(square, v)), (x,), (np.ones(3),))[1]
        np.testing.assert_allclose(t, np.sum(2 * x))
    else:
        np.testing.assert_allclose(out, np.sum(x * x))
        assert len(calls) == 1


@pytest.mark.parametrize("mode", MODES)
def test_any_true_all_true(mode):
    seen, _ = run(mode, lambda v: {"answers": {"any": Q.any_true(v > 3.5),
                                               "all": Q.all_true(v > -2.5)}})
    over = X if mode in ("vmap", "vmap(grad)") else x   # under vmap: the whole batch
    assert seen == {"any": bool(np.any(over > 3.5)), "all": bool(np.all(over > -2.5))}


def test_jit_records_any_true_as_its_truth():
    """Under jit only the answer is guarded: another input with the same answer replays."""
    traces = []

    def f(v):
        traces.append(1)
        return np.where(v > 0.0, v, 0.0) * (2.0 if Q.any_true(v > 10.0) else 1.0)
    g = dualad.jit(f)
    np.testing.assert_allclose(g(x), np.maximum(x, 0.0))
    np.testing.assert_allclose(g(x + 1.0), np.maximum(x + 1.0, 0.0))
    assert len(traces) == 1


class CountTrace(Trace):
    """A new interpreter, unknown to core.values: counts the primitive calls on its values."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def process(self, prim, args, params):
        self.calls += 1
        inner = [a.primal if isinstance(a, CountBox) and a._trace is self else a for a in args]
        out = prim(*inner, **params)
        if isinstance(out, tuple):
            return tuple(CountBox(self, o) for o in out)
        return CountBox(self, out)


class CountBox(PrimalBox):
    __slots__ = ()


@pytest.mark.parametrize("mode", ["plain", "vmap", "jit"])
def test_a_new_interpreter_answers_by_default(mode):
    """A box of an interpreter the query has never heard of answers what the value it
    wraps answers (Box's defaults): no edit of core.values, no override needed."""
    def body(v):
        trace = CountTrace()
        c = np.sin(CountBox(trace, v))
        m = Q.map_value(c, lambda a: a > 0.0)
        k = Q.per_example(np.argmax, (c,), {})
        return {"answers": {"calls": trace.calls, "batched": Q.is_batched(c),
                            "staged": Q.is_staged(c), "count_box_dropped":
                            not isinstance(m, CountBox) and not isinstance(k, CountBox)},
                "out": m if mode != "jit" else None}
    seen, out = run(mode, body)
    assert seen == {"calls": 1, "batched": mode == "vmap", "staged": mode == "jit",
                    "count_box_dropped": True}
    if mode != "jit":
        np.testing.assert_array_equal(out, np.sin(X if mode == "vmap" else x) > 0.0)
