"""The fenced code blocks of a Markdown file (README.md, docs/*.md): the one parser shared by
the tests that run the documentation's examples (importable from every test module: pytest
puts tests/ on sys.path for tests/conftest.py)."""
import re

__all__ = ["fences", "code_blocks", "python_blocks"]

# A fence of three or more backticks, possibly indented (inside a list item), closed by the
# same run of backticks at the same indent.
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<ticks>`{3,})(?P<info>[^\n`]*)\n(?P<body>.*?)"
                    r"^(?P=indent)(?P=ticks)[ \t]*$", re.M | re.S)


def fences(text):
    """[(info, line, body)]: every fenced block of ``text``, in order: its info string
    (``python``, ``{doctest}``, ``{toctree}``, ...), the first line of its body (1-based)
    and the body, dedented by the fence's indent."""
    return [(m["info"].strip(), text.count("\n", 0, m.start()) + 2,
             "\n".join(l[len(m["indent"]):] for l in m["body"].splitlines()))
            for m in _FENCE.finditer(text)]


def code_blocks(text):
    """[(kind, line, code)]: the ```python and ```{doctest} blocks of ``text`` (:func:`fences`)
    in order; a doctest block's ``:option:`` lines are dropped."""
    blocks = []
    for info, line, body in fences(text):
        if info == "python":
            blocks.append(("python", line, body))
        elif info.startswith("{doctest}"):
            body = "\n".join(l for l in body.splitlines() if not l.startswith(":"))
            blocks.append(("doctest", line, body))
    return blocks


def python_blocks(text):
    """[(line, code)]: the ```python blocks of ``text`` (:func:`code_blocks`)."""
    return [(line, code) for kind, line, code in code_blocks(text) if kind == "python"]
