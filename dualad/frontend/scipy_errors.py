"""The error for a SciPy function that cannot reach dualad: it names the function the user
called and its ``dualad.scipy`` replacement.

SciPy's Python-level functions (``scipy.linalg.expm``, ``scipy.stats.norm.logpdf``,
``scipy.integrate.odeint``, ...) convert their arguments to plain arrays (``np.asarray``,
``float()``, compiled code) instead of dispatching on them: a traced value loses its
derivative there, so the conversion raises. The stack at that moment shows which public
SciPy function the user called: the **outermost SciPy frame below the user's code** (SciPy's
private helpers and NumPy's bodies sit between it and the conversion). Its public name is
its module's public package (``scipy.linalg._matfuncs`` → ``scipy.linalg``) and its name,
or, for a distribution's method (``rv_continuous.logpdf`` of ``norm_gen``), the
distribution's name: ``scipy.stats.norm.logpdf``.

Everything here runs on the error path only, except :func:`caller_module` (a walk over
the few NumPy frames between a conversion and its caller).
"""
from __future__ import annotations

import importlib
import sys

from ..core.tracer import shape_of

__all__ = ["caller_module", "scipy_function", "replacement", "scipy_error", "masked_by_scipy"]


def _module(frame):
    return frame.f_globals.get("__name__") or ""


def _is_scipy(name):
    return name == "scipy" or name.startswith("scipy.")


def _is_numpy(name):
    return name == "numpy" or name.startswith("numpy.")


def caller_module(depth=2):
    """The module name of the nearest frame, ``depth`` frames up and outward, that is
    neither NumPy's nor dualad's own conversion code: who asked for the conversion."""
    frame = sys._getframe(depth)
    while frame is not None:
        name = _module(frame)
        if not (_is_numpy(name) or name in ("dualad.frontend.dispatch", "dualad.frontend.objects",
                                            "dualad.frontend.scipy_errors")):
            return name
        frame = frame.f_back
    return ""


def _scipy_frames(frame):
    """The SciPy frames from the conversion outward to the user's code (innermost first),
    or [] when the conversion was not asked for by SciPy."""
    found = []
    while frame is not None:
        name = _module(frame)
        if _is_scipy(name):
            found.append(frame)
        elif not (_is_numpy(name) or name.startswith("dualad")):
            break                  # the user's code: the SciPy call (if any) ends here
        elif name.startswith("dualad") and found and not name.startswith("dualad.scipy_"):
            break                  # a dualad transformation calling SciPy code
        frame = frame.f_back
    return found


def _distribution(frame):
    """The scipy.stats distribution whose method ``frame`` runs (``norm`` of
    ``norm.logpdf`` or of a frozen ``norm(0, 1).logpdf``), or None."""
    obj = frame.f_locals.get("self")
    if obj is None:
        return None
    dist = getattr(obj, "dist", obj)   # a frozen distribution keeps its family in .dist
    name = getattr(dist, "name", None)
    if not isinstance(name, str):      # multivariate ones: multivariate_normal_gen, *_frozen
        cls = type(dist).__name__
        name = next((cls[:-len(s)] for s in ("_gen", "_frozen") if cls.endswith(s)), None)
    if isinstance(name, str) and type(dist).__module__.startswith("scipy.stats"):
        return name
    return None


def _public_package(module):
    """The public part of a SciPy module's name, without ``scipy.``:
    ``scipy.linalg._basic`` → ``linalg``, ``scipy.spatial.distance`` → ``spatial.distance``."""
    public = []
    for part in module.split(".")[1:]:
        if part.startswith("_"):
            break
        public.append(part)
    return ".".join(public)


def _resolve(sub, names):
    """``(sub, path)`` if ``scipy.<sub>.<names[0]>`` is public (a class's ``__init__`` is
    the class itself, a method stays a method), else None."""
    if not sub or not names or names[0].startswith("_"):
        return None
    try:
        mod = importlib.import_module(f"scipy.{sub}")
    except ImportError:       # pragma: no cover - every scipy.X we can be called from exists
        return None
    obj = getattr(mod, names[0], None)
    if obj is None or not callable(obj):
        return None
    if isinstance(obj, type) and len(names) > 1:
        return (sub, (names[0],)) if names[1] == "__init__" else (sub, (names[0], names[1]))
    return sub, (names[0],)


def _public(frame):
    """``(subpackage, path)``: the public SciPy name of the function ``frame`` runs, as
    ``("linalg", ("expm",))``, ``("stats", ("norm", "logpdf"))`` or ``("interpolate",
    ("CubicSpline",))``, or None. A decorator's wrapper (``functools.wraps``) is named
    after the function it wraps, found among its closure's variables."""
    sub = _public_package(_module(frame))
    code = frame.f_code
    if sub == "stats":
        dist = _distribution(frame)
        if dist is not None:
            return sub, (dist, code.co_name)
    qualname = getattr(code, "co_qualname", code.co_name)
    names = [n for n in qualname.split(".") if n != "<locals>"]
    found = _resolve(sub, names[-2:] if len(names) > 1 else names)
    if found is not None:
        return found
    for name in code.co_freevars:          # a wrapper: the function it closes over
        fn = frame.f_locals.get(name)
        mod = getattr(fn, "__module__", None) or ""
        if callable(fn) and _is_scipy(mod) and "." in mod:
            found = _resolve(_public_package(mod), [getattr(fn, "__name__", "")])
            if found is not None:
                return found
    return None


def scipy_function(frame):
    """The public name of the SciPy function the user called, as ``(subpackage, path)``, or
    a private ``module.qualname`` string, or None when no SciPy code is on the stack."""
    frames = _scipy_frames(frame)
    if not frames:
        return None
    for f in reversed(frames):            # outermost first: what the user called
        public = _public(f)
        if public is not None:
            return public
    outer = frames[-1]
    return f"{_module(outer)}.{getattr(outer.f_code, 'co_qualname', outer.f_code.co_name)}"


def replacement(sub, path):
    """``dualad.scipy.<sub>.<path>`` if it exists (the name, as a string), else None."""
    try:
        obj = importlib.import_module(f"dualad.scipy.{sub}")
    except ImportError:
        return None
    for p in path:
        obj = getattr(obj, p, None)
        if obj is None:
            return None
    return f"dualad.scipy.{sub}." + ".".join(path)


def scipy_error(box, how, depth=2):
    """The TypeError for ``box`` converted by ``how`` (``"np.asarray"``, ``"float()"``, ...)
    inside a SciPy function, or None when no SciPy function asked for the conversion."""
    found = scipy_function(sys._getframe(depth))
    if found is None:
        return None
    if isinstance(found, str):
        name, alt = found, None
    else:
        sub, path = found
        name, alt = f"scipy.{sub}." + ".".join(path), replacement(sub, path)
    head = (f"{name} met a traced value of shape {shape_of(box)} (an argument, or a value its "
            f"callback returned): SciPy converts it to plain numbers ({how}) instead of "
            f"dispatching on it, so its derivative would be lost. ")
    if alt is not None:
        return _marked(TypeError(head + f"Call {alt} instead: the same function with "
                                        f"derivative rules (import dualad.scipy.{found[0]})."))
    return _marked(TypeError(head + f"dualad.scipy has no replacement for {name}. Declare it as a "
                            f"primitive with @dualad.primitive (its value from SciPy, its "
                            f"derivative rule from you); or, if SciPy dispatches {name} "
                            f"through the array API, run with the environment variable "
                            f"SCIPY_ARRAY_API=1 set before SciPy is imported "
                            f"(docs/array_api.md)."))


def _marked(error):
    error._dualad_scipy = True   # found again by masked_by_scipy
    return error


def masked_by_scipy(error):
    """The TypeError of :func:`scipy_error` that SciPy caught and replaced with ``error``
    (``scipy.optimize.minimize`` turns it into "The user-provided objective function must
    return a scalar value."), or None. Looks a few links down the chain of causes."""
    seen = error
    for _ in range(4):
        seen = seen.__cause__ or seen.__context__
        if seen is None:
            return None
        if getattr(seen, "_dualad_scipy", False):
            return seen
    return None
