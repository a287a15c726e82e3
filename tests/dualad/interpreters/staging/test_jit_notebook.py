"""The notebook view of a jitted function (dualad/interpreters/staging/notebook.py): per
signature traced, the traces, the programs, the tier, the program's size and fused groups,
and the listing, escaped; nothing traced to draw it."""
from __future__ import annotations

import html
from html.parser import HTMLParser
import re
import threading
import warnings

import numpy as np
import pytest

import dualad
from dualad.interpreters.staging import notebook


class _Balanced(HTMLParser):
    """Checks that every opened element is closed, in order (void elements aside)."""
    VOID = {"img", "br", "hr", "meta", "link", "input"}

    def __init__(self):
        super().__init__()
        self.stack, self.errors = [], []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack.pop() != tag:
            self.errors.append(tag)


def _well_formed(page):
    checker = _Balanced()
    checker.feed(page)
    checker.close()
    return not checker.errors and not checker.stack


def _rows(page):
    """The signature table's rows, each as its list of cell texts (unescaped)."""
    table = page.split("<table>", 1)[1].split("</table>", 1)[0]
    return [[html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", table)[1:]]


def test_before_any_call_it_says_there_is_no_program():
    f = dualad.jit(lambda x: x * 2.0)
    page = f._repr_html_()
    assert "<b>dualad.jit(&lt;lambda&gt;)</b>: backend numpy, 0 signature(s)" in page
    assert "Not called yet: no program" in page and "<lambda>" not in page
    assert f.cache_info() == {}                # drawing traced nothing


def test_each_signature_with_its_size_fused_groups_and_listing():
    """``sum(tanh(x * y + 1) * x)``: 5 equations (multiply, add, tanh, multiply, sum), the
    four elementwise ones one fused group; after a branch on ``x[0]`` a getitem, a
    comparison and a guard more."""
    def f(x, y):
        if x[0] > 0:
            return np.sum(np.tanh(x * y + 1.0) * x)
        return np.sum(x)
    jf = dualad.jit(f)
    jf(np.ones(3), 2.0)
    jf(np.ones(2), np.ones(2))
    jf(-np.ones(2), np.ones(2))                # the other branch: traced again
    before = jf.cache_info()
    page = jf._repr_html_()
    assert jf.cache_info() == before
    assert "2 signature(s) traced so far" in page
    first, second = _rows(page)
    assert first == ["(float64[3], float)", "1", "1", "numpy",
                     "7 equations (multiply 2, getitem 1, greater 1, add 1, tanh 1), 1 guards",
                     "1 groups of 4 equations"]
    assert second[:4] == ["(float64[2], float64[2])", "2", "2", "numpy"]
    assert second[4].startswith("3 equations") and second[5] == "0 groups of 0 equations"
    listing = html.escape(str(jf.program(np.ones(3), 2.0)))
    assert f"<pre>{listing}</pre>" in page
    assert "guard bool(v3) is True" in page and "in f)" in page
    source = html.escape(jf.source(np.ones(3), 2.0))
    assert f"<summary>generated source</summary><pre>{source}</pre>" in page


def test_program_stats_count_by_hand():
    jf = dualad.jit(lambda x: np.sum(np.exp(np.sin(x) * 2.0 - x)))
    stats = notebook.program_stats(jf.program(np.ones(4)))
    assert stats["equations"] == 5 and stats["guards"] == 0
    assert stats["fused groups"] == 1 and stats["fused equations"] == 4
    assert dict(stats["primitives"]) == {"sin": 1, "multiply": 1, "subtract": 1, "exp": 1,
                                         "sum": 1}


def test_static_arguments_are_shown_escaped():
    jg = dualad.jit(lambda x, n: x * n, static_argnums=1)
    jg(np.ones(2), 3)
    assert _rows(jg._repr_html_())[0][0] == "(float64[2]; static: argument 1=3)"
    jh = dualad.jit(lambda x, tag="": x * len(tag), static_argnames="tag")
    jh(np.ones(2), tag="<b>")
    page = jh._repr_html_()
    assert _rows(page)[0][0] == "(float64[2]; static: tag='<b>')" and "<b>'" not in page


def test_a_long_listing_is_cut_and_says_how_much_was_left_out():
    def chain(x):
        for _ in range(300):
            x = x * 1.0001
        return x
    jc = dualad.jit(chain)
    jc(np.ones(2))
    page = jc._repr_html_()
    listing = re.search(r"<pre>(.*?)</pre>", page, re.S).group(1)
    lines = listing.splitlines()
    assert len(lines) == notebook.MAX_LINES + 1
    assert lines[-1] == "... 102 more lines"     # 300 equations + the head and "in" lines


def test_a_signature_run_without_jit_says_so():
    def sign(x):
        return x * 2.0 if x[0] > 0 else x * 3.0
    js = dualad.jit(sign, max_traces=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dualad.JitRetraceWarning)
        for k in range(4):
            js(np.full(2, (-1.0) ** k))
    page = js._repr_html_()
    assert "sign runs without jit for this signature (see the JitRetraceWarning)" in page


def test_jit_of_grad_shows_the_adjoint_program():
    def loss(x):
        return np.sum(x ** 2)
    jg = dualad.jit(dualad.grad(loss))
    jg(np.ones(3))
    page = jg._repr_html_()
    assert _rows(page)[0][0] == "(float64[3])"
    assert html.escape(str(jg.program(np.ones(3)))) in page


def test_the_view_from_another_thread_while_calls_trace():
    jf = dualad.jit(lambda x: np.sin(x) * x)
    errors = []

    def calls():
        try:
            for n in range(1, 30):
                jf(np.ones(n))
        except Exception as e:  # noqa: BLE001 - collected for the assertion
            errors.append(e)

    def views():
        try:
            for _ in range(30):
                jf._repr_html_()
        except Exception as e:  # noqa: BLE001
            errors.append(e)
    threads = [threading.Thread(target=calls), threading.Thread(target=views)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert "29 signature(s) traced so far" in jf._repr_html_()


@pytest.mark.parametrize("backend", ["numba"])
def test_the_numba_backend_names_its_tier(backend):
    pytest.importorskip("numba")
    jn = dualad.jit(lambda x: np.sin(x) * x + 1.0, backend=backend)
    jn(np.ones(3))
    jn.wait_compiled(timeout=120)
    tier = _rows(jn._repr_html_())[0][3]
    assert tier == jn.cache_info(tiers=True)[next(iter(jn.cache_info()))][0]
    assert "backend numba" in jn._repr_html_()


def test_every_view_is_well_formed_html():
    jf = dualad.jit(lambda x, n: np.sum(x * n) if x[0] > 0 else x, static_argnums=1)
    assert _well_formed(jf._repr_html_())
    jf(np.ones(3), 2)
    jf(-np.ones(3), 2)
    assert _well_formed(jf._repr_html_())


def test_only_the_newest_listings_are_shown_and_the_view_stays_bounded():
    """64 signatures (the most a jitted function keeps) of a 300-equation program: every
    signature has its row, the 4 newest their listings, each cut at 200 lines."""
    def chain(x):
        for _ in range(300):
            x = x * 1.0001
        return x
    jc = dualad.jit(chain)
    for n in range(1, 65):
        jc(np.ones(n))
    page = jc._repr_html_()
    assert len(_rows(page)) == 64
    heads = re.findall(r"<p><b>chain\(float64\[(\d+)\]\)</b>, the newest program", page)
    assert heads == ["61", "62", "63", "64"]
    assert "The listings of the 4 newest signatures; 60 older ones" in page
    assert len(page.encode()) < 300_000
    assert _well_formed(page)


def test_a_listing_of_long_lines_is_cut_by_characters():
    text = "\n".join("x" * 1000 for _ in range(50))
    cut = notebook._cut(text).splitlines()
    assert len(cut) == 20 and cut[-1] == "... 31 more lines"   # 19 lines of 1001 chars fit


def test_a_static_argument_whose_repr_raises_shows_its_type():
    class Config:
        def __hash__(self):
            return 7

        def __eq__(self, other):
            return isinstance(other, Config)

        def __repr__(self):
            raise RuntimeError("no repr")
    jf = dualad.jit(lambda x, cfg: x * 2.0, static_argnums=1)
    jf(np.ones(2), Config())
    assert _rows(jf._repr_html_())[0][0] == "(float64[2]; static: argument 1=<Config object>)"
