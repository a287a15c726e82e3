"""The ``"dualad"`` logger hierarchy (dualad.core.logs, docs/logging.md): silent by default.

``import dualad`` adds one NullHandler to ``"dualad"`` and nothing else (no level, no other
handler, the root logger untouched); the everyday calls log nothing at the default
WARNING level; ``dualad.extend.logger`` names the children and refuses unknown ones.
"""
import json
import logging
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dualad
from dualad.core import logs
from dualad.extend import logger


def _fresh(code):
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def test_import_dualad_does_not_import_logging():
    out, _ = _fresh("""
        import json, sys
        import dualad, numpy as np
        dualad.grad(lambda x: np.sum(np.sin(x)))(np.ones(3))
        dualad.jit(lambda x: x * 2)(np.ones(3))      # a trace asks the (disabled) logger
        print(json.dumps(["logging" in sys.modules and "dualad.core.logs" in sys.modules]))
    """)
    assert out == [True]      # logging only once a logger was asked for
    out, _ = _fresh("""
        import json, sys
        import dualad
        print(json.dumps(["logging" in sys.modules]))
    """)
    assert out == [False]


def test_the_library_adds_only_a_null_handler_and_sets_no_level():
    out, err = _fresh("""
        import json, logging, sys
        root_before = (list(logging.getLogger().handlers), logging.getLogger().level)
        import dualad, numpy as np
        from dualad import jacobians   # the planner's import adds nothing either
        jacobians.jacobian(np.sin, np.ones(3))
        dualad.jit(lambda x: x * 2)(np.ones(3))
        d = logging.getLogger("dualad")
        kids = {n: (logging.getLogger(n).level, len(logging.getLogger(n).handlers),
                    logging.getLogger(n).propagate)
                for n in ("dualad.jacobians", "dualad.jit", "dualad.distributed",
                          "dualad.checkpoint", "dualad.autograd")}
        print(json.dumps({
            "handlers": [type(h).__name__ for h in d.handlers],
            "level": d.level, "propagate": d.propagate, "kids": kids,
            "root_same": (list(logging.getLogger().handlers),
                          logging.getLogger().level) == root_before,
            "handlers_module": "logging.handlers" in sys.modules,
            "tqdm": any(m.split(".")[0] == "tqdm" for m in sys.modules)}))
    """)
    assert out["handlers"] == ["NullHandler"]
    assert out["level"] == logging.NOTSET and out["propagate"] is True
    assert all(v == [logging.NOTSET, 0, True] for v in out["kids"].values()), out["kids"]
    assert out["root_same"] is True
    assert out["handlers_module"] is False and out["tqdm"] is False
    assert err == ""


def test_a_reload_adds_no_second_null_handler():
    import importlib
    logger("jit")
    importlib.reload(logs)
    logs.logger("jit")
    handlers = logging.getLogger("dualad").handlers
    assert sum(type(h) is logging.NullHandler for h in handlers) == 1


def test_extend_logger_names_the_children_and_refuses_others():
    assert logger("jit") is logging.getLogger("dualad.jit")
    assert {logger(p).name for p in logs.PARTS} == {
        "dualad.jacobians", "dualad.jit", "dualad.distributed", "dualad.checkpoint",
        "dualad.autograd"}
    with pytest.raises(ValueError, match=r"unknown part 'jits'.*dualad\.jit"):
        logger("jits")


class _Catch(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


def test_everyday_calls_log_nothing_at_the_default_level():
    """A handler on the root logger at the default WARNING level sees nothing from a
    grad, a jit (first call and replay), a planned Jacobian, a Hessian, a checkpointed scan."""
    from dualad import jacobians
    root, catch = logging.getLogger(), _Catch()
    root.addHandler(catch)
    try:
        assert not logging.getLogger("dualad.jit").isEnabledFor(logging.INFO)
        dualad.grad(lambda x: np.sum(np.sin(x)))(np.ones(3))
        f = dualad.jit(lambda x: np.cos(x) * 2)
        f(np.ones(4))
        f(np.ones(4))
        jacobians.jacobian(lambda x: x[1:] ** 2 - x[:-1], np.ones(30))
        jacobians.hessian(lambda x: np.sum(x ** 3), np.ones(4))

        def loss(c0):
            return dualad.scan(lambda c, x: (c * x, c), c0, np.linspace(0.5, 1, 6),
                               checkpoints="binomial", snapshots=2)[0]
        dualad.grad(loss)(0.3)
    finally:
        root.removeHandler(catch)
    assert [r for r in catch.records if r.name.startswith("dualad")] == []


def test_without_configuration_a_warning_record_prints_nothing():
    """Even a WARNING record (jit giving up on a signature) reaches no stderr through
    logging's last resort: the NullHandler stands in; the JitRetraceWarning still shows."""
    _, err = _fresh("""
        import json, numpy as np, dualad
        g = dualad.jit(lambda x: x * float(np.sum(x)), max_traces=2)
        for i in range(5):
            g(np.ones(2) * i)
        print(json.dumps(1))
    """)
    assert "JitRetraceWarning" in err
    assert "every replay failing a guard" not in err     # the log record's own words
