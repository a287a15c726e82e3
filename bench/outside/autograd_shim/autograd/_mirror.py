"""Fill a shim module ``autograd.scipy.X`` from SciPy, and from ``dualad.scipy.X`` on top
when AG_SHIM_SCIPY=dualad (autograd.scipy is autograd's own wrapped namespace; dualad.scipy
is ours). The default, AG_SHIM_SCIPY=plain, gives plain SciPy: the "as written" measure."""
import importlib
import os

MODE = os.environ.get("AG_SHIM_SCIPY", "plain")


def _public(obj):
    names = getattr(obj, "__all__", None) or [k for k in dir(obj) if not k.startswith("_")]
    return {k: getattr(obj, k) for k in names if hasattr(obj, k)}


def fill(namespace, scipy_path, attr=None):
    """``scipy_path`` a module ("scipy.special"); ``attr`` a distribution in scipy.stats
    ("norm"), whose methods become the module's functions (autograd.scipy.stats.norm.pdf)."""
    src = importlib.import_module(scipy_path)
    namespace.update(_public(getattr(src, attr) if attr else src))
    if MODE == "dualad":
        try:
            ours = importlib.import_module("dualad." + scipy_path)
        except ImportError:
            return
        if attr:
            ours = getattr(ours, attr, None)
            if ours is None:
                return
        namespace.update(_public(ours))
