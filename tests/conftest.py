import os
import pathlib

import dualad
import dualad.jacobians
import dualad.verification

from hypothesis import settings

settings.register_profile("ci", derandomize=True, max_examples=25, deadline=None,
                          print_blob=True)
settings.register_profile("long", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The planner and the oracles live in the repository's jacobians/ and verification/ folders
# and install as dualad.jacobians and dualad.verification (pyproject's package-dir). An
# editable install of ANOTHER checkout would mix two versions of the code: refuse.
_here = pathlib.Path(dualad.__file__).resolve().parent.parent
for _mod in (dualad.jacobians, dualad.verification):
    if pathlib.Path(_mod.__file__).resolve().parent.parent != _here:
        raise RuntimeError(f"{_mod.__name__} comes from {_mod.__file__} but dualad from "
                           f"{dualad.__file__}: run `pip install -e .` in {_here}")
