"""checkpoint_schedules' own tests of binomial checkpointing, run on dualad.revolve.

    python bench/outside/checkpoint_schedules_suite.py [--sdist PATH] [--theirs] [--failures]

The PyPI package ``checkpoint_schedules`` 1.0.4 (the Firedrake / tlm_adjoint
checkpointing library, LGPL) ships tests with its source distribution:
tests/test_validity.py replays a schedule's actions through a validity model (storage
limits, each adjoint step from its own forward data, the forward never past the
adjoint) and tests/test_multistage.py checks the multistage (binomial) schedule,
including its total forward steps against the package's ``optimal_steps_binomial``.
The sdist (``pip download --no-deps --no-binary :all: checkpoint_schedules==1.0.4``) is
fetched into ~/.cache/dualad unless ``--sdist`` names it, unpacked into a temporary
directory and put on the test process's PYTHONPATH; nothing is installed and nothing of
it is committed here.

The shim (bench/outside/checkpoint_schedules_shim/dualad_cs_shim.py, a pytest plugin;
its docstring states the conventions) replaces the package's two binomial classes,
``Revolve(n, s)`` (RAM) and ``MultistageCheckpointSchedule(n, 0, s)`` (DISK), with
dualad.revolve's schedule translated into the package's own action objects. The tests
of those classes are the measurement: every ``test_multistage`` case and the
``test_validity`` cases of ``revolve`` and ``multistage``. The other schedules in
test_validity (HRevolve, DiskRevolve, mixed, two-level, single-storage) are the
package's own, unshimmed, and are reported on a separate line. ``--theirs`` also runs
the same tests with no shim (the package's own classes), for reference.

It also compares ``dualad.revolve.forward_steps(n, s) + n`` with the package's
``optimal_steps_binomial(n, s)`` (a dynamic programme over the split point) on the
(n, s) grid of the tests. Prints per-test counts and the totals; the exit status is 0
(a measurement, not a test).
"""
from __future__ import annotations

import argparse
import collections
import os
import pathlib
import re
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _sdist  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
SHIM = HERE / "checkpoint_schedules_shim"
VERSION = "1.0.4"
TEST_FILES = ("test_validity.py", "test_multistage.py")
SHIMMED_VALIDITY = {"revolve", "multistage"}       # test_validity's schedule ids we replace
# the (n, S) grid both test files use
GRID = [(1, (0,)), (2, (1,)), (3, (1, 2)), (5, (2,)), (10, tuple(range(2, 10))),
        (100, tuple(range(1, 100))), (250, tuple(range(25, 250, 25)))]


def sdist(path: str | None) -> pathlib.Path:
    return _sdist.sdist("checkpoint_schedules", VERSION, path)


def unpack(archive: pathlib.Path, into: pathlib.Path) -> pathlib.Path:
    """The unpacked source tree (a directory given as --sdist is used as it is)."""
    if archive.is_dir():
        return archive
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return next(into.glob("checkpoint_schedules-*"))


def run(root: pathlib.Path, shimmed: bool, out: pathlib.Path) -> list[tuple[str, str, str]]:
    """(file, test id, outcome) for every test case of TEST_FILES."""
    xml = out / ("shimmed.xml" if shimmed else "theirs.xml")
    path = [str(root)] + ([str(SHIM)] if shimmed else [])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
           f"--junitxml={xml}", "-W", "ignore", "--rootdir", str(root / "tests")]
    if shimmed:
        cmd += ["-p", "dualad_cs_shim"]
    cmd += [str(root / "tests" / f) for f in TEST_FILES]
    subprocess.run(cmd, cwd=out, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    results = []
    for case in ET.parse(xml).getroot().iter("testcase"):
        file = (case.get("classname", "") or "").split(".")[-1] + ".py"
        bad = case.find("failure") if case.find("failure") is not None else case.find("error")
        if bad is not None:
            outcome = "failed:" + ((bad.get("message") or "").splitlines() or [""])[0][:160]
        elif case.find("skipped") is not None:
            outcome = "skipped"
        else:
            outcome = "passed"
        results.append((file, case.get("name", ""), outcome))
    return results


def group(file: str, name: str) -> str:
    """'shimmed' for the tests of the classes the shim replaces, else 'theirs'."""
    if file == "test_multistage.py":
        return "shimmed"
    m = re.search(r"-([a-z_]+)\]$", name)
    return "shimmed" if m and m.group(1) in SHIMMED_VALIDITY else "theirs"


def report(results, title: str, show_failures: bool) -> None:
    print(title)
    per = collections.defaultdict(collections.Counter)
    failures = []
    for file, name, outcome in results:
        key = f"{file}::{name.split('[')[0]}"
        m = re.search(r"-([a-z_]+)\]$", name) if file == "test_validity.py" else None
        if m:
            key += f"[{m.group(1)}]"
        per[(group(file, name), key)][outcome.split(":")[0]] += 1
        if outcome.startswith("failed"):
            failures.append(f"  {file}::{name}  {outcome[7:]}")
    print(f"  {'test (schedule)':52s} {'passed':>7s} {'failed':>7s} {'skipped':>8s}")
    for which in ("shimmed", "theirs"):
        total = collections.Counter()
        for (g, key), c in sorted(per.items()):
            if g != which:
                continue
            total.update(c)
            print(f"  {key:52s} {c['passed']:7d} {c['failed']:7d} {c['skipped']:8d}")
        label = ("binomial tests (Revolve, MultistageCheckpointSchedule)" if which == "shimmed"
                 else "their other schedules, unshimmed")
        print(f"  total, {label}: {total['passed']} passed, {total['failed']} failed, "
              f"{total['skipped']} skipped (by their tests' own pytest.skip)")
    if show_failures and failures:
        print("\n".join(sorted(failures)))


def compare_counts(root: pathlib.Path) -> None:
    """dualad.revolve.forward_steps(n, s) + n against their optimal_steps_binomial(n, s)."""
    sys.path.insert(0, str(root))
    try:
        from checkpoint_schedules.multistage import optimal_steps_binomial
    finally:
        sys.path.remove(str(root))
    from dualad import revolve
    agree, differ = 0, []
    for n, S in GRID:
        for s in S:
            theirs = optimal_steps_binomial(n, s)
            ours = n + revolve.forward_steps(n, max(s, 1))   # their s = 0 only at n = 1
            if theirs == ours:
                agree += 1
            else:
                differ.append((n, s, theirs, ours))
    print(f"forward steps on the tests' (n, s) grid: n + dualad.revolve.forward_steps(n, s) "
          f"equals checkpoint_schedules' optimal_steps_binomial(n, s) for {agree} of "
          f"{agree + len(differ)} pairs")
    for n, s, theirs, ours in differ:
        print(f"  differs at n={n}, s={s}: theirs {theirs}, dualad {ours}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sdist", help="the sdist (.tar.gz) or its unpacked directory")
    ap.add_argument("--theirs", action="store_true",
                    help="also run the tests with the package's own classes (no shim)")
    ap.add_argument("--failures", action="store_true", help="list each failing test")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        root = unpack(sdist(args.sdist), tmp)
        report(run(root, True, tmp),
               f"checkpoint_schedules {VERSION} tests with Revolve and "
               f"MultistageCheckpointSchedule answered by dualad.revolve (shim)",
               args.failures)
        if args.theirs:
            report(run(root, False, tmp),
                   f"the same tests, checkpoint_schedules {VERSION}'s own classes (no shim)",
                   args.failures)
        compare_counts(root)


if __name__ == "__main__":
    main()
