"""autograd.builtins for the shim: containers are plain Python containers in dualad."""
from autograd import dict, isinstance, list, tuple  # noqa: F401
