from .flatten import flatten  # noqa: F401
