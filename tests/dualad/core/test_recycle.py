"""Arrays handed out again once nothing outside holds them (dualad.core.recycle): never
one another holder still sees, always the values the caller asked for."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from dualad.core import recycle
from dualad.core.recycle import Recycled


def address(a):
    return a.__array_interface__["data"][0]


def test_an_array_comes_back_only_once_dropped():
    pool = Recycled()
    a = pool.empty((1000,), np.float64)
    b = pool.empty((1000,), np.float64)
    assert not np.shares_memory(a, b)          # a is held: a new one
    where = address(a)
    del a
    c = pool.empty((1000,), np.float64)
    assert address(c) == where


def test_a_view_or_a_container_holding_it_keeps_it():
    pool = Recycled()
    a = pool.empty((1000,), np.float64)
    view = a[::2]
    box = [memoryview(a)]
    del a
    b = pool.empty((1000,), np.float64)
    assert not np.shares_memory(b, view)
    del view, b
    c = pool.empty((1000,), np.float64)
    assert not np.shares_memory(c, np.asarray(box[0]))   # the memoryview still holds it


def test_a_shape_or_dtype_it_was_not_made_for_gets_a_new_array():
    pool = Recycled()
    a = pool.empty((10,), np.float64)
    where = address(a)
    del a
    b = pool.empty((10,), np.float32)
    assert b.dtype == np.float32 and b.shape == (10,)
    c = pool.empty((5, 2), np.float64)
    assert c.shape == (5, 2) and c.dtype == np.float64
    del b, c
    d = pool.empty((10,), np.float64)        # the first one is still there for its shape
    assert address(d) == where or len(pool._kept) == pool.keep


def test_copy_writes_the_source_over_what_the_caller_left():
    pool = Recycled()
    source = np.arange(100, dtype=np.int32)
    a = pool.copy(source)
    a[:] = -1                                 # the caller edits its result in place
    del a
    b = pool.copy(source)
    np.testing.assert_array_equal(b, source)


def test_at_most_keep_arrays_are_kept():
    pool = Recycled(keep=2)
    held = [pool.empty((100,), np.float64) for _ in range(5)]
    assert len(pool._kept) == 2
    del held
    pool.clear()
    assert pool._kept == []


def test_short_of_memory_nothing_is_kept(monkeypatch):
    monkeypatch.setattr(recycle, "ALWAYS_KEPT", 0)
    monkeypatch.setattr(recycle, "available_memory", lambda: 1)
    pool = Recycled()
    a = pool.empty((100,), np.float64)
    assert a.shape == (100,) and pool._kept == []


def test_threads_never_share_an_array():
    pool = Recycled(keep=4)

    def work(k):
        seen = []
        for _ in range(200):
            a = pool.empty((64,), np.float64)
            a.fill(k)
            seen.append(bool(np.all(a == k)))
            del a
        return all(seen)
    with ThreadPoolExecutor(6) as ex:
        assert all(f.result() for f in [ex.submit(work, k) for k in range(6)])


def test_each_call_hands_out_a_new_object():
    """A recycled array is handed out as a new view: a weak reference to an earlier
    result dies when the caller drops it, as it would for a new array."""
    import gc
    import weakref
    pool = Recycled()
    a = pool.empty((100,), np.float64)
    ref = weakref.ref(a)
    del a
    gc.collect()
    assert ref() is None
    b = pool.empty((100,), np.float64)
    assert b.base is pool._kept[0][0]
