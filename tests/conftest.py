import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, max_examples=25, deadline=None,
                          print_blob=True)
settings.register_profile("long", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
