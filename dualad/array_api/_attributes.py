"""The array API standard's array attributes and methods on traced values.

:func:`install` adds what :mod:`dualad.frontend.dispatch` does not already give every
:class:`~dualad.core.tracer.Box`: ``__array_namespace__`` (this package),
``device``/``to_device`` (one device, "cpu"), ``__dlpack__`` (refused: a memory
buffer cannot carry a derivative) and the bitwise operators (which reach the
NumPy ufuncs, and so a clear "no rule" error, since traced values are floating).
"""
from __future__ import annotations


import numpy as np

__all__ = ["install"]

_VERSIONS = (None, "2021.12", "2022.12", "2023.12", "2024.12")


def _namespace_method(namespace):
    def __array_namespace__(self, /, *, api_version=None):
        """The array API namespace of traced values: :mod:`dualad.array_api`."""
        if api_version not in _VERSIONS:
            raise ValueError(f"__array_namespace__(api_version={api_version!r}): "
                             f"dualad.array_api supports {_VERSIONS[1:]}")
        return namespace
    return __array_namespace__


def _to_device(self, device, /, *, stream=None):
    if device != "cpu":
        raise ValueError(f"to_device({device!r}): dualad traced values live on 'cpu'")
    return self


def _dlpack(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
    raise TypeError(f"__dlpack__ of a traced value of shape {self.shape}: DLPack hands "
                    f"over a memory buffer, which cannot carry a derivative. Pass the "
                    f"traced value itself (xp.asarray keeps it), or take "
                    f"dualad.extend.primal_value(x) for a constant")


def _operator(ufunc, reflected=False):
    if reflected:
        return lambda self, other: ufunc(other, self)
    return lambda self, other: ufunc(self, other)


def install(box_class, namespace):
    """Add the standard's attributes to ``box_class`` (run once at import)."""
    B = box_class
    B.__array_namespace__ = _namespace_method(namespace)
    B.device = property(lambda self: "cpu")
    B.to_device = _to_device
    B.__dlpack__ = _dlpack
    B.__dlpack_device__ = lambda self: (1, 0)   # kDLCPU, device 0
    for name, ufunc in [("and", np.bitwise_and), ("or", np.bitwise_or),
                        ("xor", np.bitwise_xor), ("lshift", np.left_shift),
                        ("rshift", np.right_shift)]:
        if f"__{name}__" not in vars(B):
            setattr(B, f"__{name}__", _operator(ufunc))
            setattr(B, f"__r{name}__", _operator(ufunc, reflected=True))
    if "__invert__" not in vars(B):
        B.__invert__ = lambda self: np.invert(self)
