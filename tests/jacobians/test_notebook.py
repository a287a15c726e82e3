"""The notebook views of a plan (jacobians/notebook.py): ``Plan._repr_html_`` lays out
``explain()`` beside a picture of the pattern, each entry in the color of the seed that
recovers it; ``Plan.plot`` draws the same with matplotlib.

Expected pictures are derived by hand from the Jacobians: ``x[1:]**2 - x[:-1]`` has
``J[i, i] = -1`` and ``J[i, i+1] = 2 x[i+1]`` (two entries a row, columns i and i+1 share
row i, so a column coloring needs 2 colors, alternating; rows i and i+1 share column i+1,
so a row coloring alternates too); the Hessian of ``sum(x**3)/3 + sum(x[1:] x[:-1])`` is
tridiagonal and symmetric (``2 x_i`` on the diagonal, 1 beside it).
"""
from __future__ import annotations

import base64
import io
from html.parser import HTMLParser
import re
import sys
import threading

import numpy as np
import pytest
import scipy.sparse as sp

import dualad
from dualad import jacobians
from dualad.jacobians import notebook

mpl = pytest.importorskip("matplotlib")
mpl_image = pytest.importorskip("matplotlib.image")


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


def residual(x):
    return x[1:] ** 2 - x[:-1]


def energy(x):
    return np.sum(x ** 3) / 3 + np.sum(x[1:] * x[:-1])


def loss(x):
    return np.sum(x ** 2)


def _picture(html):
    """The pattern picture of a plan's HTML, decoded by matplotlib's PNG reader (RGB 0-255)."""
    uri = re.search(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html).group(1)
    rgba = mpl_image.imread(io.BytesIO(base64.b64decode(uri)), format="png")
    return np.rint(rgba[..., :3] * 255).astype(np.uint8)


def _indices(rgb):
    """Palette indices of an RGB picture (each pixel must be a palette color)."""
    palette = notebook.PALETTE.astype(int)
    hits = (rgb[..., None, :].astype(int) == palette).all(-1)
    assert hits.any(-1).all(), "a pixel that is no palette color"
    return hits.argmax(-1)


def _tridiagonal_pairs(n):
    rows = np.arange(n - 1)
    return rows, rows, rows + 1     # entries (i, i) and (i, i + 1) of an (n-1) x n J


# --- HTML -----------------------------------------------------------------------------

def test_a_dense_plan_shows_its_alternatives_and_says_there_is_no_pattern():
    p = jacobians.plan(loss, np.ones(30), mode="reverse")
    html = p._repr_html_()
    assert "Jacobian plan for loss: n = 30 inputs, m = 1 outputs" in html
    assert "<img" not in html and "No sparsity pattern to draw: reverse computes the dense " \
        "1 x 30 Jacobian" in html
    chosen = re.findall(r'<tr class="chosen">(.*?)</tr>', html)
    assert len(chosen) == 1 and "<td>reverse (chosen)</td><td>1</td><td>1</td>" in chosen[0]
    for alt in ("forward", "reverse", "sparse-forward", "sparse-reverse",
                "sparse-bidirectional"):
        assert f"<td>{alt}" in html
    assert "<th>Why</th>" in html and "<th>Chosen</th>" in html
    assert "Planning evaluated loss" in html


def test_what_was_timed_is_shown_with_each_sweep_timed(monkeypatch):
    """With the timing threshold at 0, forward and reverse (modelled within 30x) are timed
    on f: their rows say "timed", and the measured table lists each timed sweep."""
    monkeypatch.setattr(jacobians.cost, "TIME_MIN_SECONDS", 0.0)

    def tall(x):
        return np.tanh(np.outer(x, x)).ravel()[:300]
    p = jacobians.plan(tall, np.ones(20), sparse=False, jit=False)
    html = p._repr_html_()
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", html.split("Estimated cost of each alternative")[1])
    sweeps = {alt: p.sweeps_of(alt) for alt in ("forward", "reverse")}   # by each one's chunk
    assert sweeps == {"forward": 1, "reverse": 1}
    assert re.match(rf"<td>forward \(chosen\)</td><td>20</td><td>{sweeps['forward']}</td>"
                    r"<td>[^<]+</td><td>timed</td>", rows[1])
    assert re.match(rf"<td>reverse</td><td>300</td><td>{sweeps['reverse']}</td><td>[^<]+</td>"
                    r"<td>timed</td>", rows[2])
    measured = html.split("<b>Measured</b>")[1]
    assert "<th>Timed</th><td>forward, reverse were modelled within 30x" in measured
    details = re.findall(r'<td colspan="2" style="padding-left:2em">(.*?)</td>', measured)
    assert [d.split(" ")[0] for d in details] == ["forward:", "recording", "reverse:"]
    assert "Planning evaluated tall 5 time(s)" in measured


def test_a_sparse_forward_plan_draws_each_entry_in_its_column_color():
    p = jacobians.plan(residual, np.ones(50), mode="sparse-forward")
    html = p._repr_html_()
    idx = _indices(_picture(html))
    assert idx.shape == (49, 50)               # not downsampled: one pixel an entry
    rows, diag, right = _tridiagonal_pairs(50)
    colors = p.column_coloring.colors
    assert p.column_coloring.ncolors == 2 and np.all(colors[1:] != colors[:-1])
    assert np.array_equal(idx[rows, diag], notebook.FORWARD + colors[diag])
    assert np.array_equal(idx[rows, right], notebook.FORWARD + colors[right])
    assert np.count_nonzero(idx) == 98         # nothing drawn off the pattern
    assert "98 structural nonzeros, colored by sparse-forward" in html
    assert "column color 0" in html and "column color 1" in html and "downsampled" not in html


def test_a_sparse_reverse_plan_draws_each_entry_in_its_row_color():
    p = jacobians.plan(residual, np.ones(50), mode="sparse-reverse")
    idx = _indices(_picture(p._repr_html_()))
    rows, diag, right = _tridiagonal_pairs(50)
    colors = p.row_coloring.colors
    assert np.all(colors[1:] != colors[:-1])
    assert np.array_equal(idx[rows, diag], notebook.REVERSE + colors)
    assert np.array_equal(idx[rows, right], notebook.REVERSE + colors)
    assert np.count_nonzero(idx) == 98


def test_a_bidirectional_plan_draws_each_entry_by_the_side_that_reads_it():
    p = jacobians.plan(residual, np.ones(50), mode="sparse-bidirectional")
    b = p.bicoloring
    idx = _indices(_picture(p._repr_html_()))
    i, j = p.sparsity.pattern.nonzero()
    fwd, rev = jacobians.bicoloring.recoverable(p.sparsity.pattern, b.column_colors,
                                                b.row_colors)
    order = np.lexsort((j, i))                 # CSR order, as recoverable reports
    i, j = i[order], j[order]
    want = np.where(fwd, notebook.FORWARD + b.column_colors[j] % 10,
                    notebook.REVERSE + b.row_colors[i] % 10)
    assert np.array_equal(idx[i, j], want) and np.count_nonzero(idx) == len(i)


def test_a_hessian_plan_shows_a_symmetric_pattern_in_three_colors():
    """The plan of a gradient's Jacobian (the Hessian): tridiagonal, 3 column colors
    (columns j, j+1, j+2 share row j+1), symmetric, and said to be."""
    n = 40
    p = jacobians.plan(dualad.grad(energy), np.ones(n))
    assert p.mode == "sparse-forward"
    html = p._repr_html_()
    idx = _indices(_picture(html))
    nz = idx > 0
    k = np.arange(n)
    assert np.array_equal(nz, np.abs(k[:, None] - k[None, :]) <= 1) and np.array_equal(nz, nz.T)
    colors = p.column_coloring.colors
    assert sorted(set(idx[nz].tolist())) == [notebook.FORWARD + c for c in range(3)]
    assert np.array_equal(idx[k, k], notebook.FORWARD + colors)
    assert "Jacobian plan for grad(energy)" in html and "a symmetric pattern" in html


def test_every_text_is_escaped():
    lam = jacobians.plan(lambda x: x[1:] * x[:-1], np.ones(10), mode="sparse-forward")
    html = lam._repr_html_()
    assert "&lt;lambda&gt;" in html and "<lambda>" not in html

    def f(x):
        return x * 2.0
    f.__name__ = f.__qualname__ = "<script>alert('x')</script>"
    html = jacobians.plan(f, np.ones(5), mode="forward")._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html


def test_a_1e5_by_1e5_pattern_is_downsampled_and_the_html_stays_small():
    n = 100_001
    p = jacobians.plan(residual, np.ones(n), mode="sparse-forward")
    html = p._repr_html_()
    assert len(html.encode()) < 200_000
    idx = _indices(_picture(html))
    assert idx.shape == (256, 256)
    # block of rows x columns per pixel: ceil(100000 / 256) x ceil(100001 / 256)
    assert "downsampled to 256 x 256 pixels, each a block of up to 391 x 391 entries" in html
    # the two bands fall on the picture's diagonal: pixel (r, c) holds entry (i, j) with
    # i * 256 // m = r, j * 256 // n = c; nothing off it
    r, c = np.nonzero(idx)
    assert np.all(np.abs(r - c) <= 1) and len(r) >= 256


def test_the_worst_case_picture_is_bounded_whatever_the_pattern():
    """A random pattern colors every pixel with the hues at random: the PNG barely
    compresses, and the page still stays under 200 KB."""
    n = 1200
    pattern = (sp.random(n, n, density=0.05, random_state=3, format="csr") != 0) \
        + sp.eye(n, dtype=bool, format="csr")
    p = jacobians.plan(lambda x: x * 2.0, np.ones(n), sparsity=pattern, mode="sparse-forward",
                       calibrate=False)
    html = p._repr_html_()
    assert len(html.encode()) < 200_000
    idx = _indices(_picture(html))
    assert idx.shape == (256, 256) and np.count_nonzero(idx) > 0.5 * idx.size
    assert p.column_coloring.ncolors > 10 and "colors past 10 repeat the hues" in html


def test_html_from_other_threads_while_the_plan_evaluates():
    p = jacobians.plan(residual, np.ones(50), mode="sparse-forward")
    want = p._repr_html_()
    out, errors = [], []

    def work():
        try:
            for _ in range(3):
                p(np.arange(50.0))
                out.append(p._repr_html_())
        except Exception as e:  # noqa: BLE001 - collected for the assertion
            errors.append(e)
    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert {_picture(h).tobytes() for h in out} == {_picture(want).tobytes()}


# --- plot -----------------------------------------------------------------------------

@pytest.fixture
def agg():
    """Matplotlib on its Agg canvas, for this test only; figures closed after."""
    import matplotlib.pyplot as plt
    backend = mpl.get_backend()
    plt.switch_backend("Agg")
    yield plt
    plt.close("all")
    plt.switch_backend(backend)


def test_plot_draws_the_colored_pattern_and_returns_the_axes(agg):
    p = jacobians.plan(residual, np.ones(50), mode="sparse-forward")
    params = dict(mpl.rcParams)
    ax = p.plot()
    assert isinstance(ax, mpl.axes.Axes)
    img = ax.images[0].get_array()
    rows, diag, right = _tridiagonal_pairs(50)
    want = np.zeros((49, 50), int)
    want[rows, diag] = notebook.FORWARD + p.column_coloring.colors[diag]
    want[rows, right] = notebook.FORWARD + p.column_coloring.colors[right]
    assert np.array_equal(np.asarray(img), notebook.PALETTE[want])
    assert ax.images[0].get_extent() == [-0.5, 49.5, 48.5, -0.5]   # matrix indices
    assert ax.get_xlabel() == "column j (input), n = 50"
    assert ax.get_ylabel() == "row i (output), m = 49"
    assert ax.get_title() == "residual: sparse-forward, 2 directions"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["column color 0",
                                                                   "column color 1"]
    assert dict(mpl.rcParams) == params       # nothing changed for the process


def test_plot_on_given_axes_draws_there(agg):
    fig, (left, right) = agg.subplots(1, 2)
    p = jacobians.plan(residual, np.ones(50), mode="sparse-reverse")
    assert p.plot(ax=right) is right and not left.images and len(right.images) == 1
    assert agg.get_fignums() == [fig.number]


def test_plot_of_a_dense_plan_says_there_is_no_pattern(agg):
    ax = jacobians.plan(loss, np.ones(30), mode="reverse").plot()
    assert not ax.images
    assert [t.get_text() for t in ax.texts] == ["loss: reverse, dense 1 x 30\n"
                                                "(no sparsity pattern)"]


def test_plot_on_something_that_is_no_axes_says_what_to_pass(agg):
    p = jacobians.plan(residual, np.ones(10), mode="sparse-forward")
    fig = agg.figure()
    with pytest.raises(TypeError, match=r"Plan.plot\(residual\): ax must be a matplotlib "
                                        r"Axes, got 'Figure'; leave it out"):
        p.plot(ax=fig)
    with pytest.raises(TypeError, match="got 'str'"):
        p.plot("left")


def test_a_mixed_plan_says_it_has_no_one_pattern(agg):
    """J_f = J_g J_h through a cut of 2 values: the factors have patterns, f's plan none."""
    def bottleneck(x):
        h = np.tanh(np.outer(x, x).sum(axis=0)[:2])
        return np.concatenate([h * k for k in range(1, 200)])
    p = jacobians.plan(bottleneck, np.ones(300), mode="mixed")
    html = p._repr_html_()
    assert "No one sparsity pattern to draw: mixed computes the 398 x 300 Jacobian as a " \
        "product of factors" in html and "<img" not in html
    assert not p.plot().images


def test_a_plan_through_the_gathers_draws_the_inner_pattern():
    idx = np.array([0, 5, 9, 2] * 50)

    def gathered(x):
        y = x[idx]
        return y[1:] * y[:-1]
    p = jacobians.plan(gathered, np.ones(10))
    assert p.through is not None
    html = p._repr_html_()
    idx_img = _indices(_picture(html))
    # g(a, b) = a * b of the two cuts a = x[idx][1:], b = x[idx][:-1] (199 values each):
    # J_g = [diag(b), diag(a)], 199 x 398, drawn on 199 x 256 pixels
    inner = p.through.inner
    assert (inner.m, inner.n) == (199, 398)
    assert idx_img.shape == (199, 256) and np.count_nonzero(idx_img) == 398
    i = np.arange(199)
    assert np.all(idx_img[i, i * 256 // 398] > 0) and np.all(idx_img[i, (199 + i) * 256 // 398] > 0)
    assert "the pattern of J_g (199 x 398), the inner function" in html


def test_plot_of_a_large_pattern_is_downsampled_to_1024(agg):
    p = jacobians.plan(residual, np.ones(5001), mode="sparse-forward")
    ax = p.plot()
    assert np.asarray(ax.images[0].get_array()).shape == (1024, 1024, 3)
    assert ax.images[0].get_extent() == [-0.5, 5000.5, 4999.5, -0.5]


def test_plot_without_matplotlib_says_how_to_install_it(monkeypatch):
    p = jacobians.plan(residual, np.ones(10), mode="sparse-forward")
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r'Plan.plot\(residual\) needs matplotlib.*'
                                          r'pip install "dualad\[plot\]"'):
        p.plot()


def test_png_writer_round_trips_through_an_independent_reader():
    image = np.array([[0, 1, 2], [12, 21, 3]], np.uint8)
    rgba = mpl_image.imread(io.BytesIO(notebook.png(image)), format="png")
    assert np.array_equal(np.rint(rgba[..., :3] * 255).astype(np.uint8),
                          notebook.PALETTE[image])


def test_every_view_is_well_formed_html():
    for mode in ("reverse", "sparse-forward", "sparse-reverse", "sparse-bidirectional"):
        assert _well_formed(jacobians.plan(residual, np.ones(20), mode=mode)._repr_html_()), mode
    assert _well_formed(jacobians.plan(dualad.grad(energy), np.ones(20))._repr_html_())
