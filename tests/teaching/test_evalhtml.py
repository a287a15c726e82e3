"""The teaching page (dualad.teaching.evalhtml) without a browser: self-contained, its
embedded steps carry the trace's numbers (checked against the survey's closed form),
user strings escaped, ids unique per rendering, the CLI's --html option and its misuse."""
import html
import json
import re

import numpy as np
import pytest

from dualad.teaching import EvaluationTrace, html_fragment, html_page, trace
from dualad.teaching.cli import main

X1, X2 = 2.0, 5.0
SURVEY = "log(x1) + x1*x2 - sin(x2)"


def f(x1, x2):
    """Baydin et al. (JMLR 2018), Tables 2 and 3."""
    return np.log(x1) + x1 * x2 - np.sin(x2)


# The closed form: ∂f/∂x1 = 1/x1 + x2 = 5.5, ∂f/∂x2 = x1 - cos x2 = 1.716...
GRAD = (1 / X1 + X2, X1 - np.cos(X2))


def panels(page):
    """The JSON data of each panel, parsed back."""
    blocks = re.findall(r'<script type="application/json" class="dt-data">(.*?)</script>',
                        page, flags=re.S)
    return [json.loads(b) for b in blocks]


@pytest.fixture(scope="module")
def both():
    return (trace(f, X1, X2, mode="forward", names=["x1", "x2"]),
            trace(f, X1, X2, mode="reverse", names=["x1", "x2"]))


def test_the_page_is_self_contained(both):
    page = html_page(*both, title="f = ln x1 + x1 x2 − sin x2")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert '<meta charset="utf-8">' in page
    assert not re.search(r"https?:", page), "the page refers to the network"
    assert not re.search(r"""\b(src|href)\s*=""", page), "the page loads something"
    assert "<link" not in page and "@import" not in page and "@font-face" not in page
    assert re.findall(r"url\((.)", page) and all(c == "#" for c in re.findall(r"url\((.)", page))
    assert page.count("<svg") == 2 and page.count('class="dt-node') == 2 * 7
    assert page.count("<style>") == 2 and page.count("<script>") == 1   # the code: once


def test_the_steps_carry_the_traces_numbers(both):
    fwd, rev = both
    data_f, data_r = panels(html_page(fwd, rev))
    assert (data_f["mode"], data_r["mode"]) == ("forward", "reverse")
    for et, data in ((fwd, data_f), (rev, data_r)):
        sweep = [k for k, r in enumerate(et.rows) if r.section in ("tangent", "adjoint")]
        steps = data["steps"]
        assert len(steps) == len(sweep) + 1          # one per sweep row, then the result
        seen = set()
        for k, step in zip(sweep, steps):
            assert step["rows"] == [k]
            node = et.rows[k].node
            assert step["nodes"] == [node]
            np.testing.assert_allclose(step["num"], et.rows[k].value, rtol=1e-15)
            # x1 (v_-1) and x2 (v_0) are each used twice: their first adjoint row is a
            # partial sum, shown with "+ …"; every other row is final
            partial = et.mode == "reverse" and node in ("v_-1", "v_0") and node not in seen
            seen.add(node)
            assert data["rows"][str(k)] == f"{float(et.rows[k].value):.3f}" + (
                " + …" if partial else "")
    # The survey's numbers against the closed form, not against dualad.
    assert data_f["steps"][-1]["num"] == pytest.approx(GRAD[0], rel=1e-14)     # ẏ = 5.5
    assert data_r["steps"][-1]["num"] == pytest.approx(list(GRAD), rel=1e-14)  # 5.5, 1.716
    assert data_r["steps"][-1]["value"] == "5.500, 1.716"
    # Table 3's accumulation into v̄_0 (x2 is used by v_2 and v_4), in the caption.
    acc = next(s for s in data_r["steps"] if s["lead"].startswith("v̄<sub>0</sub> +="))
    assert acc["lead"] == "v̄<sub>0</sub> += v̄<sub>2</sub> · v<sub>−1</sub>"
    assert "x2 is used twice, so its adjoint accumulates" in acc["caption"]
    assert acc["edges"] == ["v_0>v_2"] and acc["via"] == "v_2"
    assert acc["num"] == pytest.approx(GRAD[1], rel=1e-14)
    # forward: v_2 = v_-1 × v_0 lights both of its operands' edges
    v2 = next(s for s in data_f["steps"] if s["nodes"] == ["v_2"])
    assert v2["edges"] == ["v_-1>v_2", "v_0>v_2"] and v2["num"] == pytest.approx(X2)


def test_arrays_and_other_operations_render():
    et = trace(lambda a, b: np.sum(a * b + np.exp(a) / b), np.array([0.5, 1.5]),
               np.array([2.0, 3.0]), mode="reverse")
    (data,) = panels(et.to_html())
    a, b = np.array([0.5, 1.5]), np.array([2.0, 3.0])
    np.testing.assert_allclose(data["steps"][-1]["num"], [b + np.exp(a) / b,
                                                           a - np.exp(a) / b ** 2])
    assert any(isinstance(s["num"], list) for s in data["steps"])


def test_user_strings_are_escaped():
    hostile_name = "<img src=x onerror=alert(1)>"
    hostile_title = '</script><script>alert("pwned")</script> & "quotes"'
    et = trace(f, X1, X2, mode="reverse", names=[hostile_name, "x2"])
    for page in (html_page(et, title=hostile_title), html_fragment(et, title=hostile_title)):
        assert "<img" not in page and "alert(1)>" not in page
        assert "<script>alert" not in page and 'alert("pwned")' not in page
        assert html.escape(hostile_title) in page
        assert page.count("</script>") == 2           # the data block and the code: no more
        (data,) = panels(page)                        # the JSON still parses, name escaped
        assert any("&lt;img src=x" in s["caption"] for s in data["steps"])


def test_every_rendering_has_its_own_ids(both):
    one, two = html_fragment(*both), html_fragment(*both)
    ids = [re.findall(r'\bid="([^"]+)"', part) for part in (one, two)]
    assert all(len(i) == len(set(i)) for i in ids)
    assert not set(ids[0]) & set(ids[1])
    root = ids[0][0]
    assert one.startswith(f'<div class="dualad-trace" id="{root}"')
    assert f'document.getElementById("{root}")' in one
    # markers are referenced by url(#id): each reference points into its own rendering
    refs = set(re.findall(r'url\(#([\w-]+)\)"', one))
    assert len(refs) == 2 and refs <= set(ids[0])   # one arrowhead per panel's graph


def test_jupyter_and_to_html(both):
    fwd, _ = both
    frag = fwd._repr_html_()
    assert frag.startswith('<div class="dualad-trace"') and "<html" not in frag
    assert 'data-standalone="1"' not in frag            # keys only when the widget has focus
    page = fwd.to_html(title="f")
    assert page.startswith("<!DOCTYPE html>") and 'data-standalone="1"' in page
    assert 'class="dt-tabs"' not in page and len(panels(page)) == 1


@pytest.mark.parametrize("args, error, match", [
    ((), TypeError, "at least one EvaluationTrace"),
    (("not a trace",), TypeError, "got str"),
])
def test_misuse_of_the_page_functions(args, error, match):
    for fn in (html_page, html_fragment):
        with pytest.raises(error, match=match):
            fn(*args)


def test_a_taylor_trace_is_refused_by_name():
    """A taylor trace is an EvaluationTrace too, but has no sweep to step through: the
    error says so and where to show it instead (not "expected EvaluationTrace")."""
    et = trace(lambda x: np.exp(x) * x, 0.0, mode="taylor", order=3)
    for fn in (html_page, html_fragment):
        with pytest.raises(ValueError, match=rf"^{fn.__name__}: the page steps through "
                                             r"forward and reverse sweeps; show a taylor "
                                             r"trace with to_text\(\) or to_markdown"):
            fn(trace(f, X1, X2), et)


@pytest.mark.parametrize("digits", [-1, 18, 2.5, True])
def test_bad_digits(both, digits):
    with pytest.raises(ValueError, match="digits must be an integer from 0 to 17"):
        html_page(both[0], digits=digits)


def test_cli_html_writes_both_sweeps(tmp_path, capsys):
    out = tmp_path / "trace.html"
    assert main(["trace", SURVEY, "--at", "x1=2", "x2=5", "--seed", "0,1",
                 "--html", str(out)]) == 0
    assert f"page written to {out}" in capsys.readouterr().out
    page = out.read_text(encoding="utf-8")
    data_f, data_r = panels(page)
    # --seed 0,1 is the forward direction ẋ = (0, 1): ẏ = ∂f/∂x2
    assert data_f["steps"][-1]["num"] == pytest.approx(GRAD[1], rel=1e-14)
    assert data_r["steps"][-1]["num"] == pytest.approx(list(GRAD), rel=1e-14)
    assert "f(x1, x2) = log(x1) + x1·x2 − sin(x2)" in page
    assert page.count('class="dt-badge"') == 2 * 3    # two inputs and the output, per panel
    assert page.count(">output y</text>") == 2


def test_cli_html_reverse_seed(tmp_path):
    out = tmp_path / "t.html"
    assert main(["trace", SURVEY, "--at", "x1=2", "x2=5", "--mode", "reverse", "--seed", "2",
                 "--html", str(out)]) == 0
    data_f, data_r = panels(out.read_text(encoding="utf-8"))
    assert data_r["steps"][-1]["num"] == pytest.approx([2 * g for g in GRAD], rel=1e-14)
    assert data_f["steps"][-1]["num"] == pytest.approx(GRAD[0], rel=1e-14)  # default ẋ


@pytest.mark.parametrize("where", ["missing/dir/t.html", "."])
def test_cli_html_bad_path_names_it(tmp_path, capsys, where):
    path = tmp_path / where
    assert main(["trace", "x1*x2", "--at", "x1=2", "x2=5", "--html", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dualad trace: error: --html ") and str(path) in err
    assert "cannot write the page" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "missing").exists()


def test_the_trace_type_is_the_public_one(both):
    assert all(isinstance(t, EvaluationTrace) for t in both)


def test_a_variable_used_three_times_accumulates_three_contributions():
    """x·x·x: v_1 = v_0 × v_0 uses x twice, v_2 = v_1 × v_0 once; d/dx x³ = 3x² = 12."""
    et = trace(lambda x: x * x * x, 2.0, mode="reverse", names=["x"])
    (data,) = panels(et.to_html())
    into_x = [s for s in data["steps"] if s["nodes"] == ["v_0"] and s["via"]]
    assert len(into_x) == 3
    assert "used three times (once by v<sub>2</sub>, twice by v<sub>1</sub>)" in \
        into_x[0]["caption"]
    assert all("so its adjoint accumulates" in s["caption"] for s in into_x[1:])
    assert into_x[-1]["num"] == pytest.approx(3 * 2.0 ** 2, rel=1e-15)
    assert data["steps"][-1]["lead"] == "x̄ = 12.000"


def test_values_json_cannot_carry_nan():
    """ln(-1) is nan: the value shows as text, the JSON number is null (JSON has no NaN)."""
    with np.errstate(invalid="ignore"):
        et = trace(np.log, -1.0, mode="forward")
    page = et.to_html()
    (data,) = panels(page)
    assert "NaN" not in page.split("<script")[1] and data["steps"][-1]["num"] == -1.0
    assert "nan" in page          # the primal value ln(-1), shown as it is
