"""executor= on a dask.distributed Client: a LocalCluster of 2 worker processes.

CI installs dask through the test extra, so nothing here is skipped there; the
importorskip only guards a machine without it.
"""
import os

import numpy as np
import pytest
import scipy.sparse as sp

pytestmark = pytest.mark.slow   # a LocalCluster of 2 worker processes
pytest.importorskip("distributed")
from distributed import Client, LocalCluster  # noqa: E402

from dualad import jacobians  # noqa: E402
from dualad.jacobians import DistributedSweepError  # noqa: E402

# The functions the workers run, shared with the concurrent.futures tests.
from test_distributed import (X, claims, elementwise, fails_in_workers, matmul,  # noqa: E402
                              same_sparse, scalar, tridiagonal, two_args)


def dies_once_on_dask(x, mark):
    if claims(mark):
        os._exit(3)
    return np.sin(x) * np.sum(x)


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as c:
        yield c


def test_dense_jacobians_equal_the_local_ones_exactly(client):
    for chunk in (None, 3):
        for mode in ("auto", "forward", "reverse"):
            got = jacobians.jacobian(elementwise, X, mode=mode, chunk_size=chunk,
                                     executor=client)
            assert np.array_equal(got, jacobians.jacobian(elementwise, X, mode=mode,
                                                          chunk_size=chunk)), (mode, chunk)
    assert np.array_equal(jacobians.jacfwd(matmul, X, chunk_size=2, executor=client),
                          jacobians.jacfwd(matmul, X, chunk_size=2))
    assert np.array_equal(jacobians.jacrev(matmul, chunk_size=2, executor=client)(X),
                          jacobians.jacrev(matmul, chunk_size=2)(X))


def test_argnums_tuple_and_containers(client):
    a = {"p": np.array([0.3, 0.7, 1.1]), "q": np.array([2.0, -1.0])}
    b = np.array([0.5, 1.5, 2.5])
    got = jacobians.jacobian(two_args, a, b, argnums=(0, 1), mode="reverse", executor=client)
    want = jacobians.jacobian(two_args, a, b, argnums=(0, 1), mode="reverse")
    assert np.array_equal(got["u"][0]["p"], want["u"][0]["p"])
    assert np.array_equal(got["v"][1], want["v"][1])


def test_hessians_dense_and_sparse(client):
    for mode in ("forward-over-reverse", "reverse-over-reverse", "reverse-over-forward",
                 "forward-over-forward"):
        assert np.array_equal(jacobians.hessian(scalar, X, mode=mode, chunk_size=4,
                                                executor=client),
                              jacobians.hessian(scalar, X, mode=mode, chunk_size=4)), mode
    x = np.linspace(0.2, 2.0, 12)
    assert same_sparse(jacobians.sparse_hessian(scalar, x, executor=client),
                       jacobians.sparse_hessian(scalar, x))
    for mode in ("forward", "reverse"):
        got = jacobians.sparse_jacobian(tridiagonal, x, mode=mode, chunk_size=1,
                                        executor=client)
        assert sp.issparse(got) and same_sparse(
            got, jacobians.sparse_jacobian(tridiagonal, x, mode=mode, chunk_size=1))


def test_plan_on_dask(client):
    p = jacobians.plan(elementwise, X, mode="forward", executor=client)
    text = p.explain()
    assert "Executor: Client (dask), 2 worker(s): 9 directions in 2 chunk(s) of up to 5" in text
    assert "scattered to every worker once" in text
    assert np.array_equal(p(X * 2), jacobians.jacobian(elementwise, X * 2, mode="forward"))


def test_an_error_in_a_task_is_reported_not_retried(client):
    with pytest.raises(DistributedSweepError) as info:
        jacobians.jacobian(fails_in_workers, X, mode="forward", chunk_size=5, executor=client)
    assert "boom in a worker" in str(info.value) and "columns" in str(info.value)
    assert "Worker traceback:" in str(info.value)
    assert isinstance(info.value.__cause__, ValueError)


def test_a_lost_worker_is_replaced_and_the_result_is_exact(client, tmp_path):
    mark = tmp_path / "dies"
    mark.touch()
    got = jacobians.jacfwd(dies_once_on_dask, X, str(mark), chunk_size=3, executor=client)
    assert not mark.exists()
    assert np.array_equal(got, jacobians.jacfwd(dies_once_on_dask, X, str(mark), chunk_size=3))
    client.wait_for_workers(2, timeout=30)


def test_a_client_without_workers_or_closed_is_refused():
    with LocalCluster(n_workers=0, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as c:
        with pytest.raises(ValueError, match="has 0 workers"):
            jacobians.jacobian(elementwise, X, executor=c)
    with pytest.raises(ValueError, match="is closed"):
        jacobians.jacobian(elementwise, X, executor=c)


def test_the_readme_example_runs_alone_in_a_fresh_interpreter(tmp_path):
    """README's "Bigger than one machine" block, as a script (Dask needs the __main__ guard)."""
    import pathlib
    import subprocess
    import sys
    readme = pathlib.Path(__file__).resolve().parents[2] / "README.md"
    from markdown_blocks import python_blocks
    blocks = [code for _, code in python_blocks(readme.read_text())]
    block = next(b for b in blocks if "executor=client" in b)
    script = tmp_path / "readme_dask.py"
    script.write_text(block)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Executor: Client (dask), 2 worker(s): 40 directions in 2 "
                                 "chunk(s) of up to 20")


def test_progress_is_reported_on_the_calling_thread_and_logged(client, caplog):
    """Dask completes futures on its own threads; the records come on this one (docs/logging.md)."""
    import logging
    import threading
    records, threads = [], set()

    def note(record):
        threads.add(threading.get_ident())
        records.append(record)

    with caplog.at_level(logging.DEBUG, logger="dualad.distributed"):
        got = jacobians.jacfwd(elementwise, X, chunk_size=2, executor=client, progress=note)
    assert np.array_equal(got, jacobians.jacfwd(elementwise, X, chunk_size=2))
    total = -(-X.size // 2)
    assert [r.done for r in records] == list(range(1, total + 1))
    assert threads == {threading.get_ident()} and records[-1].remaining == 0.0
    finished = [r for r in caplog.records if " finished in " in r.getMessage()]
    assert len(finished) == total
    assert any("on the Client (dask, 2 worker(s))" in r.getMessage() for r in caplog.records)
