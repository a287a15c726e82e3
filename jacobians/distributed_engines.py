"""How :mod:`jacobians.distributed` submits tasks and waits for them, per kind of executor.

Both engines offer ``submit(*task)`` (one chunk: ``_shipping.run_task`` with the payload),
``wait(futures)`` (those done, at least one), ``cancel(futures)`` and ``close()``.
"""
from __future__ import annotations

__all__ = ["Futures", "Dask"]

import concurrent.futures as cf
import uuid
import warnings

from . import _shipping


class Futures:
    """Tasks on a concurrent.futures executor. A broken ProcessPoolExecutor takes no task
    again: retries go to a fresh pool of the same size (shut down by :meth:`close`)."""

    def __init__(self, runner, payload, digest):
        self.runner, self.payload, self.digest = runner, payload, digest
        self.executor, self.fresh = runner.executor, []

    def submit(self, *task):
        try:
            return self.executor.submit(_shipping.run_task, self.payload, self.digest, *task)
        except cf.BrokenExecutor:
            if not isinstance(self.executor, cf.ProcessPoolExecutor):
                raise
            old = self.executor
            self.executor = cf.ProcessPoolExecutor(old._max_workers, mp_context=old._mp_context)
            self.fresh.append(self.executor)
            return self.executor.submit(_shipping.run_task, self.payload, self.digest, *task)
        except RuntimeError as e:
            if "shutdown" not in str(e):
                raise
            raise ValueError(f"{self.runner.api}: the {self.runner.name} given as executor= "
                             f"was shut down ({e}); make a new one") from None

    def wait(self, futures):
        return cf.wait(futures, return_when=cf.FIRST_COMPLETED).done

    def cancel(self, futures):
        for f in futures:
            f.cancel()

    def close(self):
        for ex in self.fresh:
            ex.shutdown(wait=True, cancel_futures=True)
        if self.fresh:
            warnings.warn(
                f"jacobians.{self.runner.api}: a worker process of the ProcessPoolExecutor "
                f"given as executor= died, which breaks the pool for good; this call's "
                f"retries ran on a fresh pool of the same size (now shut down), but the pool "
                f"given stays broken: make a new one for the next call", RuntimeWarning,
                stacklevel=5)


class Dask:
    """Tasks on a dask.distributed Client: the payload scattered once to every worker."""

    def __init__(self, runner, payload, digest):
        self.client, self.digest, self.retries = runner.executor, digest, runner.retries
        # a fresh key per call (hash=False): the same bytes scattered again by the next call
        # must not share the key this call releases when it is done
        self.remote = self.client.scatter(payload, broadcast=True, hash=False)

    def submit(self, *task):
        return self.client.submit(_shipping.run_task, self.remote, self.digest, *task,
                                  retries=self.retries, pure=False,
                                  key=f"dualad-sweep-{uuid.uuid4().hex}")

    def wait(self, futures):
        from distributed import wait
        return wait(futures, return_when="FIRST_COMPLETED").done

    def cancel(self, futures):
        if futures:
            self.client.cancel(futures)

    def close(self):
        self.remote = None
