"""A fixture shared by the planner's tests: the directions forward mode sweeps, per call.

Imported by test modules (``from sweep_counting import directions``): the folder has no
conftest.py, and pytest puts a test module's folder on ``sys.path``."""
import pytest

import dualad
from dualad.extend import shape_of


@pytest.fixture
def directions(monkeypatch):
    """Directions swept by forward mode (the leading axis of every tangent seed), per call."""
    swept = []
    jvp = dualad.jvp

    def counting_jvp(fun, primals, tangents, *a, **k):
        swept.append(shape_of(tangents[0])[0] if len(shape_of(tangents[0])) >
                     len(shape_of(primals[0])) else 1)
        return jvp(fun, primals, tangents, *a, **k)
    monkeypatch.setattr(dualad, "jvp", counting_jvp)
    return swept
