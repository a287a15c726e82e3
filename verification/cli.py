"""``dualad check path/to/module.py[:name]``: verify custom rules from the shell.

Loads the module (importing it runs its top-level code), takes the named
object (or every primitive and ``autograd.Function`` subclass it defines), runs
:func:`check_rule` on each and prints the reports: the checks that ran, and
which modes were not checked because the rule has no JVP (or no VJP). Exit
status: 0 all pass, 1 a check failed (a rule is wrong), 2 the target could not be
loaded or a rule could not be checked (no sample could be drawn) — so it can gate a
user's CI.
"""
from __future__ import annotations

__all__ = ["check_command"]

import importlib
import importlib.util
import os
import sys

import dualad
from dualad.extend import Primitive

from .rules import check_rule


def _load(target):
    path, _, name = target.partition(":") if not os.path.exists(target) else (target, "", "")
    if path.endswith(".py") or os.path.exists(path):
        if not os.path.exists(path):
            raise FileNotFoundError(f"no such file: {path}")
        mod_name = os.path.splitext(os.path.basename(path))[0]
        spec = importlib.util.spec_from_file_location(mod_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
        try:
            spec.loader.exec_module(module)
        finally:
            sys.path.pop(0)
    else:
        module = importlib.import_module(path)
    if name:
        if not hasattr(module, name):
            raise AttributeError(f"{target}: module {module.__name__} has no attribute {name!r}")
        return [getattr(module, name)]
    found = [v for v in vars(module).values() if _checkable(v)]
    if not found:
        raise LookupError(f"{target}: defines no dualad primitive or autograd.Function")
    return found


def _checkable(obj):
    return isinstance(obj, Primitive) or (isinstance(obj, type) and issubclass(
        obj, dualad.Function) and obj is not dualad.Function)


def check_command(target, order=2) -> int:
    try:
        objects = _load(target)
        for obj in objects:
            if not _checkable(obj):
                raise TypeError(f"{target}: {obj!r} is not a dualad primitive or an "
                                f"autograd.Function subclass")
    except Exception as e:  # noqa: BLE001 - any load failure is a one-line error
        print(f"dualad check: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    failed = unchecked = 0
    for obj in objects:
        report = check_rule(obj, order=order)
        print(report)
        if report.ok:
            print("  " + "\n  ".join(f"ok  {r.check}" for r in report.rows))
        elif report.unchecked and not report.rows:
            unchecked += 1
        else:
            failed += 1
    passed = len(objects) - failed - unchecked
    print(f"\n{passed} of {len(objects)} rules pass" +
          (f", {failed} wrong" if failed and unchecked else "") +
          (f", {unchecked} could not be checked (give samples: see the notes)"
           if unchecked else ""))
    # 1 only for a rule shown wrong; a rule that could not be checked is 2, as a target
    # that could not be loaded: neither says the rule is right
    return 1 if failed else 2 if unchecked else 0
