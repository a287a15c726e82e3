"""Name reuse for long generated functions: variables as registers, by liveness.

A traced loop of 10^5 steps gives a function of several 10^5 lines. With one local per
program variable, every intermediate value stays alive until the function returns: the
frame holds 10^5 slots and the values fill memory (and the CPU caches) for nothing; with
names reused once a value is dead, a value's memory is reused at once (CPython's float
free list) and the replay runs about 2x faster per operation. Short programs keep their
``v<k>`` names (the source is for reading); long ones are renamed ``r<k>``.

This works on the generated source (see :mod:`dualad.interpreters.staging.codegen`), which is regular:
one statement per line, no string literals (so ``#`` starts a comment), variables
spelled ``v<k>`` or ``v<k>_l``, each assigned once except the function's inputs (which
keep their names: the fallback of a specialized function reads them) and the
accumulation buffers (``vR += ...``, ``vR_l[i] += ...``: uses of a live name).
"""
from __future__ import annotations

import re

DEFINITION = re.compile(r"^(\s*)(v\d+(?:_l)?) = ")    # a line that assigns a variable
NAME = re.compile(r"(?<![\w.])(v\d+(?:_l)?)(?!\w)")     # a variable's name

# Functions with more variables than this are renamed.
THRESHOLD = 2000


def reuse_names(source, inputs, threshold=None):
    """``source`` with its variables renamed to few registers when it has more than
    ``threshold`` of them (comments dropped: they would name the old variables), else
    ``source`` unchanged. ``inputs``: the parameter names, never renamed."""
    if threshold is None:
        threshold = THRESHOLD
    lines = source.split("\n")
    if sum(1 for ln in lines if DEFINITION.match(ln)) <= threshold:
        return source
    pinned = set(inputs)
    # Two passes over the text rather than one stored parse: stored pieces of 10^5 lines
    # would survive into the collector's oldest generation and make it rescan them.
    last = {}
    defs = 0
    for i, ln in enumerate(lines):
        c = ln.split("#", 1)[0] if "#" in ln else ln
        m = DEFINITION.match(c)
        if m is not None:
            defs += 1
            c = c[m.end():]
        for name in NAME.findall(c):
            last[name] = i
    reg = {}
    free = []
    count = 0
    out = []
    for i, ln in enumerate(lines):
        c = ln.split("#", 1)[0].rstrip() if "#" in ln else ln
        if not c.strip():
            continue
        m = DEFINITION.match(c)
        if m is None:
            if c.lstrip().startswith(("def ", "try:", "except")):
                out.append(c)
                continue
            indent, target, rhs = "", None, c
        else:
            indent, target, rhs = m.group(1), m.group(2), c[m.end():]
        parts = NAME.split(rhs)     # text, name, text, name, ..., text
        names = parts[1::2]
        parts[1::2] = [reg.get(name, name) for name in names]
        for name in names:
            if name in reg and last.get(name) == i:
                free.append(reg.pop(name))
        new_rhs = "".join(parts)
        if target is None:
            out.append(new_rhs)
            continue
        if target in pinned:
            new_target = target
        elif target in reg:
            new_target = reg[target]
        else:
            if free:
                new_target = free.pop()
            else:
                new_target = f"r{count}"
                count += 1
            if last.get(target, -1) > i:
                reg[target] = new_target
            else:
                free.append(new_target)   # never read (the value is computed for nothing)
        out.append(f"{indent}{new_target} = {new_rhs}")
    head = out[0]
    note = (f"    # {defs} variables held in {count} names, reused once a value is dead "
            f"(dualad.interpreters.staging.registers)")
    return "\n".join([head, note] + out[1:]) + "\n"


def spans(lines, names):
    """``{name: (first line, last line)}`` of the variables ``names`` in ``lines`` (any
    container: ``name in names``)."""
    out = {}
    for i, ln in enumerate(lines):
        c = ln.split("#", 1)[0] if "#" in ln else ln
        for name in NAME.findall(c):
            if name in names:
                first = out.get(name)
                out[name] = (i if first is None else first[0], i)
    return out


def free_dead(source, names):
    """``source`` with ``del`` statements for the variables ``names`` (large arrays) right
    after their last use: the replay then frees them as the eager sweep would, instead of
    holding every intermediate array until it returns (peak memory, and with it the pages
    the allocator gives back to the OS and faults in again on the next call)."""
    if not names:
        return source
    lines = source.split("\n")
    dead = {}
    for name, (_, i) in spans(lines, names).items():
        if lines[i].split("#", 1)[0].rstrip().endswith(":"):
            i += 1    # a guard's test: free it after the guard (its return line)
        dead.setdefault(i, []).append(name)
    out = []
    for i, ln in enumerate(lines):
        out.append(ln)
        if i in dead:
            ref = lines[i - 1] if lines[i].lstrip().startswith("return RETRACE") else ln
            indent = ref[:len(ref) - len(ref.lstrip())]
            out.append(f"{indent}del {', '.join(sorted(dead[i]))}  # dead: free the memory")
    return "\n".join(out)


__all__ = ["reuse_names", "free_dead", "spans", "DEFINITION", "NAME", "THRESHOLD"]
