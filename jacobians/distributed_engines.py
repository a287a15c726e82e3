"""How :mod:`jacobians.distributed` submits tasks and waits for them, per kind of executor.

Both engines offer ``submit(*task)`` (one chunk: ``_shipping.run_task`` with the payload),
``wait(futures)`` (those done, at least one), ``cancel(futures)``, ``lost(error)`` (why a
task was lost, one line), ``closed()`` (the executor was closed during the sweep) and
``close()``.
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

    def closed(self):
        return False     # a pool shut down during the sweep fails its submits (ValueError)

    def lost(self, error):
        """A one-line reason for a task lost to the infrastructure."""
        return f"{type(error).__name__}: {str(error).rstrip('.')}"

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
    """Tasks on a dask.distributed Client: the payload scattered once to every worker.

    A worker that dies takes the scattered payload with it when it held the last copy;
    the tasks that needed it are cancelled ("already forgotten"). They come back from
    :meth:`wait` as done (their ``result()`` raises, as for any lost task), and a retry
    scatters the payload again first. A client closed during the sweep fails every
    submit; :func:`jacobians.distributed._run` reports the chunks not computed."""

    SCATTER_TIMEOUT = 30     # seconds to wait for a worker to take the payload again

    def __init__(self, runner, payload, digest):
        self.client, self.digest, self.retries = runner.executor, digest, runner.retries
        self.payload = payload
        self.remote = self._scatter(None)

    def _scatter(self, timeout):
        # a fresh key per call (hash=False): the same bytes scattered again by the next call
        # must not share the key this call releases when it is done
        kw = {} if timeout is None else {"timeout": timeout}
        return self.client.scatter(self.payload, broadcast=True, hash=False, **kw)

    def submit(self, *task):
        if self.remote.status != "finished":      # lost with the workers that held it
            self.remote = self._scatter(self.SCATTER_TIMEOUT)
        return self.client.submit(_shipping.run_task, self.remote, self.digest, *task,
                                  retries=self.retries, pure=False,
                                  key=f"dualad-sweep-{uuid.uuid4().hex}")

    def wait(self, futures):
        from distributed import wait
        try:
            done = wait(futures, return_when="FIRST_COMPLETED").done
        except Exception:  # noqa: BLE001 - cancelled futures: their result() says why
            done = set()
        # cancelled and failed futures count as done: the caller reads their result()
        return done | {f for f in futures if f.done() or f.status in ("cancelled", "lost")} \
            or set(futures[:1])

    def cancel(self, futures):
        if futures and self.client.status not in ("closed", "closing"):
            self.client.cancel(futures)

    def closed(self):
        """Whether the client was closed (or its cluster shut down) during the sweep."""
        return self.client.status in ("closed", "closing")

    def lost(self, error):
        """A one-line reason for a task lost to the infrastructure."""
        name = type(error).__name__
        if "cancel" in name.lower() or "forgotten" in str(error):
            return (f"{name}: the task was cancelled by the scheduler: the worker(s) "
                    f"running it or holding the scattered function died")
        return f"{name}: {str(error).splitlines()[0].rstrip('.') if str(error) else ''}"

    def close(self):
        self.remote = None
