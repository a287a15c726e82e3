"""No user text becomes code in ``dualad.jit``'s generated program (issue 30).

A few hundred hostile strings (quotes, newlines, ``#``, ``\\r``, form feeds, unicode line
separators, backslashes, triple quotes, non-identifiers, very long ones) are used as
keyword names of a primitive, keys of a dict argument, a static argument's repr, a
primitive's name, a function's ``__name__``, ``__qualname__``, ``__module__``, ``co_name``,
``co_qualname`` and ``co_filename``. Each payload would create a directory in ``tmp_path``
if it ran as code; no case may create it. Each case gives ``f``'s own answer (and, where
it applies, ``grad`` of ``f``'s) or raises an error that is not a ``SyntaxError`` from
generated code; the generated source is checked token by token (no string literals, only
short ASCII identifiers, ASCII comments).
"""
from __future__ import annotations

import ast
import io
import itertools
import keyword
import os
import re
import tokenize
import traceback

import numpy as np
import pytest

import dualad
from dualad.interpreters.staging.names import comment, is_plain_name, safe_name


def _payloads(marker, only_code=False):
    """Hostile strings, each of which runs ``os.mkdir(marker)`` if it ever becomes code
    (``only_code``: just those that hold the payload, not the plain and combined names)."""
    p = f"__import__('os').mkdir({marker!r})"
    code = [
        f"a=1, b={p}, c",
        f"a=1, **{{{p}: 1}}, c",
        f"x\n{p}\n#", f"x\n    {p}\n#", f"x\n        {p}\n#", f"x\n            {p}\n#",
        f"x\r{p}\r#", f"x\r    {p}\r#", f"x\r\n        {p}\r\n#",
        f"x\x0c{p}", f"x\x0b{p}", f"x\x1c{p}", f"x\u2028{p}", f"x\u2029{p}", f"x\x85{p}",
        f"') or {p} or ('", f'") or {p} or ("', f'"""\n{p}\n"""', f"'''\n{p}\n'''",
        f"\\\n{p}", f"#{p}", f"{p}#", f"{p}", f"x;{p}", f"x)\n{p}\n(",
        f"x:\n    {p}\n#", f"x\n    return {p}\n#", f"x\n        return {p}\n#",
        "x" * 10_000 + f"\n    {p}\n#", f"x\n{p}\n#" + "y" * 10_000,
    ]
    plain = [
        "f²", "é", "名前", "𝔣", "x y", "", "1abc", "class", "None", "True", "__debug__",
        "__builtins__", "__import__", "v0", "v1", "v1_l", "r0", "np", "RETRACE",
        "FLOAT_ERRORS", "float", "int", "abs", "slice", "sum", "sqrt", "_", "__",
        "\\", "\\\\", '"""', "'''", "'", '"', "#", "\n", "\r", "\u2028", "\x00",
        "a" * 10_000, "k" * 41, "x\ty",
    ]
    if only_code:
        return list(dict.fromkeys(code))
    combined = [a + b for a, b in itertools.product(["k_", "\n", "é", "\r#"], plain[:16])]
    return list(dict.fromkeys(code + plain + combined))


# The primitive whose keyword names, keyword values and name the cases vary. Not
# registered (dualad.primitive does not register), so nothing global changes.
def _double(x, *rest, **kw):
    return x * 2.0


def _prim(name=None):
    p = dualad.primitive(_double, name=name)
    p.defderiv(lambda ans, x, *rest, **kw: 2.0 * np.ones_like(x))
    return p


PRIM = _prim()
X = np.array([0.5, -1.0, 2.0])


class Tag:
    """A static argument whose repr is hostile (and whose hash and equality are sane)."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text

    def __hash__(self):
        return hash(self.text)

    def __eq__(self, other):
        return isinstance(other, Tag) and other.text == self.text


_TOKEN_OK = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z")


def _check_source(src):
    """The generated source is ours: it parses, holds no string literal, only short ASCII
    identifiers, and comments of printable ASCII."""
    ast.parse(src)
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.STRING:
            pytest.fail(f"a string literal in generated source: {tok.string[:80]!r}")
        if tok.type == tokenize.NAME:
            assert _TOKEN_OK.match(tok.string), tok.string[:80]
        if tok.type == tokenize.COMMENT:
            assert tok.string.isascii() and tok.string.isprintable(), tok.string[:80]


def _same(a, b):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                               rtol=1e-13, atol=0)


def _agrees(f, *args, grad=True, **kwargs):
    """jit(f) traced, then replayed, equals f; jit(grad(f)) equals grad(f)."""
    want = f(*args, **kwargs)
    j = dualad.jit(f)
    for _ in range(2):   # trace, replay
        _same(j(*args, **kwargs), want)
    _check_source(j.source(*args, **kwargs))
    if grad:
        g = dualad.grad(f)
        jg = dualad.jit(g)
        gw = g(*args, **kwargs)
        for _ in range(2):
            _same(jg(*args, **kwargs), gw)
        _check_source(jg.source(*args, **kwargs))


def _vector_keyword_name(s):
    _agrees(lambda x: np.sum(PRIM(x, **{s: 1})), X)


def _vector_keyword_value(s):
    _agrees(lambda x: np.sum(PRIM(x, mode=s, **{s: s})), X)


def _vector_dict_key(s):
    def f(d):
        return np.sum(d[s] * d["other"])
    _agrees(f, {s: X, "other": X + 1.0}, grad=False)
    j = dualad.jit(f)    # and under grad: jit called with traced values in the dict

    def through(x):
        return j({s: x, "other": x + 1.0})
    _same(dualad.grad(through)(X), dualad.grad(lambda x: f({s: x, "other": x + 1.0}))(X))


def _vector_static_repr(s):
    def f(x, tag):
        return np.sum(PRIM(x, tag, tag=tag) * 3.0)
    want = f(X, Tag(s))
    j = dualad.jit(f, static_argnums=1)
    for _ in range(2):
        _same(j(X, Tag(s)), want)
    _check_source(j.source(X, Tag(s)))
    jg = dualad.jit(dualad.grad(f), static_argnums=1)
    _same(jg(X, Tag(s)), dualad.grad(f)(X, Tag(s)))


def _vector_primitive_name(s):
    p = _prim(name=s)
    _agrees(lambda x: np.sum(p(x) * p(x + 1.0)), X)


def _named(s, attr):
    def f(x):
        if np.sum(x) > 0:          # a guard: its comment names this line and function
            return np.sum(np.sin(x) * x)
        return np.sum(x)
    if attr.startswith("co_"):
        f.__code__ = f.__code__.replace(**{attr: s})
    else:
        setattr(f, attr, s)
    return f


def _vector_attribute(attr):
    def vector(s):
        _agrees(_named(s, attr), X)
    vector.__name__ = f"_vector_{attr}"
    return vector


VECTORS = [_vector_keyword_name, _vector_keyword_value, _vector_dict_key, _vector_static_repr,
           _vector_primitive_name] + [
    _vector_attribute(a) for a in ("__name__", "__qualname__", "__module__", "co_name",
                                   "co_qualname", "co_filename")]


def _run_case(vector, s):
    """Runs one case: right, or a clear error (never a SyntaxError from generated code)."""
    try:
        vector(s)
    except SyntaxError:
        raise
    except (TypeError, ValueError) as e:    # a clear refusal is allowed ...
        assert "dualad" in str(e) or "jit" in str(e), f"{vector.__name__}: {e}"
    except AssertionError:
        raise


def _sweep(strings, marker):
    count = 0
    for vector in VECTORS:
        for s in strings:
            _run_case(vector, s)
            count += 1
            assert not os.path.exists(marker), f"{vector.__name__} ran {s[:60]!r}"
    return count


def test_code_payloads_never_execute_through_any_vector(tmp_path):
    """The quick subset's sweep: every string that holds the payload, through every vector
    (the full sweep below adds the plain and combined names)."""
    marker = str(tmp_path / "pwned")
    strings = _payloads(marker, only_code=True)
    assert len(strings) >= 30
    assert _sweep(strings, marker) == len(strings) * len(VECTORS)


@pytest.mark.slow   # ~1200 cases, ~5 s
def test_hostile_strings_never_execute_and_each_case_works(tmp_path):
    marker = str(tmp_path / "pwned")
    strings = _payloads(marker)
    assert len(strings) >= 100
    assert _sweep(strings, marker) >= 300


def test_issue_repro_keyword_name_does_not_run(tmp_path):
    marker = str(tmp_path / "pwned")
    key = f"a=1, b=__import__('os').mkdir({marker!r}), c"
    g = dualad.jit(lambda x: np.sum(PRIM(x, **{key: 1})))
    assert g(np.ones(3)) == 6.0 and g(np.zeros(3)) == 0.0
    assert not os.path.exists(marker)


def test_issue_repro_co_name_newline_does_not_run(tmp_path):
    marker = str(tmp_path / "pwned")

    def h(x):
        if np.sum(x) > 0:
            return np.sum(x * 2.0)
        return np.sum(x)
    for indent in ("    ", "        "):
        h.__code__ = h.__code__.replace(
            co_name=f"h\n{indent}__import__('os').mkdir({marker!r})\n#")
        j = dualad.jit(h)
        assert j(np.ones(3)) == 6.0 and j(np.ones(3)) == 6.0 and j(-np.ones(3)) == -3.0
        assert not os.path.exists(marker)
        src = j.source(np.ones(3))
        assert "mkdir" in src and all("mkdir" not in ln.split("#")[0] for ln in src.split("\n"))


def test_non_identifier_names_work():
    def f(x):
        return np.sum(np.cos(x))
    f.__name__ = "f²"
    j = dualad.jit(f)
    _same(j(X), f(X))
    assert j.source(X).startswith("def f_(")
    _agrees(lambda x: np.sum(PRIM(x, **{"not-an-identifier": 1, "class": 2, "é": 3})), X)


@pytest.mark.parametrize("text", ["a\nb", "a\rb", "a\x0cb", "a\u2028b", "a\x85b", "é名",
                                  "x" * 500, "\\", "#", "'\"", "\x00"])
def test_comment_is_one_line_of_printable_ascii(text):
    c = comment(text)
    assert c.isascii() and c.isprintable() and len(c) <= 200
    assert len(("# " + c + "\n").splitlines()) == 1


@pytest.mark.parametrize("hint", ["", "1", "class", "v0", "r12", "v3_l", "float", "__builtins__",
                                  "np", "f²", "a b", "__debug__", "é" * 100])
def test_safe_name_is_a_fresh_ascii_identifier(hint):
    name = safe_name(hint, {"np", "RETRACE"})
    assert is_plain_name(name) and not keyword.iskeyword(name) and name not in ("np", "RETRACE")
    assert not re.match(r"[vr][0-9]+(_l)?\Z", name) and not name.startswith("__")
    assert len(name) <= 60


# -- a replay that raises points at the user's line (issue 30) --------------------------------

def _ratio(a, b):
    return a / b          # the line the error must point at


def _ratio_line():
    return _ratio.__code__.co_firstlineno + 1


def test_replay_error_points_at_the_users_line():
    j = dualad.jit(_ratio)
    assert j(1.0, 2.0) == 0.5
    with pytest.raises(ZeroDivisionError) as info:
        j(1.0, 0.0)        # a replay: the program's a / b of Python floats raises
    frames = traceback.extract_tb(info.value.__traceback__)
    assert frames[-1].filename == __file__ and frames[-1].lineno == _ratio_line()
    assert not any(fr.filename.startswith("<dualad.jit") for fr in frames)
    assert info.value.__context__ is None      # no "during handling of" a replay's error
    note = " ".join(getattr(info.value, "__notes__", []))
    assert "dualad.jit(_ratio)" in note and f"{__file__}:{_ratio_line()} in _ratio" in note


def _log_sum(x):
    return np.sum(np.log(x))   # the line the error must point at


def test_replay_error_under_grad_points_at_the_users_line():
    j = dualad.jit(_log_sum)
    j(np.ones(2))
    line = _log_sum.__code__.co_firstlineno + 1
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError) as info:
        dualad.grad(lambda x: j(x))(np.zeros(2))   # the program run through the primitives
    frames = traceback.extract_tb(info.value.__traceback__)
    assert any(fr.filename == __file__ and fr.lineno == line for fr in frames)
    assert not any(fr.filename.endswith(os.path.join("jit", "replay.py")) for fr in frames)


def test_replay_error_of_numpy_under_errstate_points_at_the_users_line():
    def f(x):
        return np.sum(np.log(x))
    j = dualad.jit(f)
    j(np.ones(2))
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError) as info:
        j(np.zeros(2))
    frames = traceback.extract_tb(info.value.__traceback__)
    line = f.__code__.co_firstlineno + 1
    assert any(fr.filename == __file__ and fr.lineno == line for fr in frames)
    assert "dualad.jit(f)" in " ".join(info.value.__notes__)


# -- a primitive's name is text: the code generator knows primitives by identity ---------------

@pytest.mark.parametrize("name", ["sin", "multiply", "add", "negative", "getitem", "greater"])
def test_user_primitive_named_like_a_builtin_is_not_rewritten_as_it(name):
    p = dualad.primitive(lambda x: x + 100.0, name=name)
    p.defderiv(lambda ans, x: np.ones_like(x))
    q = dualad.primitive(lambda x, y: x * y + 1.0, name=name)   # x * 1.0 is not x here
    q.defderiv(lambda ans, x, y: y, lambda ans, x, y: x)
    for f, x in ((lambda x: p(x) * 2.0, 1.0), (lambda x: np.sum(p(x) * 1.0), np.ones(2)),
                 (lambda x: q(x, 1.0) + q(1.0, x), 3.0),
                 (lambda x: np.sum(q(x, 1.0) - q(x, 0.0)), np.ones(2))):
        j = dualad.jit(f)
        for _ in range(2):
            _same(j(x), f(x))
        _same(dualad.jit(dualad.grad(f))(x), dualad.grad(f)(x))


def test_two_user_primitives_of_one_name_are_not_one_subexpression():
    p1 = dualad.primitive(lambda x: x + 1.0)
    p1.defderiv(lambda ans, x: np.ones_like(x))
    p2 = dualad.primitive(lambda x: x * 3.0)
    p2.defderiv(lambda ans, x: 3.0 * np.ones_like(x))
    assert p1.name == p2.name
    f = lambda x: np.sum(p1(x) * p2(x))    # noqa: E731
    j = dualad.jit(f)
    x = np.array([1.0, 2.0])
    for _ in range(2):
        _same(j(x), f(x))
    _same(dualad.jit(dualad.grad(f))(x), dualad.grad(f)(x))
