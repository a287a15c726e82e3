"""HIPS autograd's own test suite, run on dualad through a shim (code nobody here wrote).

    python bench/outside/autograd_suite.py [--scipy plain|dualad] [--jit] [--sdist PATH] [-k EXPR]

The shim (bench/outside/autograd_shim/) makes ``autograd.numpy`` plain NumPy and maps
autograd's differentiation API (grad, jacobian, check_grads, ...) onto dualad's public
one. ``autograd.scipy`` is plain SciPy (``--scipy plain``, the default: code as written)
or SciPy with ``dualad.scipy`` on top (``--scipy dualad``: autograd.scipy is autograd's
own wrapped namespace, dualad.scipy ours). ``--jit`` runs every derivative the tests ask
for (grad, jacobian, hessian, make_vjp, ...) under ``dualad.jit`` and check_grads on
``jit(f)``, each answered by a replay of the compiled program (autograd_shim/autograd/_jit.py). The tests come from autograd's source
distribution (``pip download --no-deps --no-binary :all: autograd==1.9.1``, fetched into
~/.cache/dualad unless ``--sdist`` names it); nothing of it is committed here.

Applicable tests: every test except those of autograd's internals (modules that import
autograd.core/tracer/wrap_util/misc/vspaces/extend: a collection error with the shim)
and the few listed in NOT_APPLICABLE with the reason. Prints per-file counts and the
total; the exit status is 0 (a measurement, not a test).
"""
from __future__ import annotations

import argparse
import collections
import os
import pathlib
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _sdist  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
VERSION = "1.9.1"

# Tests that check something of autograd's own rather than a derivative.
NOT_APPLICABLE = {
    "test_fft.py::test_rfftn_odd_not_implemented":
        "asserts autograd raises NotImplementedError; dualad differentiates rfftn of odd sizes",
    "test_numpy.py::test_make_diagonal": "autograd.numpy.make_diagonal is autograd's own function",
    "test_numpy.py::test_diagonal": "uses autograd.numpy.make_diagonal (autograd's own)",
    "test_linalg.py::test_pinv": "calls autograd.numpy.linalg._dot, a private autograd helper",
    "test_scipy.py::test_convolve_generalization":
        "autograd's own convolve(axes=, dot_axes=), which scipy.signal.convolve does not have",
    "test_scipy.py::test_convolve_ignore": "autograd's own convolve(axes=)",
    "test_scipy.py::test_convolve_ignore_dot": "autograd's own convolve(axes=, dot_axes=)",
}


def sdist(path: str | None) -> pathlib.Path:
    return _sdist.sdist("autograd", VERSION, path)


def extract_tests(archive: pathlib.Path, into: pathlib.Path) -> pathlib.Path:
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if "/tests/" in m.name]
        tar.extractall(into, members=members, filter="data")
    return next(into.glob("autograd-*/tests"))


def run(tests: pathlib.Path, mode: str, select: str | None,
        jit: bool = False) -> list[tuple[str, str, str]]:
    xml = tests / "results.xml"
    env = dict(os.environ, PYTHONPATH=str(HERE / "autograd_shim"), AG_SHIM_SCIPY=mode,
               AG_SHIM_JIT="1" if jit else "0")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
           "--continue-on-collection-errors", f"--junitxml={xml}", "-W", "ignore"]
    if select:
        cmd += ["-k", select]
    subprocess.run(cmd, cwd=tests, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    results = []
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = case.get("name", "")
        file = (case.get("classname", "") or "").split(".")[0] + ".py"
        if case.find("error") is not None and not name:
            outcome = "collection"
        elif case.find("failure") is not None or case.find("error") is not None:
            node = case.find("failure") if case.find("failure") is not None else case.find("error")
            outcome = "failed:" + (node.get("message", "") or "").splitlines()[0][:100] \
                if (node.get("message") or "") else "failed:"
        elif case.find("skipped") is not None:
            outcome = "skipped"
        else:
            outcome = "passed"
        if file == ".py":          # a collection error: the case names the module
            file, name, outcome = name.split(".")[-1] + ".py", "", "collection"
        results.append((file, name, outcome))
    return results


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scipy", choices=("plain", "dualad"), default="plain")
    ap.add_argument("--jit", action="store_true",
                    help="every derivative under dualad.jit, answered by a replay")
    ap.add_argument("--sdist")
    ap.add_argument("-k", dest="select")
    ap.add_argument("--failures", action="store_true", help="list each failing test")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tests = extract_tests(sdist(args.sdist), pathlib.Path(tmp))
        results = run(tests, args.scipy, args.select, args.jit)
    per_file = collections.defaultdict(collections.Counter)
    failures = []
    for file, name, outcome in results:
        key = f"{file}::{name.split('[')[0]}"
        if outcome == "collection":
            per_file[file]["internals"] += 1
        elif key in NOT_APPLICABLE:
            per_file[file]["n/a"] += 1
        else:
            per_file[file][outcome.split(":")[0]] += 1
            if outcome.startswith("failed"):
                failures.append(f"{file}::{name}  {outcome[7:]}")
    print(f"autograd {VERSION} test suite on dualad (autograd.numpy = NumPy, "
          f"autograd.scipy = {'SciPy' if args.scipy == 'plain' else 'SciPy + dualad.scipy'}"
          f"{'; every derivative under dualad.jit' if args.jit else ''})")
    print(f"{'file':24s} {'passed':>7s} {'failed':>7s} {'skipped':>8s}  not applicable")
    total = collections.Counter()
    for file in sorted(per_file):
        c = per_file[file]
        total.update(c)
        na = ("autograd internals (collection)" if c["internals"] else
              (f"{c['n/a']} (see NOT_APPLICABLE)" if c["n/a"] else ""))
        print(f"{file:24s} {c['passed']:7d} {c['failed']:7d} {c['skipped']:8d}  {na}")
    applicable = total["passed"] + total["failed"]
    print(f"{'total':24s} {total['passed']:7d} {total['failed']:7d} {total['skipped']:8d}")
    print(f"applicable tests passing: {total['passed']} of {applicable} "
          f"({100.0 * total['passed'] / max(applicable, 1):.1f}%); skipped by autograd's own "
          f"marks: {total['skipped']}; not applicable: {total['n/a']} tests and "
          f"{total['internals']} modules of autograd internals")
    for name, why in NOT_APPLICABLE.items():
        print(f"  n/a {name}: {why}")
    if args.failures:
        print("\n".join(sorted(failures)))


if __name__ == "__main__":
    main()
