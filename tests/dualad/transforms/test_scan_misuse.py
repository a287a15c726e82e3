"""dualad.scan misuse: each mistake raises an error naming the step, the leaf and the shapes
(never a silently wrong result)."""
import numpy as np
import pytest

import dualad
from dualad import grad, scan

MODES = [dict(checkpoints=None), dict(checkpoints="binomial", snapshots=2)]
IDS = ["every-step", "binomial"]


@pytest.mark.parametrize("kw", MODES, ids=IDS)
def test_carry_shape_dtype_and_structure_changes(kw):
    def grows(c, x):
        return np.ones(3), None
    with pytest.raises(TypeError, match=r"scan\(grows\).*carry leaf 0 with shape \(3,\).*"
                                        r"shape \(2,\)"):
        scan(grows, np.ones(2), length=3, **kw)

    def to_float32(c, x):
        return c.astype(np.float32), None
    with pytest.raises(TypeError, match=r"dtype float32.*dtype float64.*astype"):
        scan(to_float32, np.ones(2), length=3, **kw)

    def nests(c, x):
        return (c, c), None
    with pytest.raises(TypeError, match=r"scan\(nests\).*another structure.*a tuple of 2"):
        scan(nests, np.ones(2), length=3, **kw)

    def drops_key(c, x):
        return {"a": c["a"]}, None
    with pytest.raises(TypeError, match="another structure"):
        scan(drops_key, {"a": 1.0, "b": 2.0}, length=2, **kw)


@pytest.mark.parametrize("kw", MODES, ids=IDS)
def test_step_must_return_a_pair(kw):
    def no_return(c, x):
        c + 1
    with pytest.raises(TypeError, match=r"scan\(no_return\).*None.*forget to `return`"):
        scan(no_return, 1.0, length=2, **kw)

    def one_value(c, x):
        return c * 2
    with pytest.raises(TypeError, match=r"scan\(one_value\).*pair \(carry, y\)"):
        scan(one_value, np.ones(2), length=2, **kw)


def test_lengths_and_arguments():
    def step(c, x):
        return c, None
    with pytest.raises(ValueError, match=r"different leading lengths \[3, 4\]"):
        scan(step, 1.0, (np.ones(3), np.ones(4)))
    with pytest.raises(ValueError, match=r"length=4 but xs has leading length 3"):
        scan(step, 1.0, np.ones(3), length=4)
    with pytest.raises(ValueError, match="give length="):
        scan(step, 1.0)
    with pytest.raises(ValueError, match="0-d"):
        scan(step, 1.0, np.float64(2.0))
    with pytest.raises(ValueError, match="length must be >= 0"):
        scan(step, 1.0, length=-1)
    with pytest.raises(TypeError, match="length must be an int"):
        scan(step, 1.0, length=2.5)
    with pytest.raises(TypeError, match="step must be a function"):
        scan(3.0, 1.0, length=2)


def test_checkpoint_options():
    def step(c, x):
        return c, None
    with pytest.raises(ValueError, match=r"checkpoints='revolve' is not one of"):
        scan(step, 1.0, length=3, checkpoints="revolve")
    with pytest.raises(ValueError, match="snapshots must be >= 1"):
        scan(step, 1.0, length=3, checkpoints="binomial", snapshots=0)
    for bad in (2.0, True, "2"):
        with pytest.raises(TypeError, match="snapshots must be an int"):
            scan(step, 1.0, length=3, checkpoints="binomial", snapshots=bad)
    with pytest.raises(ValueError, match="applies to checkpoints='binomial' only"):
        scan(step, 1.0, length=3, snapshots=2)
    # more snapshots than steps: stores every carry, still exact
    c, _ = scan(lambda c, x: (c * 2.0, None), 1.0, length=3, checkpoints="binomial",
                snapshots=100)
    assert c == 8.0


def test_python_branch_on_the_carry_is_refused_by_the_binomial_trace():
    def branchy(c, x):
        if np.sum(c) > 2:        # the path changes at the second step
            return c * 0.5, None
        return c * 2.0, None
    c, _ = scan(branchy, np.ones(2), length=5)   # every-step: runs step itself
    np.testing.assert_allclose(c, [2.0, 2.0])
    with pytest.raises(ValueError, match=r"scan\(branchy, checkpoints='binomial'\).*traced "
                                         r"once.*test_scan_misuse.py:\d+ in branchy.*np.where"
                                         r".*checkpoints=None"):
        scan(branchy, np.ones(2), length=5, checkpoints="binomial")

    def reads_value(c, x):
        return c * float(x), None   # float() of x: a constant of the trace
    with pytest.raises(ValueError, match=r"scan\(reads_value"):
        grad(lambda c0: scan(reads_value, c0, np.arange(1.0, 4.0),
                             checkpoints="binomial")[0])(1.0)


def test_a_branch_that_holds_at_every_step_is_fine():
    def clipped(c, x):
        if np.all(c < 1e6):      # true throughout: every replay passes the guard
            return np.sin(c) + x, None
        return c, None
    f = [lambda c0, kw=kw: np.sum(scan(clipped, c0, np.ones((6, 2)), **kw)[0]) for kw in MODES]
    np.testing.assert_allclose(grad(f[0])(np.ones(2)), grad(f[1])(np.ones(2)), rtol=1e-14)


def test_large_integers_in_the_carry_are_refused_not_rounded():
    def step(c, x):
        i, h = c
        return (i + 1, h * 2.0), None
    big = np.int64(2 ** 60 + 1)
    (i, h), _ = scan(step, (big, 1.0), length=2)
    assert i == big + 2
    with pytest.raises(OverflowError, match=r"integer output leaf 0.*exactly"):
        scan(step, (big, 1.0), length=2, checkpoints="binomial")


def test_closures_over_traced_values_are_differentiated():
    # an enclosing grad's value used only through np.sin (hoisted), another through @,
    # and one returned as y unchanged: each is an input of the loop
    W = np.array([[0.5, -0.2], [0.1, 0.3]])

    def loss(W, b, kw):
        s = np.sin(b)

        def step(h, x):
            return np.tanh(W @ h + s * x), b
        h, ys = scan(step, np.ones(2), np.ones((4, 2)), **kw)
        return np.sum(h) + np.sum(ys)
    for argnums in (0, 1):
        ga, gb = (grad(loss, argnums=argnums)(W, np.array([0.2, 0.4]), kw) for kw in MODES)
        np.testing.assert_allclose(ga, gb, rtol=1e-13)
        dualad.verification.check_grads(
            lambda W, b: loss(W, b, MODES[1]), (W, np.array([0.2, 0.4])), order=1)


def test_more_snapshots_than_the_recursion_limit():
    # the schedule is built without recursion: any number of snapshots works
    import sys
    s = sys.getrecursionlimit() + 10
    f = lambda c0: np.sum(scan(lambda c, x: (np.sin(c), None), c0, length=s + 5,  # noqa: E731
                               checkpoints="binomial", snapshots=s)[0])
    ref = grad(lambda c0: np.sum(scan(lambda c, x: (np.sin(c), None), c0,
                                      length=s + 5)[0]))(np.ones(2))
    np.testing.assert_allclose(grad(f)(np.ones(2)), ref, rtol=1e-13)


def test_leaves_that_are_not_arrays():
    def step(c, x):
        return c, x
    # the Python loop carries anything, as a loop does
    c, ys = scan(step, (1.0, None), np.arange(3.0))
    assert c == (1.0, None)
    for carry, leaf in [((1.0, None), "leaf 1 is NoneType None"), ("abc", "leaf 0 is str")]:
        with pytest.raises(TypeError, match=rf"scan\(step\): the carry's {leaf}"):
            scan(step, carry, np.arange(3.0), checkpoints="binomial")

    def labels(c, x):
        return c + x, "label"
    with pytest.raises(TypeError, match=r"scan\(labels\): y's leaf 0 is str"):
        scan(labels, 1.0, np.arange(3.0), checkpoints="binomial")


@pytest.mark.parametrize("kw", MODES, ids=IDS)
def test_object_array_of_traced_scalars_as_carry(kw):
    def f(a):
        c, _ = scan(lambda c, x: (c * x, None), np.array([a, 2 * a]), np.arange(1.0, 4.0), **kw)
        return np.sum(c)
    assert grad(f)(1.5) == 18.0   # d/da (6a + 12a)


def test_an_index_from_the_carry_says_to_pass_the_values_as_xs():
    table = np.arange(10.0) * 0.1

    def step(c, x):
        i, h = c
        return (i + 1, h * table[i] + h), None
    (i, h), _ = scan(step, (0, 1.0), length=5)
    assert i == 5 and np.isclose(h, np.prod(1 + table[:5]))
    with pytest.raises(ValueError, match=r"int\(v\d+\) == 0 .*in step.*as xs"):
        scan(step, (0, 1.0), length=5, checkpoints="binomial")
    # the remedy: the rows as xs
    c, _ = scan(lambda h, t: (h * t + h, None), 1.0, table[:5], checkpoints="binomial")
    assert np.isclose(c, h)
