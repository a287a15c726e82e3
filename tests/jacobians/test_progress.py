"""``progress=`` on the planner's sweeps (jacobians.progress, docs/logging.md).

A callable gets one ProgressRecord per finished chunk: ``done`` 1..total, ``elapsed``
growing, ``remaining`` >= 0 and 0 at the end, on the calling thread (executor= too); what
it raises stops the call unchanged. ``True`` draws a tqdm bar on stderr, or a line of text
without tqdm. Misuse is a TypeError naming the function and what to pass.
"""
import concurrent.futures as cf
import math
import sys
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dualad import jacobians
from dualad.jacobians import ProgressRecord


def _check_records(records, total, sweep):
    assert [r.done for r in records] == list(range(1, total + 1))
    assert all(r.total == total and r.sweep == sweep for r in records)
    assert all(r.remaining >= 0 and r.elapsed >= 0 for r in records)
    assert [r.elapsed for r in records] == sorted(r.elapsed for r in records)
    assert records[-1].remaining == 0.0


def test_jacfwd_reports_each_chunk():
    records = []
    x = np.linspace(0.0, 1.0, 10)
    J = jacobians.jacfwd(np.sin, x, chunk_size=3, progress=records.append)
    np.testing.assert_allclose(J, np.diag(np.cos(x)))
    _check_records(records, 4, "jacobian(sin): forward sweep")     # 3 + 3 + 3 + 1
    assert all(isinstance(r, ProgressRecord) for r in records)


def test_jacrev_and_the_estimate_follow_directions_not_chunks():
    records = []
    x = np.linspace(0.0, 1.0, 10)
    jacobians.jacrev(np.sin, x, chunk_size=4, progress=records.append)   # 4 + 4 + 2 rows
    _check_records(records, 3, "jacobian(sin): reverse sweep")
    # after 4 of 10 rows in t seconds, t * 6 / 4 are left; after 8, t * 2 / 8
    first, second = records[0], records[1]
    assert first.remaining == pytest.approx(first.elapsed * 6 / 4)
    assert second.remaining == pytest.approx(second.elapsed * 2 / 8)


def test_hessian_and_sparse_sweeps_report():
    records = []
    x = np.linspace(0.5, 1.0, 7)
    H = jacobians.hessian(lambda v: np.sum(v ** 3), x, mode="forward-over-reverse",
                          chunk_size=2, progress=records.append)
    np.testing.assert_allclose(H, np.diag(6 * x))
    _check_records(records, 4, "hessian(<lambda>): forward-over-reverse Hessian sweep")

    records.clear()

    def residual(v):
        return v[1:] ** 2 - v[:-1]
    J = jacobians.sparse_jacobian(residual, np.ones(20), mode="forward", chunk_size=1,
                                  progress=records.append)
    assert J.nnz == 38
    _check_records(records, 2, "sparse_jacobian(residual): compressed forward sweep")

    records.clear()
    jacobians.sparse_hessian(lambda v: np.sum(v[1:] * v[:-1]), np.ones(9), chunk_size=1,
                             progress=records.append)
    assert records and records[-1].done == records[-1].total == len(records)


def test_curried_and_default_and_false_report_nothing_extra():
    records = []
    jac = jacobians.jacfwd(np.sin, chunk_size=2, progress=records.append)
    jac(np.ones(4))
    assert [r.done for r in records] == [1, 2]
    records.clear()
    jacobians.jacfwd(np.sin, np.ones(4), chunk_size=2, progress=False)
    jacobians.jacfwd(np.sin, np.ones(4), chunk_size=2)
    assert records == []


@settings(max_examples=25, derandomize=True, deadline=None)
@given(n=st.integers(1, 30), chunk=st.integers(1, 12))
def test_counts_and_estimates_for_any_size(n, chunk):
    records = []
    x = np.linspace(-1.0, 1.0, n)
    J = jacobians.jacfwd(np.tanh, x, chunk_size=chunk, progress=records.append)
    np.testing.assert_allclose(np.diag(J), 1 - np.tanh(x) ** 2)
    _check_records(records, math.ceil(n / chunk), "jacobian(tanh): forward sweep")


def test_a_raising_callback_stops_the_sweep_with_its_own_exception():
    class Stop(Exception):
        pass

    calls, evaluations = [], []

    def f(x):
        evaluations.append(1)
        return np.sin(x)

    def stop_at_two(record):
        calls.append(record.done)
        if record.done == 2:
            raise Stop("enough")

    with pytest.raises(Stop, match="enough"):
        jacobians.jacfwd(f, np.ones(10), chunk_size=2, progress=stop_at_two)
    assert calls == [1, 2]
    assert len(evaluations) <= 3        # the census, two sweeps: no third sweep ran


@pytest.mark.parametrize("bad", ["yes", 1, 0.5, [print]])
def test_misuse_names_the_function_and_what_to_pass(bad):
    with pytest.raises(TypeError, match=r"jacobians\.jacfwd\(sin\): progress= takes True .*"
                                        r"a callable .*None/False"):
        jacobians.jacfwd(np.sin, np.ones(3), progress=bad)
    with pytest.raises(TypeError, match=r"jacobians\.hessian\(<lambda>\): progress="):
        jacobians.hessian(lambda v: np.sum(v ** 2), np.ones(3), progress=bad)


def test_a_callable_of_the_wrong_arity_is_refused_before_any_sweep():
    calls = []

    def f(x):
        calls.append(1)
        return np.sin(x)

    with pytest.raises(TypeError, match=r"jacobians\.jacfwd\(f\): progress=.*<lambda> must "
                                        r"take one argument.*signature is \(\)"):
        jacobians.jacfwd(f, np.ones(3), progress=lambda: None)
    with pytest.raises(TypeError, match=r"signature is \(a, b\)"):
        jacobians.sparse_hessian(lambda v: np.sum(v ** 2), np.ones(3),
                                 progress=lambda a, b: None)
    assert calls == []
    records = []
    jacobians.jacfwd(f, np.ones(3), progress=lambda r, extra=None: records.append(r))
    assert len(records) == 1                      # optional extras are fine
    jacobians.jacfwd(f, np.ones(3), progress=print)   # a builtin: no signature check needed


def test_inside_a_transformation_progress_is_ignored():
    import dualad
    records = []
    g = dualad.grad(lambda v: np.sum(jacobians.jacfwd(np.sin, v, progress=records.append)))
    np.testing.assert_allclose(g(np.zeros(3)), np.zeros(3))
    assert records == []        # the traced path sweeps nothing in chunks


def test_executor_reports_on_the_calling_thread():
    records, threads = [], set()

    def note(record):
        threads.add(threading.get_ident())
        records.append(record)

    x = np.linspace(0.0, 1.0, 9)
    with cf.ThreadPoolExecutor(2) as ex:
        J = jacobians.jacfwd(np.sin, x, chunk_size=2, executor=ex, progress=note)
    np.testing.assert_allclose(J, np.diag(np.cos(x)))
    assert threads == {threading.get_ident()}
    _check_records(records, 5, "jacobian(sin): forward sweep")


def test_executor_reverse_tasks_report_as_tasks():
    records = []
    with cf.ThreadPoolExecutor(2) as ex:
        jacobians.jacrev(np.sin, np.ones(8), chunk_size=2, executor=ex,
                         progress=records.append)
    # rows in 4 chunks of 2, grouped into one tape per worker: 2 tasks of 4 rows
    _check_records(records, 2, "jacobian(sin): reverse sweep")


def test_executor_callback_raising_cancels_the_rest():
    class Stop(Exception):
        pass

    started = []

    def slow(x):
        started.append(1)
        time.sleep(0.02)      # so that the lead sees the first task done before the rest
        return np.sin(x)

    def stop(record):
        raise Stop

    with cf.ThreadPoolExecutor(1) as ex:
        with pytest.raises(Stop):
            jacobians.jacfwd(slow, np.ones(40), chunk_size=1, executor=ex, progress=stop)
    assert len(started) < 20          # the tasks not yet run were cancelled (of 40)


def test_true_draws_a_tqdm_bar_on_stderr(capsys):
    pytest.importorskip("tqdm")
    jacobians.jacfwd(np.sin, np.ones(6), chunk_size=2, progress=True)
    err = capsys.readouterr().err
    assert "jacobians.jacobian(sin): forward sweep" in err
    assert "3/3" in err and "chunk" in err


def test_true_without_tqdm_writes_one_line_of_text(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)        # import tqdm fails
    monkeypatch.setitem(sys.modules, "tqdm.std", None)
    J = jacobians.jacfwd(np.sin, np.zeros(6), chunk_size=2, progress=True)
    np.testing.assert_allclose(J, np.eye(6))
    err = capsys.readouterr().err
    assert err.endswith("\n") and err.count("\n") == 1     # one line, rewritten in place
    assert err.count("\r") == 3
    last = err.rsplit("\r", 1)[1]
    assert last.startswith("jacobians.jacobian(sin): forward sweep: 3/3 chunks, ")
    assert "about 0.0 s left" in last
