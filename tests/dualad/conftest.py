"""tests/dualad mirrors dualad/ (core/, interpreters/..., frontend/, transforms/, ops/,
mirrors/); the helper modules shared across its folders (``count_helpers``,
``coverage_helpers``) live here and are imported by name from any of them."""
import pathlib
import sys

_HERE = str(pathlib.Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
