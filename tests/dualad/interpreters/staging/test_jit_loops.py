"""Loop rolling in dualad.jit (dualad.interpreters.staging.loops): a body repeated in the trace is
compiled once, as a loop, and the rolled program gives bitwise the unrolled program's
results."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dualad
from dualad.interpreters.staging import loops
from dualad.interpreters.staging.codegen import compile_program


@pytest.fixture(autouse=True)
def small_runs(monkeypatch):
    """Roll the small loops of these tests too (the default skips runs under 256 items)."""
    monkeypatch.setattr(loops, "MIN_ROLLED", 16)
    monkeypatch.setattr(loops, "MIN_BODY", 2)


def _bits(out):
    out = out if isinstance(out, tuple) else (out,)
    return [np.asarray(o).tobytes() + str(np.asarray(o).dtype).encode() for o in out]


def rolled_and_unrolled(f, *args):
    """``(jitted, rolled outputs, unrolled outputs)``: the same recorded program compiled
    with loops rolled (the jitted call) and as recorded (one line per equation)."""
    j = dualad.jit(f)
    j(*args)
    compiled = j._compiled_for(args, {})
    got = compiled.fn(*args)     # the rolled replay itself (a call could fall back to f)
    got = compiled.rebuild(got)
    plain, _ = compile_program(compiled.program, "unrolled")
    return j, got, plain(*args)


def assert_same(f, *args, rolled=True):
    j, got, ref = rolled_and_unrolled(f, *args)
    ref_leaves = ref if len(ref) > 1 else ref[0]
    assert _bits(got) == _bits(ref_leaves)
    src = j.source(*args)
    assert ("_loop0" in src) is rolled, src
    return j, got


def lstm_like(steps, b=5):
    rng = np.random.default_rng(0)
    seq = rng.random((steps + 1, b))
    h0 = rng.random(b)

    def f(w, u):
        h, c = h0, np.zeros(b)
        total = 0.0
        for t in range(steps):
            z = seq[t] * w[0] + h * w[1] + u
            gate = 1.0 / (1.0 + np.exp(-z))
            c = c * gate + (1.0 - gate) * np.tanh(z)
            h = gate * np.tanh(c)
            total = total + np.sum(seq[t + 1] * np.log(1.0 + np.exp(h)))
        return -total / steps
    return f, rng.random((2, b)), rng.random(b)


def test_lstm_like_gradient_rolled_bitwise():
    f, w, u = lstm_like(40)
    g = dualad.grad(f, argnums=(0, 1))
    j, got = assert_same(g, w, u)
    want = g(w, u)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-13)
    # replays agree with the first call, and with new inputs
    assert _bits(j(w, u)) == _bits(got)
    w2 = w + 0.25
    _, got2, ref2 = rolled_and_unrolled(g, w2, u)
    assert _bits(j(w2, u)) == _bits(ref2)


def test_source_is_O_body_not_O_steps():
    lines = []
    for steps in (30, 120):
        f, w, u = lstm_like(steps)
        j = dualad.jit(dualad.grad(f, argnums=(0, 1)))
        lines.append(j.source(w, u).count("\n"))
    assert lines[0] == lines[1], lines


def rk4(steps, dt=0.05):
    def f(y, k):
        t = 0.0
        for _ in range(steps):
            def rhs(y, t):
                return -k * y + np.sin(t) * y[::-1]
            a = rhs(y, t)
            b = rhs(y + 0.5 * dt * a, t + 0.5 * dt)
            c = rhs(y + 0.5 * dt * b, t + 0.5 * dt)
            d = rhs(y + dt * c, t + dt)
            y = y + dt / 6.0 * (a + 2.0 * b + 2.0 * c + d)
            t = t + dt     # a Python float: a constant that differs per step
        return np.sum(y ** 2)
    return f


def test_rk4_with_per_step_constants_and_closure():
    f = rk4(25)
    y0, k = np.array([1.0, -0.5, 0.25]), np.array([0.3, 0.1, 0.2])
    assert_same(f, y0, k)
    assert_same(dualad.grad(f, argnums=(0, 1)), y0, k)


def test_guard_inside_body_checked_every_step():
    def f(x):
        for t in range(20):
            if np.sum(x) > 0:      # a guard in every block
                x = np.sin(x) + 1.0
            else:
                x = np.cos(x) - 1.0
        return x
    x = np.array([0.5, 0.25])
    j, _ = assert_same(f, x)
    # a replay whose guard fails at some step retraces: the answer is f's
    y = np.array([-3.0, -3.0])
    np.testing.assert_array_equal(j(y), f(y))
    assert sum(j.cache_info().values()) == 2


def test_nested_loops_rolled_at_both_levels():
    def f(x, w):
        for t in range(12):
            for i in range(10):
                x = np.tanh(x * w + 0.5)
            x = x[::-1] * 0.9
        return x
    x, w = np.array([0.1, 0.2, 0.3]), np.array([1.5, -0.5, 0.75])
    j, _ = assert_same(f, x, w)
    src = j.source(x, w)
    assert "_loop0_loop0" in src or "_loop1" in src, src
    assert_same(dualad.grad(lambda x, w: np.sum(f(x, w))), x, w)


@pytest.mark.parametrize("steps", [1, 2, 3])
def test_short_loops(steps):
    def f(x):
        for _ in range(steps):
            x = np.exp(-x) * 0.5 + np.sin(x) * np.cos(x) - x * x
            x = x / (1.0 + x * x) + np.tanh(x)
        return x
    x = np.array([0.3, 0.7])
    assert_same(f, x, rolled=steps >= 2)


def test_almost_periodic_wiring_not_rolled_wrongly():
    """Block 6 reads the value of two blocks back where the others read the previous
    block's: the same primitives and shapes, another wiring."""
    def f(x):
        prev = prev2 = x
        for t in range(12):
            src = prev2 if t == 6 else prev
            y = np.sin(src) * 0.5 + np.cos(prev) * 0.25
            y = y * y + 0.1
            prev2, prev = prev, y
        return prev
    x = np.array([0.2, 0.4])
    j, got = assert_same(f, x)
    assert _bits(got) == _bits(f(x))
    assert _bits(j(x)) == _bits(f(x))
    # two loops: the steps before the odd one, and those from it on
    assert "_loop1" in j.source(x)


def test_signed_zero_constants_are_per_step():
    """-0.0 and 0.0 compare equal; a constant that is one or the other per step must
    not be taken for one constant."""
    zeros = [0.0 if t % 3 else -0.0 for t in range(12)]

    def f(x):
        for t in range(12):
            x = np.exp(x * 0.5) - 1.0
            x = x * zeros[t] + x
            x = np.copysign(x, x * zeros[t] - 1.0)
        return x
    x = np.array([0.3, -0.2])
    _, got = assert_same(f, x)
    assert _bits(got) == _bits(f(x))


def test_index_param_per_step_stays_unrolled_and_right():
    def f(x):
        s = 0.0
        for t in range(16):
            s = s + np.sin(x[t]) * np.cos(x[t])
        return s
    x = np.linspace(0.0, 1.0, 16)
    j, got, ref = rolled_and_unrolled(f, x)
    assert _bits(got) == _bits(ref[0])


@settings(derandomize=True, max_examples=12, deadline=None)
@given(st.lists(st.sampled_from(["sin", "mul", "add", "back", "const"]), min_size=1,
                max_size=6),
       st.integers(min_value=1, max_value=9), st.integers(min_value=0, max_value=8))
def test_random_bodies_bitwise(ops, steps, odd):
    """Random step bodies, one step (``odd``) wired differently when it is in range."""
    c = np.linspace(0.5, 1.5, 10)

    def f(x):
        prev = x
        for t in range(steps):
            y = x
            for op in ops:
                if op == "sin":
                    y = np.sin(y)
                elif op == "mul":
                    y = y * 0.75
                elif op == "add":
                    y = y + (prev if t != odd else x)
                elif op == "back":
                    y = y[::-1]
                else:
                    y = y * c[t]
            prev, x = x, y + 0.1
        return x
    x = np.array([0.1, -0.3, 0.7])
    j, got, ref = rolled_and_unrolled(f, x)
    assert _bits(got) == _bits(ref[0])
    assert _bits(got) == _bits(f(x))


def test_state_replaced_by_a_value_computed_once():
    """The loop's state becomes, from step 1 on, a value the same in every step (computed
    once, before the loop), and that value is returned too."""
    def f(x, w):
        state = x * 2.0
        acc = x
        for t in range(10):
            acc = np.sin(acc) + state * 0.5
            acc = acc * acc - 0.25
            state = np.cos(w) * 3.0
        return acc, state
    x, w = np.array([0.1, 0.2]), np.array([0.3, 0.4])
    _, got = assert_same(f, x, w)
    assert _bits(got) == _bits(f(x, w))


def test_per_step_values_computed_before_the_loop():
    """Each step reads its own traced value made before the loop (packed into one list)."""
    def f(x):
        parts = [x * float(i + 1) for i in range(12)]
        y = x
        for t in range(12):
            y = np.tanh(y * 0.5 + parts[t]) * 0.75
            y = y - np.exp(-y)
        return y
    x = np.array([0.1, -0.2, 0.3])
    _, got = assert_same(f, x)
    assert _bits(got) == _bits(f(x))


def test_an_unknown_primitive_name_does_not_load_the_lazy_families():
    """The code generator asks the registry about every primitive; a name it lacks (a
    rolled loop's ``loop``, a user's primitive) must not cost the lazy families' import
    (seconds) on a jitted function's first call."""
    import subprocess
    import sys
    code = ("import sys\n"
            "import dualad\n"
            "from dualad.interpreters.staging.passes import known\n"
            "primitive = sys.modules['dualad.core.primitive']\n"
            "class P:\n"
            "    name = 'no_such_primitive_anywhere'\n"
            "assert known(P()) is None\n"
            "print(primitive._families['loaded'])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False", out.stdout + out.stderr
