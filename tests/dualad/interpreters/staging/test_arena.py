"""The block of memory a jitted program writes its large intermediates into
(dualad.interpreters.staging.arena): the same numbers as NumPy at every call, no
result of one call changed by the next, one block per concurrent call, and the memory a
call takes from the allocator down to its outputs."""
import threading
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dualad
from dualad.interpreters.staging.arena import ALIGN, Arenas, layout

N = 50_000          # entries: 400 kB float64 arrays, above the code generator's 64 KiB


def chain(x):
    a = np.sin(x) * x
    b = np.exp(-a) + np.cos(x)
    c = a * b - x
    return np.sum(c * c) + np.sum(b)


def _arenas(jitted, *args):
    """The Arenas of ``jitted``'s compiled replay for ``args``."""
    jitted(*args)
    return getattr(jitted._compiled_for(args, {}).fn, "arenas", None)


def test_values_are_numpys_at_every_call():
    rng = np.random.default_rng(0)
    f = dualad.jit(chain)
    g = dualad.jit(dualad.grad(chain))
    for _ in range(4):
        x = rng.normal(size=N)
        assert f(x) == chain(x)
        np.testing.assert_array_equal(g(x), dualad.grad(chain)(x))
    assert _arenas(g, x) is not None


def test_results_of_one_call_survive_the_next():
    g = dualad.jit(dualad.grad(chain))
    x = np.linspace(-1, 1, N)
    first = g(x)
    kept = first.copy()
    for k in range(3):
        other = g(x + k + 1)
        assert not np.shares_memory(first, other)
    np.testing.assert_array_equal(first, kept)


def test_an_output_viewing_an_intermediate_is_not_in_the_block():
    def f(x):
        y = np.sin(x) * 2.0
        return y[::2], y.reshape(2, -1)
    jf = dualad.jit(f)
    x = np.linspace(0, 1, N)
    a, b = jf(x)
    a0, b0 = a.copy(), b.copy()
    jf(x + 1.0)
    jf(x + 2.0)
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(b, b0)


def test_the_block_is_reused_and_smaller_than_the_arrays_it_holds():
    g = dualad.jit(dualad.grad(chain))
    x = np.linspace(-1, 1, N)
    arenas = _arenas(g, x)
    g(x)
    placed = [(off, int(np.prod(s)) * d.itemsize)
              for (s, d), off in zip(arenas.slots, arenas.offsets) if off is not None]
    assert len(placed) >= 4
    assert arenas.total < sum(n for _, n in placed)       # slots share bytes
    assert len(arenas._free) == 1                         # given back after the call


def test_a_second_call_takes_no_large_memory_but_its_output():
    g = dualad.jit(dualad.grad(chain))
    x = np.linspace(-1, 1, 10 * N)
    g(x)
    g(x)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        out = g(x)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert peak < out.nbytes + (1 << 17), (peak, out.nbytes)


def test_threads_each_get_a_block_of_their_own():
    g = dualad.jit(dualad.grad(chain))
    xs = [np.linspace(-1, 1, N) * (k + 1) for k in range(6)]
    want = [dualad.grad(chain)(x) for x in xs]
    g(xs[0])
    start = threading.Barrier(6)

    def work(k):                    # an exception in a thread reaches result() below
        start.wait()
        return [np.array_equal(g(xs[k]), want[k]) for _ in range(5)]
    with ThreadPoolExecutor(6) as pool:
        agree = [f.result() for f in [pool.submit(work, k) for k in range(6)]]
    assert agree == [[True] * 5] * 6


def test_a_block_still_viewed_is_not_given_to_the_next_call():
    arenas = Arenas([((4,), np.dtype(np.float64))], [0], 32)
    rec = arenas.acquire()
    held = rec[1][0][1:]            # a view of the block kept past the call
    arenas.release(rec)
    assert arenas._free == []
    rec2 = arenas.acquire()
    assert rec2[0] is not rec[0]
    del held
    arenas.release(rec2)
    assert arenas._free == [rec2]
    assert arenas.acquire() is rec2
    slot = rec2[1][0]               # the slot's own view kept (a program storing it)
    arenas.release(rec2)
    assert arenas._free == []
    del slot


def test_short_of_memory_a_call_frees_its_block(monkeypatch):
    from dualad.interpreters.staging import arena
    g = dualad.jit(dualad.grad(chain))
    x = np.linspace(-1, 1, N)
    arenas = _arenas(g, x)
    monkeypatch.setattr(arena, "ALWAYS_KEPT", 0)
    monkeypatch.setattr(arena, "available_memory", lambda: 2 * arenas.total - 1)
    arenas.clear()
    for s in (1.0, 2.0):
        np.testing.assert_array_equal(g(x * s), dualad.grad(chain)(x * s))
        assert arenas._free == []
    monkeypatch.setattr(arena, "available_memory", lambda: 4 * arenas.total - 1)
    rec = arenas.acquire()           # no block made: the call's arrays are new ones
    assert rec[0] is None and rec[1] == arenas.none
    arenas.release(rec)
    assert arenas._free == []
    monkeypatch.setattr(arena, "available_memory", lambda: 4 * arenas.total)
    g(x)
    assert len(arenas._free) == 1
    assert arena.available_memory() > 0


def test_a_failed_guard_and_a_retrace_give_numpys_values():
    def f(x):
        y = np.sin(x) * x
        if y[0] > 0:
            return y * 2.0
        return y - 1.0
    jf = dualad.jit(f)
    for s in (1.0, -1.0, 1.0, -1.0):
        x = np.linspace(0.5, 1.0, N) * s
        np.testing.assert_array_equal(jf(x), f(x))


def test_clear_cache_drops_the_block():
    g = dualad.jit(dualad.grad(chain))
    x = np.linspace(-1, 1, N)
    arenas = _arenas(g, x)
    g(x)
    assert arenas._free
    import gc
    import weakref
    block = weakref.ref(arenas._free[0][0])
    del arenas
    g.clear_cache()
    gc.collect()
    assert block() is None


def _lives_overlap(a, b):
    return a[0] <= b[1] and b[0] <= a[1]


@settings(max_examples=80, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(1, 40), st.booleans()),
                min_size=1, max_size=14))
def test_layout_never_gives_two_live_slots_one_byte(slots):
    """Random straight-line sources: slot k written at step k and read ``reach`` steps
    later, directly or through a view (which shares its memory); two slots alive at once
    never share a byte of the block, and each starts on an ALIGN boundary."""
    n = len(slots)
    lines, sizes, life = ["def f(v0, slots):"], [], {}
    for t in range(n):
        sizes.append(slots[t][1] * 24 + 8)
        lines.append(f"    v{t + 1} = np.sin(v0, out=slots[{t}])")
        life[t] = [len(lines) - 1, len(lines) - 1]
        if slots[t][2]:
            lines.append(f"    v{100 + t} = v{t + 1}.reshape((-1,))")   # a view of slot t
        for j in range(t + 1):
            if min(j + slots[j][0], n - 1) == t:
                name = f"v{100 + j}" if slots[j][2] else f"v{j + 1}"
                lines.append(f"    v{200 + j} = add_reduce({name}, (0,), None, None, False)")
                life[j][1] = len(lines) - 1
    lines.append("    return (v0,)")
    offsets, total = layout(lines, sizes, {"v0"})
    for i in range(n):
        assert offsets[i] is not None and offsets[i] % ALIGN == 0
        for j in range(i):
            if _lives_overlap(life[i], life[j]):
                assert offsets[i] + sizes[i] <= offsets[j] or \
                    offsets[j] + sizes[j] <= offsets[i], (i, j, offsets, life)
    assert total == max(o + s for o, s in zip(offsets, sizes))


def test_layout_leaves_a_slot_reaching_an_output_or_input_unplaced():
    lines = ["def f(v0, slots):",
             "    v1 = np.sin(v0, out=slots[0])",
             "    v2 = np.cos(v0, out=slots[1])",
             "    v3 = v1.reshape((-1,))",
             "    v4 = add_reduce(v2, (0,), None, None, False)",
             "    return (v3, v4)"]
    pinned = {"v0", "v3", "v4"}
    offsets, _ = layout(lines, [800, 800], pinned)
    assert offsets == [None, None]    # v4 may share v2's memory: nothing says it does not
    offsets, _ = layout(lines, [800, 800], pinned, fresh={"v4"})
    assert offsets == [None, 0]       # v4 a new array: v2's slot is the block's


def test_a_rolled_loop_body_gives_numpys_values():
    """A loop rolled into a body function (loops.py): the body has a block of its own,
    taken and given back at each of its calls."""
    def f(x):
        for _ in range(300):
            x = np.sin(x) * 0.5 + x
        return x
    x = np.linspace(0, 1, 10_000)
    jf = dualad.jit(f)
    for s in (1.0, 2.0, 1.0):
        np.testing.assert_array_equal(jf(x * s), f(x * s))
    assert "_loop0(" in jf.source(x)


def test_a_program_with_reused_names_gives_numpys_values(monkeypatch):
    """Past registers.THRESHOLD variables the source reuses names: no slot has a place
    (the layout reads the names), every large result is a new array."""
    from dualad.interpreters.staging import registers
    monkeypatch.setattr(registers, "THRESHOLD", 3)
    jf = dualad.jit(chain)
    x = np.linspace(-1, 1, N)
    for s in (1.0, 2.0):
        assert jf(x * s) == chain(x * s)
    assert "r0 = " in jf.source(x)
    assert _arenas(jf, x) is None


def test_an_output_dropped_by_the_caller_is_written_again_by_a_later_call():
    """The output's own array (no place in the block) is recycled (dualad.core.recycle):
    once the caller dropped it, a later call writes into it; while the caller holds it,
    a call never does."""
    def f(x):
        return np.sin(x) * 2.0 + x
    jf = dualad.jit(f)
    x = np.linspace(0, 1, N)
    jf(x)
    y = jf(x)
    where = y.__array_interface__["data"][0]
    kept = y
    z = jf(x + 1.0)
    assert not np.shares_memory(z, kept)
    np.testing.assert_array_equal(kept, f(x))
    del y, kept
    pools = _arenas(jf, x).recycled
    assert len(pools) == 1
    (pool,) = pools.values()
    for k in range(3):
        out = jf(x + k)
        np.testing.assert_array_equal(out, f(x + k))
        assert any(out.base is entry[0] for entry in pool._kept)
        del out
    assert len(pool._kept) == 2          # z and one array for every later call
