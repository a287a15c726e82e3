"""A reverse sweep's adjoint is a partial sum until its last contribution arrives: which
step completes each adjoint, counted from the graph (dualad.teaching._evalsteps), and how
the teaching page marks the partial ones ("+ …", "partial: i of n"), step by step.

Expected values are derived by hand from the functions' formulas, not from dualad."""
import json
import math
import re

import numpy as np
import pytest

from dualad.teaching import html_page, trace
from dualad.teaching._evalsteps import contributions, sweep_steps, uses

X1, X2 = 2.0, 5.0


def f(x1, x2):
    """Baydin et al. (JMLR 2018), Table 3: x1 and x2 are each used twice."""
    return np.log(x1) + x1 * x2 - np.sin(x2)


def panel_data(page):
    return [json.loads(b) for b in re.findall(
        r'<script type="application/json" class="dt-data">(.*?)</script>', page, flags=re.S)]


@pytest.fixture(scope="module")
def survey():
    return trace(f, X1, X2, mode="reverse", names=["x1", "x2"])


def test_uses_are_counted_on_the_graph(survey):
    # v_1 = ln v_-1, v_2 = v_-1 × v_0, v_3 = v_1 + v_2, v_4 = sin v_0, v_5 = v_3 − v_4
    assert uses(survey) == {"v_-1": 2, "v_0": 2, "v_1": 1, "v_2": 1, "v_3": 1, "v_4": 1,
                            "v_5": 0}
    # v_1 = v_0 × v_0 uses x twice, v_2 = v_1 × v_0 once more
    cube = trace(lambda x: x * x * x, 2.0, mode="reverse")
    assert uses(cube) == {"v_0": 3, "v_1": 1, "v_2": 0}


# The survey's adjoint rows in sweep order: (node, via, i of n, final, value by hand).
# v̄_5 = 1; v̄_3 = 1; v̄_4 = −1; v̄_0 = v̄_4 cos x2 (1 of 2); v̄_1 = 1; v̄_2 = 1;
# v̄_-1 = v̄_2 x2 (1 of 2); v̄_0 += v̄_2 x1 (2 of 2); v̄_-1 += v̄_1 / x1 (2 of 2).
SURVEY_ROWS = [
    ("v_3", "v_5", 1, 1, True, 1.0),
    ("v_4", "v_5", 1, 1, True, -1.0),
    ("v_0", "v_4", 1, 2, False, -math.cos(X2)),
    ("v_1", "v_3", 1, 1, True, 1.0),
    ("v_2", "v_3", 1, 1, True, 1.0),
    ("v_-1", "v_2", 1, 2, False, X2),
    ("v_0", "v_2", 2, 2, True, X1 - math.cos(X2)),
    ("v_-1", "v_1", 2, 2, True, X2 + 1 / X1),
]


def test_which_row_completes_each_adjoint(survey):
    got = contributions(survey)
    rows = [(survey.rows[k].node, survey.rows[k].via, *got[k], float(survey.rows[k].value))
            for k in sorted(got)]
    assert [r[:5] for r in rows] == [r[:5] for r in SURVEY_ROWS]
    assert [r[5] for r in rows] == pytest.approx([r[5] for r in SURVEY_ROWS], rel=1e-15)
    # the seed row v̄_5 = ȳ is not an accumulation: no entry
    seed = next(k for k, r in enumerate(survey.rows) if r.section == "adjoint")
    assert seed not in got and survey.rows[seed].via is None


def test_each_step_says_what_is_still_partial(survey):
    steps = sweep_steps(survey)
    # step 0 is the seed, then one step per row above, then the result
    assert [s["partial"] for s in steps] == [
        {}, {}, {}, {"v_0": [1, 2]}, {}, {}, {"v_-1": [1, 2]}, {}, {}, {}]
    first_x2, last_x2 = steps[3], steps[7]
    assert "this is the first contribution" in first_x2["caption"]
    assert "v̄_0 is a partial sum (1 of 2): it is not yet ∂y/∂x2" in first_x2["caption"]
    assert "Until the other use adds its contribution" in first_x2["caption"]
    assert first_x2["set"] == {"v_0": f"{-math.cos(X2):.3f}"}
    assert "That was its last contribution (2 of 2): v̄_0 = 1.716 is final, ∂y/∂x2." \
        in last_x2["caption"]
    # a variable used once is final at once: its caption does not talk of partial sums
    assert all("partial sum" not in s["caption"] and "final" not in s["caption"]
               for s in (steps[1], steps[2], steps[4], steps[5]))


def test_three_contributions_two_partial_steps():
    """x·x·x: v_1 = v_0 × v_0 uses x twice and v_2 = v_1 × v_0 once; the sweep reaches v_2
    first: v̄_1 = v̄_2 · v_0 = x = 2 and v̄_0 = v̄_2 · v_1 = x² = 4 (1 of 3), then v̄_0 +=
    v̄_1 · v_0 twice (8, then 12 = 3x²: final)."""
    et = trace(lambda x: x * x * x, 2.0, mode="reverse", names=["x"])
    steps = [s for s in sweep_steps(et) if s["nodes"] == ["v_0"] and s["via"]]
    assert [s["num"] for s in steps] == pytest.approx([4.0, 8.0, 12.0], rel=1e-15)
    assert [s["partial"] for s in steps] == [{"v_0": [1, 3]}, {"v_0": [2, 3]}, {}]
    assert "Until the other uses add their contributions" in steps[0]["caption"]
    assert "(2 of 3)" in steps[1]["caption"] and "final" in steps[2]["caption"]
    (data,) = panel_data(et.to_html())
    rows = [data["rows"][str(k)] for k in sorted(contributions(et))]
    assert rows == ["2.000", "4.000 + …", "8.000 + …", "12.000"]   # first v̄_1 = v_0 = 2


def test_the_page_marks_partial_rows_in_its_table(survey):
    page = html_page(survey)
    partial_rows = re.findall(r'<tr class="dt-row dt-partial" title="([^"]+)" data-row="(\d+)"',
                              page)
    ks = [int(k) for _, k in partial_rows]
    assert [survey.rows[k].node for k in ks] == ["v_0", "v_-1"]
    assert [t for t, _ in partial_rows] == ["partial: 1 of 2 contributions"] * 2
    (data,) = panel_data(page)
    assert [data["rows"][str(k)] for k in ks] == [f"{-math.cos(X2):.3f} + …", "5.000 + …"]
    # each node carries the (empty) pill the script fills in, and the legend explains it
    assert page.count('<g class="dt-pbadge">') == 7
    assert "partial: 1 of 2" in page and "becomes final" in page


def test_forward_mode_has_no_partial_sums():
    et = trace(f, X1, X2, mode="forward", names=["x1", "x2"])
    assert all(s["partial"] == {} for s in sweep_steps(et))
    page = html_page(et)
    assert '<g class="dt-pbadge">' not in page
    assert " + …" not in json.dumps(panel_data(page), ensure_ascii=False)


def test_an_unused_input_has_no_contribution():
    """f(x, y) = 3x: y is not used; its gradient entry is 0 and no step mentions it."""
    et = trace(lambda x, y: 3.0 * x, 1.0, 2.0, mode="reverse", names=["x", "y"])
    assert uses(et) == {"v_-1": 1, "v_0": 0, "v_1": 0}
    assert [float(d) for d in et.derivative] == [3.0, 0.0]
    assert all(s["partial"] == {} for s in sweep_steps(et))


def test_partial_sums_of_arrays():
    """sum(a·a + a): a is used by a·a twice and by the add once, so its adjoint (2a + 1,
    elementwise) goes through two partial sums."""
    a = np.array([0.5, -1.0, 2.0])
    et = trace(lambda a: np.sum(a * a + a), a, mode="reverse", names=["a"])
    into_a = [s for s in sweep_steps(et) if s["nodes"] == ["v_0"] and s["via"]]
    assert [s["partial"] for s in into_a] == [{"v_0": [1, 3]}, {"v_0": [2, 3]}, {}]
    np.testing.assert_allclose(into_a[-1]["num"], 2 * a + 1, rtol=1e-15)


def test_a_use_that_passes_back_nothing_does_not_leave_the_adjoint_partial(survey):
    """If a rule passes back no cotangent for one use (a symbolic zero: no row in the
    trace), the adjoint's last row makes it final even though fewer than n arrived. The
    survey's trace with the row v̄_0 += v̄_2 · v_-1 removed stands for such a trace."""
    import copy
    et = copy.copy(survey)
    drop = next(k for k, r in enumerate(et.rows) if r.node == "v_0" and r.via == "v_2")
    et.rows = et.rows[:drop] + et.rows[drop + 1:]
    parts = contributions(et)
    into_x2 = [parts[k] for k, r in enumerate(et.rows) if r.node == "v_0" and r.via]
    assert into_x2 == [(1, 2, True)]                    # from the graph: 2 uses; 1 row, final
    step = next(s for s in sweep_steps(et) if s["nodes"] == ["v_0"] and s["via"])
    assert step["partial"] == {}
    assert ("Its other use passes back no contribution (zero), so v̄_0 = -0.284 is final"
            in step["caption"])
    (data,) = panel_data(html_page(et))
    assert not any(v.endswith(" + …") for k, v in data["rows"].items()
                   if et.rows[int(k)].node == "v_0")


def test_the_operation_passing_back_is_always_final(survey):
    """The sweep runs in reverse evaluation order, so when v_i passes v̄_i · ∂v_i/∂v_j
    back, v̄_i is already final: the page never shows a partial sum flowing backwards."""
    for et in (survey, trace(lambda x: x * x * x, 2.0, mode="reverse"),
               trace(lambda a, b, c: np.sin(a * b) * (a + c) + b * c, 0.3, 1.2, -0.7,
                     mode="reverse")):
        pending = {}
        for s in sweep_steps(et)[:-1]:
            assert s["via"] not in pending, (s["via"], pending)
            (node,) = s["nodes"]
            pending.pop(node, None)
            pending.update(s["partial"])
        assert pending == {}             # at the end every adjoint is final


# --- random programs ---------------------------------------------------------------------
_OPS = {"add": (2, lambda a, b: a + b), "sub": (2, lambda a, b: a - b),
        "mul": (2, lambda a, b: a * b), "sin": (1, np.sin), "exp": (1, np.exp)}


def _programs():
    from hypothesis import strategies as st

    @st.composite
    def program(draw):
        n_in = draw(st.integers(1, 4))
        ops = []
        for k in range(draw(st.integers(2, 7))):
            name = draw(st.sampled_from(sorted(_OPS)))
            args = [draw(st.integers(0, n_in + k - 1)) for _ in range(_OPS[name][0])]
            ops.append((name, args))
        return n_in, ops
    return program()


def _run(n_in, ops):
    """The program as a function: each op on earlier values, the output the sum of every
    op's result (so every op is on the graph)."""
    def fn(*xs):
        vals = list(xs)
        for name, args in ops:
            vals.append(_OPS[name][1](*(vals[a] for a in args)))
        out = vals[n_in]
        for v in vals[n_in + 1:]:
            out = out + v
        return out
    return fn


def test_random_programs_partial_until_the_last_use():
    """For random programs of +, −, ×, sin, exp: each adjoint waits for one contribution
    per use of its variable as an operand (counted here from the program itself), is
    partial on every earlier row and final, equal to the sweep's final adjoint, on the
    last one."""
    from hypothesis import given, settings

    @settings(derandomize=True, max_examples=40, deadline=None)
    @given(_programs())
    def check(prog):
        n_in, ops = prog
        et = trace(_run(n_in, ops), *np.linspace(0.3, 0.9, n_in), mode="reverse")
        # expected uses: operand occurrences, plus one for each op result in the final sum
        # (one op alone is the output itself: no sum)
        want = {f"v_{k + 1 - n_in}": 0 for k in range(n_in)}
        want.update({f"v_{k + 1}": int(len(ops) > 1) for k in range(len(ops))})
        for name, args in ops:
            for a in args:
                want[f"v_{a + 1 - n_in}" if a < n_in else f"v_{a - n_in + 1}"] += 1
        got = uses(et)
        assert {v: got[v] for v in want} == want
        parts = contributions(et)
        node_of = {et.names[n]: n for n in et.nodes}
        for node in want:
            ks = [k for k in sorted(parts) if et.rows[k].node == node]
            assert len(ks) == want[node]                 # one row per use
            assert [parts[k] for k in ks] == [(i + 1, want[node], i + 1 == len(ks))
                                              for i in range(len(ks))]
            if ks:
                assert et.rows[ks[-1]].value == et.derivative_of[node_of[node]]
    check()
