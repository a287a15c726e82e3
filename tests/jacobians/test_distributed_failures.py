"""Dask failures end in the documented DistributedSweepError naming the chunks not
computed (issue 30), as the process-pool path does: a worker that dies on every task
(before: ``FuturesCancelledError ... already forgotten``), workers dying with the
scattered function (retried on a re-scattered copy: exact result), and a client or
cluster shut down in the middle of a sweep."""
import multiprocessing
import os
import threading
import time

import numpy as np
import pytest

pytestmark = pytest.mark.slow   # Dask clusters, workers killed on purpose
pytest.importorskip("distributed")
from distributed import Client, LocalCluster  # noqa: E402

from dualad import jacobians  # noqa: E402
from dualad.jacobians import DistributedSweepError  # noqa: E402

X = np.linspace(0.1, 1.3, 9)


def always_dies(x):
    if multiprocessing.parent_process() is not None:
        os._exit(3)
    return np.sin(x)


def dies_twice(x, first, second):
    """The first two tasks to run kill their worker (each removes one of the marks)."""
    for mark in (first, second):
        try:
            os.unlink(mark)
        except FileNotFoundError:
            continue
        if multiprocessing.parent_process() is not None:
            os._exit(3)
    return np.sin(x) * np.sum(x)


def first_fast_others_slow(x, mark):
    """The first task to run creates ``mark`` and returns; the others sleep, so they are
    still running when the test shuts the cluster down."""
    try:
        os.close(os.open(mark, os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        time.sleep(3.0)
    return np.sin(x) * np.sum(x)


def _cluster(n, processes):
    return LocalCluster(n_workers=n, threads_per_worker=1, processes=processes,
                        dashboard_address=None)


@pytest.fixture(scope="module")
def client():
    with _cluster(2, True) as cluster, Client(cluster) as c:
        yield c


@pytest.mark.parametrize("retries", [0])
def test_a_worker_dying_on_every_task_names_the_missing_chunks(client, retries):
    client.wait_for_workers(2, timeout=60)
    with pytest.raises(DistributedSweepError) as info:
        jacobians.jacfwd(always_dies, X, chunk_size=3, executor=client, retries=retries)
    msg = str(info.value)
    assert info.value.missing == [(0, 3), (3, 3), (6, 3)]
    assert "columns 0..2, 3..5, 6..8 of 9 were not computed" in msg
    assert f"after {retries} retr{'y' if retries == 1 else 'ies'} each" in msg
    assert "already forgotten" not in msg and "Dask restarts a worker" in msg


def test_workers_dying_with_the_scattered_function_are_retried_exactly(client, tmp_path):
    """Both copies of the scattered function may go with the two dead workers: a retry
    scatters it again (before: every retry was cancelled, 'already forgotten')."""
    client.wait_for_workers(2, timeout=60)
    marks = [tmp_path / "one", tmp_path / "two"]
    for m in marks:
        m.touch()
    got = jacobians.jacfwd(dies_twice, X, *map(str, marks), chunk_size=3, executor=client)
    assert not any(m.exists() for m in marks)
    assert np.array_equal(got, jacobians.jacfwd(dies_twice, X, *map(str, marks),
                                                chunk_size=3))


@pytest.mark.parametrize("what", ["client", "cluster"])
def test_shut_down_in_the_middle_of_a_sweep(tmp_path, what):
    """In-process workers (processes=False): fast to start and to stop, deterministic."""
    mark = tmp_path / "first"
    cluster = _cluster(2, False)
    client = Client(cluster)

    def shut_down():                  # after the first chunk is computed
        while not mark.exists():
            time.sleep(0.01)
        time.sleep(0.2)
        (client if what == "client" else cluster).close()
    closer = threading.Thread(target=shut_down)
    closer.start()
    try:
        with pytest.raises(DistributedSweepError) as info:
            jacobians.jacfwd(first_fast_others_slow, X, str(mark), chunk_size=3,
                             executor=client)
    finally:
        closer.join(timeout=30)
        client.close()
        cluster.close()
    msg = str(info.value)
    assert "was closed during the sweep" in msg and "not computed" in msg
    assert info.value.missing and set(info.value.missing) <= {(0, 3), (3, 3), (6, 3)}
    assert len(info.value.missing) >= 2          # the two slow chunks at least
