"""GradBench BA at the sizes too large for one process holding both peers (15-20 on a
23 GB machine): one participant per fresh process, the same spellings as
bench/sparse_peers.py (its ``dualad_participants``/``jax_participants``).

    PYTHONPATH=. python bench/sparse_peers_big.py --size 15 --who dualad|jax [--repeat 3]

Prints the first call (setup included) and the median and best of ``--repeat`` timed
calls. Not interleaved (each side runs alone): compare medians with that in mind.
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(HERE, "gradbench"))
import _pinning  # noqa: E402

if __name__ == "__main__":
    _pinning.pin_environment(1, sys.argv, _pinning.affinity_from_argv(sys.argv[1:]))

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, required=True)
    ap.add_argument("--who", choices=("dualad", "jax"), required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-affinity", action="store_true")
    args = ap.parse_args(argv)
    import gb_ba
    import sparse_peers
    n, m, p = gb_ba.SIZES[args.size]
    inputs = gb_ba.ba_inputs(n, m, p)
    pattern = gb_ba.ba_sparsity(n, m, p)
    if args.who == "dualad":
        f, v = gb_ba.ba_flat(inputs), gb_ba.ba_point(inputs)
        parts = sparse_peers.dualad_participants(sparse_peers.import_jacobians(), f, v,
                                                 False, eager=False)
        name = "dualad plan"
    else:
        parts = sparse_peers.jax_participants(inputs, pattern, jacfwd=False)
        name = "jax jacrev"
    call, first, note = parts[name]
    J = call()
    assert J.shape == pattern.shape and J.nnz == pattern.nnz
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    print(f"BA {args.size} (n={n}, m={m}, p={p}) {name}: median {statistics.median(times):.3f} s, "
          f"best {min(times):.3f} s, first call {first:.1f} s; {note}")


if __name__ == "__main__":
    main()
