"""``dualad --version``: the version of dualad and of what it runs on.

A bug report needs the versions of dualad, NumPy, SciPy, SymPy and Python; the
``--version`` option prints them on two lines. They are read only when asked for:
building the parser must not import SciPy or SymPy (``dualad trace`` starts fast).
"""
from __future__ import annotations

import argparse
import platform
import sys

__all__ = ["version_text", "VersionAction"]


def _installed(name: str) -> str:
    """The version of an installed distribution, or ``"not installed"``."""
    from importlib import metadata
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def version_text() -> str:
    """The text ``dualad --version`` prints.

    Returns
    -------
    str
        Two lines: ``dualad X.Y.Z``, then the NumPy, SciPy, SymPy and Python
        versions (the dependencies read from their installed metadata, so
        nothing heavy is imported).

    Examples
    --------
    >>> from dualad.teaching.about import version_text
    >>> version_text().splitlines()[0]   # doctest: +ELLIPSIS
    'dualad ...'
    """
    from dualad import __version__
    deps = ", ".join(f"{name} {_installed(name.lower())}" for name in ("NumPy", "SciPy", "SymPy"))
    python = f"Python {platform.python_version()} ({platform.python_implementation()})"
    return f"dualad {__version__}\n{deps}, {python}"


class VersionAction(argparse.Action):
    """The ``--version`` option: print :func:`version_text` and exit with status 0.

    Unlike argparse's own ``action="version"``, the text is built when the option
    is given, not when the parser is.
    """

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="print the versions of dualad, NumPy, SciPy, SymPy and Python, "
                      "then exit"):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_text(), file=sys.stdout)
        parser.exit(0)
