"""The only text the generated source takes from outside dualad: names and comments.

No text a user controls (a function's name, a keyword name, a file name, a value's
repr) ever becomes code. Identifiers are made from a hint's ASCII letters, digits and
``_`` (:func:`safe_name`); a keyword argument is written out only when its name is a
plain ASCII identifier (:func:`is_plain_name`); comments and the compiled file name are
pure ASCII without control characters (:func:`comment`). docs/jit.md, "What the code
generator trusts", says the rest.
"""
from __future__ import annotations

import keyword
import re

__all__ = ["comment", "filename", "is_plain_name", "safe_name"]


# What the generated source (dualad.interpreters.staging.codegen) is made of. It is written from the
# recorded program only through these helpers and codegen's ``_literal``, and no text a
# user controls (a function's name, a keyword name, a file name, a value's repr) ever
# becomes code:
# - identifiers are ``v<k>``/``r<k>`` (counters), fixed words, and names of objects bound in
#   the function's globals (:meth:`_Namespace.bind`): a hint cut down to ASCII letters,
#   digits and ``_``, never a keyword, a builtin the source calls or a variable's spelling;
# - literals come from :func:`_literal` (exact bool, int, float, tuple and slice values:
#   ``repr`` of those types is a number or a fixed word); every other constant is bound;
# - a keyword argument is written ``key=`` only when ``key`` is an ASCII identifier (it
#   can then only name the argument; at most 64 characters); other keys go in a dict the
#   source unpacks (``**kw``);
# - comments go through :func:`comment`: pure ASCII, no control characters, bounded.
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z")
_NON_NAME = re.compile(r"[^A-Za-z0-9_]")
_VARIABLE = re.compile(r"[vr][0-9]+(_l)?\Z")   # the spellings of program variables
# Builtins the generated source calls (a bound object must not shadow them), and names
# Python treats specially.
_USED_BUILTINS = frozenset(["float", "int", "abs", "slice", "bool", "complex", "__debug__",
                             "__builtins__", "__name__"])
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_COMMENT_MAX = 200


def is_plain_name(s):
    """``s`` is an ASCII identifier of at most 64 characters that may appear in source as
    it is (not a keyword, not ``__debug__``): as a keyword argument's name it can only name
    the argument."""
    return (s.__class__ is str and _IDENTIFIER.match(s) is not None and not keyword.iskeyword(s)
            and s != "__debug__")


def comment(text):
    """``text`` made safe for a ``# ...`` comment of the generated source: non-ASCII
    characters escaped (``\\u2028``), control characters (newlines, ``\\r``, form feeds)
    escaped as ``\\x0a``, at most 200 characters. A comment never ends its line early."""
    s = str(text).encode("ascii", "backslashreplace").decode("ascii")
    s = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", s)
    return s if len(s) <= _COMMENT_MAX else s[:_COMMENT_MAX - 3] + "..."


def safe_name(hint, taken, default="c", suffixes=None):
    """A fresh identifier for a global of the generated function, made from ``hint``'s
    ASCII letters, digits and underscores (readable: ``sin``, ``impl_sum``), not in
    ``taken``, never a keyword, a builtin the source calls or a variable's spelling.

    ``suffixes`` (a dict kept by the caller across calls with the same ``taken``, names
    only ever added to it) remembers each base's next numbered suffix to try, so n
    constants hinted ``c`` cost n probes, not n**2 / 2 (a nested derivative's program
    binds a constant per inner call: thousands)."""
    base = _NON_NAME.sub("_", hint if hint.__class__ is str else "")[:40].lstrip("_")
    if not base:
        base = default
    elif base[0].isdigit():
        base = f"{default}_{base}"
    i = 0 if suffixes is None else suffixes.get(base, 0)
    name = base if i == 0 else f"{base}_{i}"
    while (name in taken or name in _USED_BUILTINS or keyword.iskeyword(name)
           or _VARIABLE.match(name)):
        i += 1
        name = f"{base}_{i}"
    if suffixes is not None:
        suffixes[base] = i + 1
    return name


def filename(prog, what=""):
    """The file name tracebacks show for the generated code: ``<dualad.jit f>``."""
    return f"<dualad.jit {comment(prog.name)}{what}>"
