"""The public surface: ``__all__`` in every module, and numpydoc docstrings on every public name.

The public modules are the ones a user imports and the API reference documents. Every name
in their ``__all__`` (and every public method of a public class) passes numpydoc's own
validator (``numpydoc.validate``, an oracle we did not write) for the error codes below; the
``Examples`` sections of the top-level functions run as doctests.
"""
import doctest
import importlib
import inspect
import pkgutil
import pydoc

import numpy as np
import pytest

import dualad

numpydoc_validate = pytest.importorskip("numpydoc.validate", reason="numpydoc is in the test extra")

# The modules the API reference documents, name by name. The mirror namespaces (dualad.numpy,
# dualad.scipy.special, ..., dualad.array_api) re-export NumPy/SciPy's own names: they are
# documented by the coverage table, not name by name.
PUBLIC = [
    "dualad", "dualad.extend", "dualad.autograd", "dualad.lax", "dualad.revolve",
    "dualad.interpreters.staging.api", "dualad.transforms.implicit", "dualad.teaching", "dualad.jacobians",
    "dualad.verification", "dualad.scipy.optimize", "dualad.tree",
]
# Functions and classes in these need an Examples section (doctested below).
WITH_EXAMPLES = ["dualad", "dualad.jacobians", "dualad.verification"]

# numpydoc's codes (https://numpydoc.readthedocs.io/en/latest/validation.html):
# GL08 no docstring; SS01 no summary; SS02 summary not capitalized; SS03 summary without a
# final period; SS06 summary over several lines; ES01 no extended summary; PR01 a parameter
# undocumented; PR02 an unknown parameter documented; PR07 a parameter without description;
# RT01 no Returns section; YD01 no Yields section; EX01 no Examples section.
CODES_FOR_NAMES = {"GL08", "SS01", "SS02", "SS03", "SS06", "ES01", "PR01", "PR02", "PR07",
                   "RT01", "YD01"}
CODES_FOR_METHODS = {"GL08", "SS01", "SS02", "SS03", "PR01", "PR02", "PR07", "RT01", "YD01"}
CODES_FOR_EXCEPTIONS = {"GL08", "SS01", "SS03", "ES01"}


def _all_modules():
    """dualad's modules, and those of dualad.jacobians and dualad.verification (installed into
    the namespace from their own folders, so walking dualad.__path__ alone misses them)."""
    import dualad.jacobians
    import dualad.verification
    names = ["dualad"]
    for package in (dualad, dualad.jacobians, dualad.verification):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            names.append(info.name)
    return sorted(set(names))


def _public_objects():
    """(qualified name, object, codes) for every name in a public module's __all__ and every
    public method of a public class defined in dualad."""
    seen = set()
    for modname in PUBLIC:
        module = importlib.import_module(modname)
        names = getattr(module, "__all__", None)
        if names is None:   # reported by the test below; still check the docstrings
            names = [n for n in dir(module) if not n.startswith("_")]
        for name in names:
            obj = getattr(module, name, None)
            if obj is None or inspect.ismodule(obj) or not callable(obj) or id(obj) in seen:
                continue
            seen.add(id(obj))
            qual = f"{modname}.{name}"
            if inspect.isclass(obj) and issubclass(obj, BaseException):
                yield qual, obj, CODES_FOR_EXCEPTIONS
                continue
            codes = set(CODES_FOR_NAMES)
            if modname in WITH_EXAMPLES:
                codes.add("EX01")
            yield qual, obj, codes
            if inspect.isclass(obj) and (obj.__module__ or "").startswith("dualad"):
                for attr, member in vars(obj).items():
                    if attr.startswith("_") or not (inspect.isfunction(member)
                                                    or isinstance(member, property)):
                        continue
                    if hasattr(obj, "__array_ufunc__") and (hasattr(np.ndarray, attr)
                                                            or hasattr(np, attr)):
                        continue   # a traced value's mirror of an ndarray method or a ufunc
                                   # (for object arrays): documented as NumPy's
                    yield f"{qual}.{attr}", getattr(obj, attr), CODES_FOR_METHODS


PUBLIC_OBJECTS = list(_public_objects())


@pytest.mark.parametrize("modname", _all_modules())
def test_every_module_declares_all_and_every_listed_name_exists(modname):
    module = importlib.import_module(modname)
    assert hasattr(module, "__all__"), f"{modname} has no __all__"
    assert all(isinstance(n, str) for n in module.__all__)
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert not missing, f"{modname}.__all__ names {missing}, which it does not define"
    assert len(set(module.__all__)) == len(module.__all__), f"{modname}.__all__ repeats a name"


def test_public_modules_have_public_names():
    for modname in PUBLIC:
        assert importlib.import_module(modname).__all__, modname


def test_help_lists_the_functions_not_the_internals():
    text = pydoc.render_doc(dualad, renderer=pydoc.plaintext)
    functions = text.split("FUNCTIONS", 1)[1] if "FUNCTIONS" in text else ""
    for name in ("grad", "jvp", "vjp", "hvp", "jit", "vmap", "scan", "checkpoint", "primitive"):
        assert f"\n    {name}(" in functions, f"help(dualad) does not list {name}"


@pytest.mark.parametrize("qualname,obj,codes", PUBLIC_OBJECTS,
                         ids=[q for q, _, _ in PUBLIC_OBJECTS])
def test_numpydoc_docstring(qualname, obj, codes):
    report = numpydoc_validate.validate(numpydoc_validate.get_doc_object(obj))
    errors = [f"{code}: {message}" for code, message in report["errors"] if code in codes]
    assert not errors, f"{qualname}:\n  " + "\n  ".join(errors)


def _examples():
    out = []
    for qualname, obj, codes in PUBLIC_OBJECTS:
        if "EX01" in codes:
            out.append((qualname, obj))
    return out


@pytest.mark.parametrize("qualname,obj", _examples(), ids=[q for q, _ in _examples()])
def test_examples_run_as_doctests(qualname, obj):
    finder = doctest.DocTestFinder(recurse=False)
    tests = finder.find(obj, qualname, globs={"np": np, "dualad": dualad})
    assert tests and tests[0].examples, f"{qualname} has no >>> examples"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in tests:
        runner.run(test)
    assert runner.failures == 0, f"{qualname}: {runner.failures} doctest example(s) failed"
