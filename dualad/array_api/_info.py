"""``__array_namespace_info__``: the inspection API of the array API standard."""
from __future__ import annotations

import numpy as np

from ._dtypes import _check_device

__all__ = ["Info"]

_DTYPES = {"bool": ("bool",),
           "signed integer": ("int8", "int16", "int32", "int64"),
           "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
           "real floating": ("float32", "float64"),
           "complex floating": ("complex64", "complex128")}
_DTYPES["integral"] = _DTYPES["signed integer"] + _DTYPES["unsigned integer"]
_DTYPES["numeric"] = (_DTYPES["integral"] + _DTYPES["real floating"]
                      + _DTYPES["complex floating"])


class Info:
    """What the namespace supports: one device ("cpu"), NumPy's dtypes, and
    data-dependent output shapes (``nonzero``, ``unique_*``: their shapes depend on
    primal values only).

    "boolean indexing" is reported False, as JAX reports it: reading ``x[mask]``
    works, but writing through a mask into a traced array is not differentiable
    here, and consumers that see False take the functional form instead
    (``array_api_extra.apply_where`` computes ``where(cond, f1(x), f2(x))``), which
    differentiates in both modes."""

    __module__ = "dualad.array_api"

    def capabilities(self):
        return {"boolean indexing": False, "data-dependent shapes": True,
                "max dimensions": 64}

    def default_device(self):
        return "cpu"

    def devices(self):
        return ["cpu"]

    def default_dtypes(self, *, device=None):
        _check_device(device)
        return {"real floating": np.dtype(np.float64), "complex floating":
                np.dtype(np.complex128), "integral": np.dtype(np.int64),
                "indexing": np.dtype(np.int64)}

    def dtypes(self, *, device=None, kind=None):
        _check_device(device)
        if kind is None:
            names = ("bool",) + _DTYPES["numeric"]
        elif isinstance(kind, tuple):
            names = tuple(dict.fromkeys(n for k in kind for n in self._names(k)))
        else:
            names = self._names(kind)
        return {n: np.dtype(n) for n in names}

    @staticmethod
    def _names(kind):
        if isinstance(kind, str):
            if kind not in _DTYPES:
                raise ValueError(f"dtypes(kind={kind!r}): unknown kind; expected one of "
                                 f"{sorted(_DTYPES)}")
            return _DTYPES[kind]
        return (np.dtype(kind).name,)


def __array_namespace_info__():
    return Info()
