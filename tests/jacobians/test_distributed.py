"""executor= on a concurrent.futures ThreadPoolExecutor and ProcessPoolExecutor (2 workers).

The results must be the local ones EXACTLY: with the same chunk_size, and with the
default chunking for elementwise/reduction functions (docs/distributed.md). One test
checks a closed form, so equality with the local path is not the only oracle.
"""
import multiprocessing
import os
import pathlib
import pickle
import threading
import warnings
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp

import dualad
from dualad import jacobians
from dualad.jacobians import DistributedSweepError, _shipping


# --- functions (module level: a process pool imports them by name) -------------------------
def elementwise(x):
    return np.sin(x) * np.sum(x) + x ** 2


def matmul(x):
    w = np.cos(np.arange(7 * x.size, dtype=float)).reshape(7, x.size)
    return np.tanh(w @ x)


def two_args(a, b):
    return {"u": np.sin(a["p"]) * b, "v": np.sum(a["q"] * b[:2])}


def scalar(x):
    return np.sum(np.sin(x) ** 2) + x[0] * x[-1] + np.sum(x[1:] * x[:-1])


def tridiagonal(x):
    return x[1:] * x[:-1] + np.cos(x[1:])


def no_return(x):
    np.sin(x)


def in_worker():
    return multiprocessing.parent_process() is not None or \
        threading.current_thread() is not threading.main_thread()


def fails_in_workers(x):
    if in_worker():
        raise ValueError("boom in a worker")
    return np.sin(x)


MARK = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / f"dualad-dies-once-{os.getpid()}"


def claims(mark):
    """Whether this worker process removed the file ``mark`` (exactly one worker does,
    however many see it at once)."""
    if multiprocessing.parent_process() is None:
        return False
    try:
        os.unlink(mark)
    except FileNotFoundError:
        return False
    return True


def dies_once(x, mark):
    if claims(mark):
        os._exit(3)
    return np.sin(x) * np.sum(x)


def always_dies(x):
    if multiprocessing.parent_process() is not None:
        os._exit(3)
    return np.sin(x)


X = np.linspace(0.1, 1.3, 9)


@pytest.fixture(scope="module")
def processes():
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("forkserver")) as ex:
        yield ex


@pytest.fixture(scope="module")
def threads():
    with ThreadPoolExecutor(2) as ex:
        yield ex


@pytest.fixture(params=["threads", pytest.param("processes", marks=pytest.mark.slow)])
def ex(request):
    return request.getfixturevalue(request.param)


def same_sparse(a, b):
    return (a.shape == b.shape and np.array_equal(a.indptr, b.indptr)
            and np.array_equal(a.indices, b.indices) and np.array_equal(a.data, b.data)
            and a.dtype == b.dtype)


# --- results --------------------------------------------------------------------------------
def test_closed_form(ex):
    """J of sin(x)·Σx + x² is diag(cos(x)·Σx + 2x) + sin(x) 1ᵀ (an independent oracle)."""
    want = np.diag(np.cos(X) * X.sum() + 2 * X) + np.sin(X)[:, None]
    for mode in ("forward", "reverse"):
        np.testing.assert_allclose(jacobians.jacobian(elementwise, X, mode=mode, executor=ex),
                                   want, rtol=1e-14, atol=1e-14)


def test_every_dense_function_equals_the_local_one_exactly(ex):
    for chunk in (None, 2):     # None: default chunking differs, elementwise: still exact
        for mode in ("auto", "forward", "reverse"):
            got = jacobians.jacobian(elementwise, X, mode=mode, chunk_size=chunk, executor=ex)
            assert np.array_equal(got, jacobians.jacobian(elementwise, X, mode=mode,
                                                          chunk_size=chunk))
        assert np.array_equal(jacobians.jacfwd(elementwise, X, chunk_size=chunk, executor=ex),
                              jacobians.jacfwd(elementwise, X, chunk_size=chunk))
        assert np.array_equal(jacobians.jacrev(elementwise, X, chunk_size=chunk, executor=ex),
                              jacobians.jacrev(elementwise, X, chunk_size=chunk))
    # curried forms keep the executor
    assert np.array_equal(jacobians.jacobian(elementwise, executor=ex)(X),
                          jacobians.jacobian(elementwise)(X))
    assert np.array_equal(jacobians.jacrev(elementwise, chunk_size=4, executor=ex)(X),
                          jacobians.jacrev(elementwise, chunk_size=4)(X))


def test_matrix_products_equal_the_local_call_with_the_same_chunk(ex):
    for mode in ("forward", "reverse"):
        assert np.array_equal(jacobians.jacobian(matmul, X, mode=mode, chunk_size=3,
                                                 executor=ex),
                              jacobians.jacobian(matmul, X, mode=mode, chunk_size=3))


def test_argnums_tuple_and_containers(ex):
    a = {"p": np.array([0.3, 0.7, 1.1]), "q": np.array([2.0, -1.0])}
    b = np.array([0.5, 1.5, 2.5])
    for mode in ("forward", "reverse"):
        got = jacobians.jacobian(two_args, a, b, argnums=(0, 1), mode=mode, chunk_size=2,
                                 executor=ex)
        want = jacobians.jacobian(two_args, a, b, argnums=(0, 1), mode=mode, chunk_size=2)
        for key in ("u", "v"):
            for k in (0, 1):
                g, w = got[key][k], want[key][k]
                if k == 0:
                    for leaf in ("p", "q"):
                        assert np.array_equal(g[leaf], w[leaf])
                else:
                    assert np.array_equal(g, w)


def test_hessians_in_every_mode(ex):
    for mode in ("forward-over-reverse", "reverse-over-reverse", "reverse-over-forward",
                 "forward-over-forward"):
        got = jacobians.hessian(scalar, X, mode=mode, chunk_size=2, executor=ex)
        assert np.array_equal(got, jacobians.hessian(scalar, X, mode=mode, chunk_size=2)), mode
    assert np.array_equal(jacobians.hessian(scalar, X, executor=ex), jacobians.hessian(scalar, X))
    assert np.array_equal(jacobians.hessian(scalar, executor=ex)(X), jacobians.hessian(scalar)(X))


def test_sparse_jacobian_and_hessian(ex):
    x = np.linspace(0.2, 2.0, 12)
    for mode in ("forward", "reverse"):
        got = jacobians.sparse_jacobian(tridiagonal, x, mode=mode, chunk_size=1, executor=ex)
        assert sp.issparse(got)
        assert same_sparse(got, jacobians.sparse_jacobian(tridiagonal, x, mode=mode,
                                                          chunk_size=1))
    assert same_sparse(jacobians.sparse_hessian(scalar, x, executor=ex),
                       jacobians.sparse_hessian(scalar, x))
    assert same_sparse(jacobians.sparse_hessian(scalar, x, chunk_size=1, executor=ex),
                       jacobians.sparse_hessian(scalar, x, chunk_size=1))


def test_plan_explains_the_split_and_evaluates(ex):
    p = jacobians.plan(elementwise, X, mode="forward", executor=ex)
    text = p.explain()
    assert f"Executor: {type(ex).__name__}" in text and "2 worker(s)" in text
    assert "9 directions in 2 chunk(s) of up to 5" in text and "2 task(s); each task is one" in text
    assert np.array_equal(p(X + 1), jacobians.jacobian(elementwise, X + 1, mode="forward"))
    q = jacobians.plan(elementwise, X, mode="reverse", chunk_size=4, executor=ex)
    assert ("9 directions in 3 chunk(s) of up to 4 (chunk_size= as given), 2 task(s); each "
            "task records one tape and sweeps it back once per chunk of up to 4") in q.explain()
    assert np.array_equal(q(X - 1), jacobians.jacobian(elementwise, X - 1, mode="reverse",
                                                       chunk_size=4))


def test_a_sparse_plan_checks_its_pattern_at_new_points(ex):
    """The pattern check reads the decisions of the first chunk, which runs here."""
    x = np.linspace(0.2, 2.0, 12)
    for mode in ("sparse-forward", "sparse-reverse"):
        p = jacobians.plan(tridiagonal, x, mode=mode, chunk_size=1, executor=ex)
        local = jacobians.plan(tridiagonal, x, mode=mode, chunk_size=1)
        assert same_sparse(p(x * 3), local(x * 3))
        assert p.checked.checks == 1


def test_dtypes_float32_and_complex(ex):
    x32 = X.astype(np.float32)
    got = jacobians.jacobian(elementwise, x32, chunk_size=4, executor=ex)
    want = jacobians.jacobian(elementwise, x32, chunk_size=4)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    xc = X + 0.5j
    for mode in ("forward", "reverse"):
        got = jacobians.jacobian(elementwise, xc, mode=mode, chunk_size=4, executor=ex)
        want = jacobians.jacobian(elementwise, xc, mode=mode, chunk_size=4)
        assert got.dtype == want.dtype == np.complex128 and np.array_equal(got, want)


def test_empty_input(ex):
    e = np.zeros(0)
    for mode in ("forward", "reverse"):
        got = jacobians.jacobian(elementwise, e, mode=mode, executor=ex)
        assert got.shape == (0, 0) and got.shape == jacobians.jacobian(elementwise, e,
                                                                       mode=mode).shape


def test_a_function_that_forgets_to_return(ex):
    with pytest.raises(TypeError, match="returned None; did it forget to `return`"):
        jacobians.jacobian(no_return, X, mode="forward", chunk_size=2, executor=ex)


def test_a_closure_over_a_large_array_is_serialized_once(ex, monkeypatch):
    w = np.linspace(0.0, 1.0, 1_000_000)
    calls = []
    dumps = _shipping.dumps
    monkeypatch.setattr(_shipping, "dumps", lambda p: calls.append(1) or dumps(p))

    def big(x):
        return np.sin(x) * w[:x.size].sum()
    got = jacobians.jacobian(big, X, mode="forward", chunk_size=2, executor=ex)
    assert np.array_equal(got, jacobians.jacobian(big, X, mode="forward", chunk_size=2))
    assert len(calls) == (0 if isinstance(ex, ThreadPoolExecutor) else 1)   # 5 tasks


def test_a_worker_deserializes_a_payload_once():
    data, digest, _ = _shipping.dumps(("jacobian", elementwise, (X,), 0))
    before = _shipping.LOADS[0]
    a = _shipping.run_task(data, digest, "forward", None, 0, 3, None, "<f8", 1.0)
    b = _shipping.run_task(data, digest, "forward", None, 3, 3, None, "<f8", 1.0)
    assert _shipping.LOADS[0] == before + 1
    want = jacobians.jacfwd(elementwise, X, chunk_size=3)[:, :6]
    assert np.array_equal(np.vstack([a, b]).T, want)


# --- failures --------------------------------------------------------------------------------
def test_an_error_in_a_task_names_the_chunk_and_chains_the_original(ex):
    with pytest.raises(DistributedSweepError) as info:
        jacobians.jacobian(fails_in_workers, X, mode="forward", chunk_size=3, executor=ex)
    text = str(info.value)
    assert "fails_in_workers raised ValueError: boom in a worker" in text
    assert "forward sweep's task for columns" in text and "of 9" in text
    assert "Worker traceback:" in text and "in fails_in_workers" in text
    assert isinstance(info.value.__cause__, ValueError)
    with pytest.raises(DistributedSweepError, match="reverse sweep's task for rows"):
        jacobians.jacrev(fails_in_workers, X, chunk_size=3, executor=ex)
    with pytest.raises(DistributedSweepError, match="Hessian sweep's task for Hessian rows"):
        jacobians.hessian(lambda x: np.sum(fails_in_workers(x)), X, executor=ex) \
            if isinstance(ex, ThreadPoolExecutor) else \
            jacobians.hessian(scalar_failing, X, executor=ex)


def scalar_failing(x):
    return np.sum(fails_in_workers(x))


@pytest.mark.slow   # a process pool
def test_a_dead_worker_is_retried_and_the_result_is_exact():
    MARK.touch()
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("forkserver")) as ex:
        with pytest.warns(RuntimeWarning, match="stays broken: make a new one"):
            got = jacobians.jacfwd(dies_once, X, str(MARK), chunk_size=3, executor=ex)
        assert not MARK.exists()
        assert np.array_equal(got, jacobians.jacfwd(dies_once, X, str(MARK), chunk_size=3))
        with pytest.raises(ValueError, match="is broken"):      # the pool given stays broken
            jacobians.jacfwd(dies_once, X, str(MARK), executor=ex)


@pytest.mark.slow   # a process pool
def test_a_broken_pool_is_reported_with_every_missing_chunk():
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("forkserver")) as ex:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            with pytest.raises(DistributedSweepError) as info:
                jacobians.jacrev(always_dies, X, chunk_size=3, executor=ex, retries=1)
    assert info.value.missing == [(0, 6), (6, 3)]     # 3 chunks on 2 tapes (one_tape)
    assert "rows 0..5, 6..8 of 9 were not computed" in str(info.value)
    assert "after 1 retry each" in str(info.value)


# --- misuse ---------------------------------------------------------------------------------------
def test_what_is_not_an_executor_is_refused():
    with pytest.raises(TypeError, match="executor= takes a concurrent.futures.Executor"):
        jacobians.jacobian(elementwise, X, executor="processes")
    with pytest.raises(TypeError, match="jacfwd: executor= takes"):
        jacobians.jacfwd(elementwise, X, executor=4)
    with pytest.raises(TypeError, match=r"not its class: write executor=ProcessPoolExecutor\(...\)"):
        jacobians.sparse_jacobian(elementwise, X, executor=ProcessPoolExecutor)
    with pytest.raises(ValueError, match="retries must be a non-negative integer"):
        jacobians.hessian(scalar, X, executor=ThreadPoolExecutor(1), retries=-1)


def test_a_shut_down_executor_is_refused():
    for ex in (ThreadPoolExecutor(1), ProcessPoolExecutor(1)):
        ex.shutdown()
        with pytest.raises(ValueError, match="was shut down; make a new one"):
            jacobians.jacobian(elementwise, X, executor=ex)


def test_executor_inside_a_transformation_is_refused(threads):
    def loss(x):
        return np.sum(jacobians.jacobian(elementwise, x, executor=threads))
    with pytest.raises(TypeError, match="executor= cannot be used inside a transformation"):
        dualad.grad(loss)(X)
    p = jacobians.plan(elementwise, X, executor=threads)
    with pytest.raises(TypeError, match="made with executor="):
        dualad.grad(lambda x: np.sum(p(x)))(X)
    # without executor= the same call works inside
    assert dualad.grad(lambda x: np.sum(jacobians.jacobian(elementwise, x)))(X).shape == (9,)


@pytest.mark.slow   # a process pool
def test_a_function_that_cannot_be_shipped(processes, threads):
    lock = threading.Lock()

    def holds_a_lock(x):
        with lock:
            return np.sin(x)
    with pytest.raises(TypeError) as info:
        jacobians.jacobian(holds_a_lock, X, executor=processes)
    text = str(info.value)
    assert "holds_a_lock and its arguments cannot be shipped" in text
    assert "ProcessPoolExecutor" in text and "ThreadPoolExecutor" in text
    assert isinstance(info.value.__cause__, (TypeError, pickle.PicklingError))
    # threads serialize nothing
    assert np.array_equal(jacobians.jacobian(holds_a_lock, X, executor=threads),
                          jacobians.jacobian(holds_a_lock, X))


@pytest.mark.slow   # a fresh interpreter and a process pool
def test_without_dask_and_cloudpickle(tmp_path):
    """dualad imports and ships module-level functions with pickle when neither dask nor
    cloudpickle is importable; a lambda is then refused, naming the extra to install."""
    import subprocess
    import sys
    (tmp_path / "mod_f.py").write_text("import numpy as np\ndef f(x):\n    return np.sin(x) * x\n")
    code = f"""
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('dask', 'distributed', 'cloudpickle'):
            raise ImportError('blocked: ' + name)
sys.meta_path.insert(0, Block())
sys.path.insert(0, {str(tmp_path)!r})
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
import numpy as np
from dualad import jacobians
import mod_f
assert not any(m.split('.')[0] in ('dask', 'distributed', 'cloudpickle') for m in sys.modules)
x = np.linspace(0, 1, 5)
with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context('fork')) as ex:
    got = jacobians.jacobian(mod_f.f, x, executor=ex)
    assert np.array_equal(got, jacobians.jacobian(mod_f.f, x))
    try:
        jacobians.jacobian(lambda x: x * 2, x, executor=ex)
    except TypeError as e:
        assert 'pickle failed' in str(e) and 'dualad[distributed]' in str(e), e
        print('refused')
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "refused"


class Inline(__import__("concurrent.futures").futures.Executor):
    """A third-party Executor: runs each task at once in this process (pickled payload)."""

    def submit(self, fn, *args, **kwargs):
        from concurrent.futures import Future
        fut = Future()
        fut.set_result(fn(*args, **kwargs))
        return fut


def test_any_executor_subclass():
    ex = Inline()
    got = jacobians.jacobian(matmul, X, mode="reverse", chunk_size=2, executor=ex)
    assert np.array_equal(got, jacobians.jacobian(matmul, X, mode="reverse", chunk_size=2))
    assert "Executor: Inline (executor)" in jacobians.plan(matmul, X, executor=ex).explain()


def test_a_checked_hessian_pattern_runs_its_first_chunk_here(threads):
    """hessian(mode="auto")'s compressed choice checks decisions on the first chunk."""
    from dualad.jacobians._common import Problem
    from dualad.jacobians.coloring import star_coloring
    from dualad.jacobians.distributed import attach
    from dualad.jacobians.sparsity import detect_hessian
    from dualad.jacobians.validity import CheckedPattern

    def branchy(x):
        return np.sum(np.where(x > 1.0, x ** 3, np.sin(x)) * np.roll(x, 1))
    x = np.linspace(0.2, 2.0, 12)
    sparsity = detect_hessian(Problem("hessian", branchy, (x,)))
    here = CheckedPattern("hessian", sparsity, star_coloring(sparsity.pattern))
    there = CheckedPattern("hessian", sparsity, star_coloring(sparsity.pattern))
    for point in (x + 0.01, x * 0.3):     # the same decisions, then others (detected again)
        want = here.evaluate(Problem("hessian", branchy, (point,)), 2)[0]
        remote = attach("hessian", Problem("hessian", branchy, (point,)), threads, 2, 2)
        assert same_sparse(there.evaluate(remote, 2)[0], want)
        assert (there.checks, there.redetections) == (here.checks, here.redetections)
    assert here.redetections == 1 and here.checks == 2
