"""What ``dualad`` exports: ``__all__`` lists the user-facing names; the extension surface
(``Primitive``, ``REGISTRY``, ``sample``, ``Dual``, ``Var``) is left out of it but stays
importable from ``dualad`` as before, and is listed by ``dualad.extend``."""
import subprocess
import sys

import dualad
import dualad.extend

EXTENSION_NAMES = ("REGISTRY", "Primitive", "sample", "Dual", "Var")


def test_extension_names_stay_importable_from_dualad_and_are_listed_by_extend():
    for name in EXTENSION_NAMES:
        assert getattr(dualad, name) is getattr(dualad.extend, name), name
        assert name in dualad.extend.__all__, name
        assert name not in dualad.__all__, name


def test_all_lists_the_user_facing_functions_classes_and_errors():
    wanted = {"grad", "value_and_grad", "jvp", "vjp", "hvp", "derivative", "vmap", "jit",
              "jet", "taylor", "laplacian", "hessian_diagonal", "hessian_trace", "biharmonic",
              "scan", "while_loop", "checkpoint", "custom_root", "custom_linear_solve", "stop_gradient",
              "primitive", "Function", "custom_jvp", "custom_vjp", "detect_anomaly", "trace",
              "keep_heap",
              "AnomalyError", "EscapedTracerError", "JitRetraceWarning", "JitFallbackWarning",
              "remat_plan", "RematWarning", "GradientTape", "jacobian", "jacfwd", "jacrev",
              "hessian"}
    assert set(dualad.__all__) == wanted
    for name in dualad.__all__:
        assert callable(getattr(dualad, name)), name
    assert dualad.scan.__module__ == "dualad.transforms.scan.api"
    assert dualad.vmap.__module__ == "dualad.interpreters.batching.vmap"
    assert dualad.jit.__module__ == "dualad.interpreters.staging.api"


def test_no_public_function_hides_a_module_of_its_name():
    """``import dualad.jit as J`` used to give the function while ``dualad.jit.api`` was a
    module: no name in ``dualad.__all__`` is also a submodule of dualad."""
    import importlib.util
    hidden = [n for n in dualad.__all__ if importlib.util.find_spec(f"dualad.{n}") is not None]
    assert not hidden, hidden


def test_dir_lists_the_public_names_only():
    """``dir(dualad)``: the public names, the extension surface and the public modules;
    none of the internal packages (core, interpreters, frontend, transforms, ops)."""
    listed = {n for n in dir(dualad) if not n.startswith("_")}
    modules = {"numpy", "scipy", "array_api", "lax", "autograd", "extend", "revolve",
               "teaching", "jacobians", "verification", "tree"}
    assert listed == set(dualad.__all__) | set(EXTENSION_NAMES) | modules


def test_star_import_gives_exactly_all_and_never_shadows_numpy():
    # A fresh interpreter: `import *` into this module's namespace would leak.
    code = ("import numpy\n"
            "before = set(globals())\n"
            "from dualad import *\n"
            "import dualad\n"
            "new = set(globals()) - before - {'dualad', 'before'}\n"
            "assert new == set(dualad.__all__), sorted(new ^ set(dualad.__all__))\n"
            "assert numpy.__name__ == 'numpy'\n"
            "assert grad(lambda x: x * x)(3.0) == 6.0\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
