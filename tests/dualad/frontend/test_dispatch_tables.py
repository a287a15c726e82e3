"""The front end's dispatch tables are built from the declarations (``implements``).

``data/dispatch_tables_before.json`` is the mapping {NumPy callable: dualad function}
the hand-written tables held on main before they were generated (and the names of the
``dualad.numpy`` namespace built from them): the generated tables must hold the same,
so no NumPy function was lost or remapped.
"""
import importlib
import json
import pathlib

import numpy as np
import pytest
import scipy.special as sc
import scipy.special._ufuncs as scu

import dualad
import dualad.numpy as dnp
from dualad.frontend import dispatch
from dualad.core.primitive import NUMPY_FUNCTIONS, NUMPY_UFUNCS, Primitive, implements

BEFORE = pathlib.Path(__file__).parent / "data" / "dispatch_tables_before.json"


def _key(f):
    if isinstance(f, np.ufunc):
        mod = next(name for name, m in (("numpy", np), ("scipy.special", sc),
                                        ("scipy.special._ufuncs", scu))
                   if getattr(m, f.__name__, None) is f)
    else:
        mod = getattr(f, "__module__", None) or ""
    return f"{mod}:{getattr(f, '__qualname__', None) or f.__name__}"


def _describe(v, depth=0):
    """A dualad function by what it is: a primitive by its name, a function by its
    qualified name and the functions and constants it closes over (value_only(np.all))."""
    if isinstance(v, Primitive):
        return f"primitive:{v.name}"
    if isinstance(v, np.ufunc):
        return f"ufunc:{v.__name__}"
    s = f"{v.__module__}.{v.__qualname__}"
    inner = []
    for cell in getattr(v, "__closure__", None) or ():
        try:
            x = cell.cell_contents
        except ValueError:
            continue
        if depth < 2 and (callable(x) or isinstance(x, (str, int, tuple))):
            inner.append(_describe(x, depth + 1) if callable(x) else repr(x))
    return s + (f"({', '.join(inner)})" if inner else "")


# Moved by the same issue (no import cycles): det and slogdet into ops/linalg/det.py, mT
# into ops/linalg/_common.py, numpy.linalg's array-API aliases into the package's __init__;
# abs and sign (which send complex arguments to complex_numbers) into complex_numbers;
# logaddexp beside its partial, expit, in special/log. The same functions, new homes.
MOVED = {"dualad.ops.core.elementwise.absolute": "dualad.ops.core.complex_numbers.absolute",
         "dualad.ops.core.elementwise.sign": "dualad.ops.core.complex_numbers.sign",
         "dualad.ops.core.elementwise.logaddexp": "dualad.ops.special.log.logaddexp",
         "dualad.ops.core.elementwise.logaddexp2": "dualad.ops.special.log.logaddexp2",
"dualad.ops.linalg.basic.det": "dualad.ops.linalg.det.det",
         "dualad.ops.linalg.basic.slogdet": "dualad.ops.linalg.det.slogdet",
         "dualad.ops.linalg.basic.mT": "dualad.ops.linalg._common.mT",
         "dualad.ops.linalg.basic.<lambda>": "dualad.ops.linalg.<lambda>"}


def _exists(key):
    """Whether this NumPy/SciPy has the callable ``module:qualname`` (the data was written
    with NumPy 2.4; np.row_stack, say, is gone from NumPy 2.5)."""
    mod, _, name = key.partition(":")
    try:
        obj = importlib.import_module(mod)
    except ImportError:
        return False
    for part in name.split("."):
        obj = getattr(obj, part, None)
    return obj is not None


def test_generated_tables_match_the_hand_written_ones():
    before = json.loads(BEFORE.read_text())
    gone = {k.partition(":")[2] for k in before["functions"]
            if k.startswith("numpy:") and not _exists(k)}   # and so from dualad.numpy too
    before = {section: {k: MOVED.get(v, v) for k, v in table.items()
                        if (k not in gone if section == "dualad.numpy" else _exists(k))}
              for section, table in before.items()}
    now = {"ufuncs": {_key(k): _describe(v) for k, v in dispatch.UFUNCS.items()},
           "functions": {_key(k): _describe(v) for k, v in dispatch.FUNCTIONS.items()},
           "dualad.numpy": {name: _describe(fn) for name, fn in dnp._ns.items()}}
    assert len(now["ufuncs"]) == len(dispatch.UFUNCS)
    # The one difference: np.matmul, a ufunc, was also listed among the functions, where
    # nothing reads it (NumPy sends ufuncs to __array_ufunc__ only).
    expected_functions = dict(before["functions"])
    assert expected_functions.pop("numpy:matmul") == now["ufuncs"]["numpy:matmul"]
    assert now["ufuncs"] == before["ufuncs"]
    assert now["functions"] == expected_functions
    assert now["dualad.numpy"] == before["dualad.numpy"]


def test_the_front_end_reads_the_registry_tables():
    assert dispatch.UFUNCS is NUMPY_UFUNCS and dispatch.FUNCTIONS is NUMPY_FUNCTIONS
    assert all(isinstance(k, np.ufunc) for k in NUMPY_UFUNCS)
    assert not any(isinstance(k, np.ufunc) for k in NUMPY_FUNCTIONS)
    assert np.sin in dualad.ops.sin.implements
    assert np.linalg.solve in NUMPY_FUNCTIONS


def test_a_declaration_is_all_it_takes():
    """A primitive that names a ufunc (``implements=``) is reached by plain NumPy calls."""
    twice = np.frompyfunc(lambda x: 2 * x, 1, 1)   # a ufunc no primitive computes yet
    prim = Primitive("twice_for_test", lambda x: 2.0 * x, implements=(twice,))
    prim.defjvp(lambda t, ans, x: 2.0 * t)
    prim.defvjp(lambda ct, ans, x: 2.0 * ct)
    implements(*prim.implements)(prim)
    try:
        assert NUMPY_UFUNCS[twice] is prim
        assert dualad.grad(lambda x: twice(x) * x)(3.0) == pytest.approx(12.0)
    finally:
        del NUMPY_UFUNCS[twice]


def test_a_callable_is_declared_once():
    with pytest.raises(ValueError, match="'sin' is already implemented by"):
        implements(np.sin)(lambda x: x)
    assert implements(np.sin)(dualad.ops.sin) is dualad.ops.sin   # the same one again: fine
