"""Griewank and Walther, binomial checkpointing ("revolve"), against dualad.revolve.

Sources
-------
- A. Griewank, "Achieving logarithmic growth of temporal and spatial complexity in
  reverse automatic differentiation", Optimization Methods and Software 1(1):35–54, 1992
  (the abstract: the growth of both run time and memory "can be limited to a fixed
  multiple of log(T)").
- A. Griewank and A. Walther, "Algorithm 799: revolve: an implementation of checkpointing
  for the reverse or adjoint mode of computational differentiation", ACM TOMS 26(1):19–45,
  2000, doi:10.1145/347837.347846, and its published test run in the Collected Algorithms
  of the ACM (CALGO 799, ``C/Drivers/data`` and ``C/Drivers/res``; the Fortran 77 driver's
  ``res`` prints the same numbers): ``steps = 14, snaps = 3`` gives

      prediction of needed forward steps: 27    slowdown factor: 1.9286
      advances: 27    takeshots: 6    commands: 47

  and the 46 actions listed in :data:`PUBLISHED_RUN` (``takeshot``, ``advance``,
  ``firsturn``, ``youturn``, ``restore``). The documentation of that archive defines
  ``MAXRANGE(SNAPS, REPS) = (SNAPS+REPS)!/(SNAPS! REPS!)`` (our β), ``NUMFORW`` = "the
  necessary number of forward steps without recording", ``EXPENSE = NUMFORW/STEPS`` (the
  slowdown factor) and says ``ADJUST`` picks ``SNAPS ≈ log_4(STEPS)``.
- A. Griewank and A. Walther, *Evaluating Derivatives*, 2nd ed., SIAM 2008, ch. 12: the
  binomial bound l ≤ β(s, r) = C(s + r, s) on the steps ``s`` checkpoints reverse with
  repetition number ``r``, and the fewest forward steps t(l, s) = r·l − β(s + 1, r − 1)
  with β(s, r − 1) < l ≤ β(s, r).

Conventions (checked, not assumed)
----------------------------------
revolve's ``snaps`` counts the checkpoint that holds the initial state (the run starts
with ``takeshot at 0`` and never holds more than 3), exactly as dualad's ``snapshots``;
its step counts (``NUMFORW``, ``advances``) count only untaped forward steps, not the
``firsturn``/``youturn`` steps that tape and reverse one step each, exactly as
:func:`dualad.revolve.forward_steps`. No conversion is needed; the translation of the
published actions below shows it (it replays under :func:`dualad.revolve.simulate`, which
refuses a fourth stored state or an impossible move). revolve keeps its checkpoints on a
stack: ``restore`` returns to the most recent one, and a checkpoint is dropped once the
step that starts from it has been reversed (dualad's explicit ``("free", i)``).

What is asserted
----------------
Published numbers (exact): 27 forward steps for (14, 3) from the closed form, from
``schedule(14, 3)`` run through ``simulate`` and from the published actions replayed; the
slowdown factor 1.9286 = 27/14; 6 takeshots and 47 commands (46 actions and the final
``terminate``) in the published run, and 6 stores by ``schedule(14, 3)``, whose 46
actions equal the published ones; at most 3 states held. Published formulas, on grids
of (l, s): β(s, r) = (s+r)!/(s! r!); the closed form equals the minimum of the recursion
over the first checkpoint by brute force (l ≤ 60) and the advances of the schedule
(l ≤ 300, and l = 10^4, 10^5); r is the smallest with β(s, r) ≥ l; no step is advanced
more than r times; at l = β(s, r) exactly the repetition rate t/l is r·s/(s + 1) < r;
``ADJUST``'s logarithmic claim (SNAPS ≈ log_4 STEPS): with s = r, l = β(r, r) = C(2r, r) so
log_4 l ≤ s ≤ log_4 l + log_4(2√r), and t ≤ r·l = O(l log l).

revolve's secondary criterion: its abstract says its schedules are optimal for "a
primary and a secondary criterion"; the text naming the secondary one could not be read
here. The published run writes 6 checkpoints (``takeshot``), which is the fewest stores
of any schedule of dualad's recursive form with 27 advances (an exhaustive search over
the optimal first-checkpoint positions, :func:`fewest_stores`). ``dualad.revolve.schedule``
picks, among the optimal positions, one that also minimizes the stores (checked against
that search for l < 90 in tests/dualad/test_revolve.py) and reproduces the published run
action for action. Griewank's and the book's numeric tables could not be read here, so
none of their entries is asserted: the table this script prints is computed (closed
form = schedule = recursion), not copied.

    python -m papers.griewank_walther_revolve      (exit status 1 on any mismatch)
"""
from __future__ import annotations

import math
import sys
import time
from functools import lru_cache

from dualad import revolve
from papers._compare import Report

# CALGO 799, C/Drivers/res (input C/Drivers/data: 14 3 3), verbatim apart from spacing.
PUBLISHED_RUN = """\
 ENTER:   STEPS, SNAPS, INFO
  14  3  3
 prediction of needed forward steps:       27 =>
 slowdown factor:   1.9286

 takeshot at      0
 advance to       5
 takeshot at      5
 advance to      10
 takeshot at     10
 advance to      13
 firsturn at     13
 restore at      10
 advance to      12
 youturn at      12
 restore at      10
 advance to      11
 youturn at      11
 restore at      10
 youturn at      10
 restore at       5
 advance to       7
 takeshot at      7
 advance to       9
 youturn at       9
 restore at       7
 advance to       8
 youturn at       8
 restore at       7
 youturn at       7
 restore at       5
 advance to       6
 youturn at       6
 restore at       5
 youturn at       5
 restore at       0
 advance to       1
 takeshot at      1
 advance to       2
 takeshot at      2
 advance to       4
 youturn at       4
 restore at       2
 advance to       3
 youturn at       3
 restore at       2
 youturn at       2
 restore at       1
 youturn at       1
 restore at       0
 youturn at       0

 advances:    27
 takeshots:    6
 commands:    47
"""

PUBLISHED = dict(steps=14, snaps=3, forward_steps=27, slowdown=1.9286, advances=27,
                 takeshots=6, commands=47)


def parse_run(text):
    """The published run as ``(header numbers, revolve actions)``: the numbers after
    ``prediction...``, ``slowdown factor``, ``advances``, ``takeshots``, ``commands``, and
    the actions as ``(name, index)`` pairs in order."""
    numbers, actions = {}, []
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        if words[0] == "prediction":
            numbers["forward_steps"] = int(words[words.index("steps:") + 1])
        elif words[0] == "slowdown":
            numbers["slowdown"] = float(words[-1])
        elif words[0] in ("advances:", "takeshots:", "commands:"):
            numbers[words[0][:-1]] = int(words[1])
        elif words[0] in ("takeshot", "advance", "firsturn", "youturn", "restore"):
            actions.append((words[0], int(words[-1])))
    return numbers, actions


def to_dualad(actions):
    """Translate revolve's actions into :func:`dualad.revolve.schedule`'s tuples.

    ``takeshot at i`` stores x_i (pushed on revolve's stack), ``advance to j`` advances the
    current state to x_j, ``firsturn``/``youturn at i`` tapes and reverses step i (after
    which a checkpoint holding x_i is dropped: an explicit ``free``), ``restore at i``
    returns to the most recent checkpoint, which must be x_i."""
    out, stack, here = [], [], 0
    for name, i in actions:
        if name == "takeshot":
            out.append(("store", i))
            stack.append(i)
        elif name == "advance":
            out.append(("advance", here, i))
            here = i
        elif name in ("firsturn", "youturn"):
            out.append(("reverse", i))
            here = None
            if stack and stack[-1] == i:
                out.append(("free", stack.pop()))
        elif name == "restore":
            if not stack or stack[-1] != i:
                raise ValueError(f"restore at {i}: the most recent checkpoint is "
                                 f"{stack[-1] if stack else None}")
            out.append(("restore", i))
            here = i
        else:
            raise ValueError(f"unknown revolve action {name!r}")
    return out


@lru_cache(None)
def recursion(l, s):
    """The fewest advances by brute force over the first checkpoint m (Griewank 1992):
    t(1, s) = 0, t(l, 1) = l(l−1)/2, t(l, s) = min_m m + t(l−m, s−1) + t(m, s)."""
    if l <= 1:
        return 0
    if s == 1:
        return l * (l - 1) // 2
    return min(m + recursion(l - m, s - 1) + recursion(m, s) for m in range(1, l))


@lru_cache(None)
def fewest_stores(l, s):
    """The fewest ``store`` actions (x_0's excluded) of a schedule of dualad's recursive
    form that reverses l steps with s states in :func:`dualad.revolve.forward_steps`
    advances: every optimal first checkpoint m is tried (a one-step tail needs no
    store)."""
    if l <= 1 or s == 1:
        return 0
    t = revolve.forward_steps
    best_cost = min(m + t(l - m, s - 1) + t(m, s) for m in range(1, l))
    return min((0 if l - m == 1 else 1 + fewest_stores(l - m, s - 1)) + fewest_stores(m, s)
               for m in range(1, l) if m + t(l - m, s - 1) + t(m, s) == best_cost)


def published_rows(report):
    numbers, actions = parse_run(PUBLISHED_RUN)
    l, s = PUBLISHED["steps"], PUBLISHED["snaps"]
    report.check("(14, 3) header: parsed as published", [PUBLISHED[k] for k in (
        "forward_steps", "advances", "takeshots", "commands")], [numbers[k] for k in (
            "forward_steps", "advances", "takeshots", "commands")], exact=True)
    report.check("(14, 3) forward steps: closed form r·l − β(s+1, r−1)",
                 PUBLISHED["forward_steps"], revolve.forward_steps(l, s), exact=True)
    ours = revolve.simulate(revolve.schedule(l, s), l)
    report.check("(14, 3) forward steps: schedule() through simulate()",
                 PUBLISHED["advances"], ours["advances"], exact=True)
    theirs = revolve.simulate(to_dualad(actions), l)
    report.check("(14, 3) forward steps: published actions replayed",
                 PUBLISHED["advances"], theirs["advances"], exact=True)
    report.check("(14, 3) slowdown factor NUMFORW/STEPS", PUBLISHED["slowdown"],
                 revolve.forward_steps(l, s) / l, decimals=4)
    report.check("(14, 3) commands: 46 actions + terminate", PUBLISHED["commands"],
                 len(actions) + 1, exact=True)
    report.check("(14, 3) takeshots in the published actions", PUBLISHED["takeshots"],
                 theirs["stores"], exact=True)
    report.check("(14, 3) states held at once (snaps counts x_0)", [s, s],
                 [theirs["peak_stored"], ours["peak_stored"]], exact=True)
    report.check("(14, 3) steps reversed (firsturn + youturn)", [l, l],
                 [theirs["reverses"], ours["reverses"]], exact=True)
    r = revolve.repetitions(l, s)
    report.note("(14, 3) most advances of one step (<= r)", f"<= r = {r}",
                f"published {theirs['max_advances_per_step']}, dualad "
                f"{ours['max_advances_per_step']}",
                ok=max(theirs["max_advances_per_step"], ours["max_advances_per_step"]) <= r)
    report.check("(14, 3) fewest stores with 27 advances (search)", PUBLISHED["takeshots"],
                 1 + fewest_stores(l, s), exact=True)
    report.check("(14, 3) takeshots of dualad.revolve.schedule", PUBLISHED["takeshots"],
                 ours["stores"], exact=True)
    same = revolve.schedule(l, s) == to_dualad(actions)
    report.note("(14, 3) schedule() = the published actions", "46 actions",
                "identical" if same else "differ", ok=same)

def formula_rows(report):
    ok = all(revolve.beta(s, r) == math.factorial(s + r) // (math.factorial(s) *
                                                             math.factorial(r))
             for s in range(0, 12) for r in range(0, 12))
    report.note("MAXRANGE: β(s, r) = (s+r)!/(s! r!), s, r < 12", "all", "all" if ok else
                "differs", ok=ok)
    bad = [(l, s) for s in range(1, 7) for l in range(1, 61)
           if revolve.forward_steps(l, s) != recursion(l, s)]
    report.note("t(l, s) = min over m of the recursion, l <= 60, s <= 6", "all equal",
                bad[:3] or "all equal", ok=not bad)
    bad = []
    for s in range(1, 9):
        for l in range(1, 301):
            counts = revolve.simulate(revolve.schedule(l, s), l)
            r = revolve.repetitions(l, s)
            if (counts["advances"] != revolve.forward_steps(l, s)
                    or counts["peak_stored"] > s or counts["max_advances_per_step"] > r
                    or not revolve.beta(s, r - 1) < l <= revolve.beta(s, r) and l > 1):
                bad.append((l, s))
    report.note("schedule: advances = t(l, s), <= s states, <= r advances per step, "
                "β(s, r−1) < l <= β(s, r); l <= 300, s <= 8", "all", bad[:3] or "all",
                ok=not bad)
    bad = [(s, r) for s in range(1, 10) for r in range(1, 8)
           if revolve.forward_steps(revolve.beta(s, r), s) * (s + 1)
           != r * s * revolve.beta(s, r)]
    report.note("l = β(s, r): t/l = r·s/(s+1), s < 10, r < 8", "all", bad[:3] or "all",
                ok=not bad)
    bad = [l for l in range(2, 201) if revolve.forward_steps(l, 1) != l * (l - 1) // 2]
    report.note("t(l, 1) = l(l−1)/2 (one checkpoint: x_0), l = 2..200", "all",
                bad[:3] or "all", ok=not bad)
    bad = [l for l in range(2, 201) if revolve.forward_steps(l, l - 1) != l - 1]
    report.note("t(l, s) = l − 1 for s = l − 1 (one sweep), l = 2..200", "all",
                bad[:3] or "all", ok=not bad)

def logarithmic_rows(report):
    """Griewank (1992): s = r = O(log l) checkpoints give O(l log l) forward steps."""
    for r in (2, 4, 6, 8, 10, 12):
        l = revolve.beta(r, r)
        t = revolve.forward_steps(l, r)
        lo = math.log(l, 4)
        hi = lo + math.log(2 * math.sqrt(r), 4)
        report.note(f"s = r = {r}: l = C(2r, r) = {l}",
                    "log_4 l <= s <= log_4 l + log_4(2√r); t/l < r",
                    f"{lo:.2f} <= {r} <= {hi:.2f}; t/l = {t / l:.3f}",
                    ok=lo <= r <= hi + 1e-12 and revolve.repetitions(l, r) == r and t < r * l)


def long_chain_rows(report):
    for l, s in ((10_000, 20), (100_000, 10)):
        start = time.perf_counter()
        counts = revolve.simulate(revolve.schedule(l, s), l)
        seconds = time.perf_counter() - start
        r = revolve.repetitions(l, s)
        report.check(f"l = {l}, s = {s}: advances = t(l, s)", revolve.forward_steps(l, s),
                     counts["advances"], exact=True)
        report.note(f"l = {l}, s = {s}: states, advances per step", f"<= {s}, <= r = {r}",
                    f"{counts['peak_stored']}, {counts['max_advances_per_step']} "
                    f"({seconds:.2f} s to schedule and replay)",
                    ok=counts["peak_stored"] <= s and counts["max_advances_per_step"] <= r)


def table():
    """Forward steps t(l, s) and the repetition number r for a grid of (l, s): computed
    (closed form; the rows above check it equals the schedule and the recursion)."""
    ls = (10, 14, 20, 50, 100, 1000, 10_000)
    ss = (1, 2, 3, 4, 5, 10)
    head = "l \\ s " + "".join(f"{s:>16}" for s in ss)
    lines = ["t(l, s)  (r)  [computed: closed form = schedule(); not a published table]",
             head]
    for l in ls:
        cells = "".join(f"{revolve.forward_steps(l, s):>11} ({revolve.repetitions(l, s):>2})"
                        for s in ss)
        lines.append(f"{l:<6}{cells}")
    return "\n".join(lines)


def main() -> int:
    report = Report("Griewank & Walther: binomial checkpointing (revolve, ACM TOMS 799)")
    published_rows(report)
    formula_rows(report)
    logarithmic_rows(report)
    long_chain_rows(report)
    print(table())
    print()
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
