"""ndarray methods of traced values beyond the core ones (installed by dualad.frontend.dispatch).

NumPy's in-place methods (``sort``, ``partition``, ``fill``, ``put``, ``resize``) would
mutate a traced value, which cannot be recorded; they raise, naming the functional
equivalent. The operators ``%``, ``//`` and ``divmod`` are NumPy's remainder,
floor_divide and divmod.
"""
from __future__ import annotations

from ...core.values import per_example
from . import arrays as _arr
from . import joining as _join
from . import reductions as _red
from . import ufuncs as _uf

__all__ = ["BOX_METHODS"]


def _in_place(name, instead):
    def method(self, *args, **kwargs):
        raise TypeError(f"x.{name}() modifies a traced array (shape {self.shape}) in place, "
                        f"which cannot be differentiated; use {instead}, which returns a new "
                        f"array")
    method.__name__ = name
    return method


def _value_method(name):
    def method(self, *args, **kwargs):
        # a function of values: per example under vmap (the primal holds the batch), its
        # result logged as a decision on the values
        return per_example(lambda s, *a, **k: getattr(s, name)(*a, **k), (self,) + args,
                           kwargs, name)
    method.__name__ = name
    return method


BOX_METHODS = {
    "cumprod": lambda self, axis=None, dtype=None, out=None: _red.cumprod(self, axis, dtype, out),
    "round": lambda self, decimals=0, out=None: _uf.round_(self, decimals, out),
    "repeat": lambda self, repeats, axis=None: _arr.repeat(self, repeats, axis),
    "take": lambda self, indices, axis=None, out=None, mode="raise":
        _arr.take(self, indices, axis, out, mode),
    "compress": lambda self, condition, axis=None, out=None:
        _join.compress(condition, self, axis, out),
    "copy": lambda self, order="C": self,
    "sort": _in_place("sort", "np.sort(x)"),
    "partition": _in_place("partition", "np.partition(x, kth)"),
    "fill": _in_place("fill", "np.full_like(x, value) or dualad.numpy.full"),
    "put": _in_place("put", "dualad.numpy.where or np.insert"),
    "resize": _in_place("resize", "np.resize(x, shape)"),
    "__mod__": lambda self, other: _uf.remainder(self, other),
    "__rmod__": lambda self, other: _uf.remainder(other, self),
    "__floordiv__": lambda self, other: _uf.floor_divide(self, other),
    "__rfloordiv__": lambda self, other: _uf.floor_divide(other, self),
    "__divmod__": lambda self, other: _uf.divmod_(self, other),
    "__rdivmod__": lambda self, other: _uf.divmod_(other, self),
}
# Integer and boolean results of the values (zero derivative).
for _name in ("all", "any", "argmax", "argmin", "argsort", "argpartition", "nonzero",
              "searchsorted"):
    BOX_METHODS[_name] = _value_method(_name)

