"""dualad.array_api against array-api-strict (the standard's reference namespace):
the same names, and the same values, shapes and dtypes on plain inputs. Derivatives
of traced values through the namespace: tests/dualad/mirrors/test_array_api_grads.py."""
import numpy as np
import pytest

import dualad
from dualad.array_api import Array

strict = pytest.importorskip("array_api_strict")
xp = dualad.array_api

# Names array-api-strict exports that are its own machinery, not the standard's.
STRICT_ONLY = {"ArrayAPIStrictFlags", "Device", "ModuleType", "get_array_api_strict_flags",
               "reset_array_api_strict_flags", "set_array_api_strict_flags"}
EXTENSION_HELPERS = {"Array", "DType", "Device", "Literal", "NamedTuple", "Sequence",
                     "EigResult", "EighResult", "QRResult", "SVDResult", "SlogdetResult",
                     "partial", "requires_api_version", "requires_extension", "numpy",
                     "normalize_axis_tuple", "get_array_api_strict_flags", "ALL_DEVICES",
                     "device_supports_dtype", "astype", "complex64", "complex128",
                     "float32", "finfo", "conj", "reshape", "eig", "eigvals"}


def test_every_standard_name_is_in_the_namespace():
    missing = [n for n in dir(strict) if not n.startswith("_") and n not in STRICT_ONLY
               and not hasattr(xp, n)]
    assert missing == []
    for ext in ("linalg", "fft"):
        missing = [n for n in dir(getattr(strict, ext)) if not n.startswith("_")
                   and n not in EXTENSION_HELPERS and not hasattr(getattr(xp, ext), n)]
        assert missing == [], ext
    assert xp.__array_api_version__ == "2023.12"


def _pair(values, dtype="float64"):
    return xp.asarray(values, dtype=getattr(xp, dtype)), \
        strict.asarray(values, dtype=getattr(strict, dtype))


def _same(ours, theirs):
    if isinstance(theirs, (tuple, list)):   # (named) tuples; sequences of arrays
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
        return
    assert isinstance(ours, Array), type(ours)
    expected = np.asarray(theirs)
    got = np.asarray(ours)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12, equal_nan=True)


RNG = np.random.default_rng(0)
A = RNG.normal(size=(3, 4)).round(3)
POS = RNG.uniform(0.2, 0.9, size=(3, 4)).round(3)
SQ = RNG.normal(size=(3, 3)) + 3 * np.eye(3)
SPD = SQ @ SQ.T

UNARY = ["abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos",
         "cosh", "exp", "expm1", "floor", "isfinite", "isinf", "isnan", "log",
         "log1p", "log2", "log10", "logical_not", "negative", "positive",
         "reciprocal", "round", "sign", "signbit", "sin", "sinh", "sqrt", "square", "tan",
         "tanh", "trunc"]
DOMAIN = {"acosh": 1.0 + POS, "log": POS, "log1p": POS, "log2": POS, "log10": POS,
          "sqrt": POS, "acos": POS, "asin": POS, "atanh": POS, "logical_not": A > 0}


@pytest.mark.parametrize("name", UNARY)
def test_unary_matches_strict(name):
    values = DOMAIN.get(name, A)
    dtype = "bool" if values.dtype == bool else "float64"
    ours, theirs = _pair(values, dtype)
    _same(getattr(xp, name)(ours), getattr(strict, name)(theirs))


BINARY = ["add", "atan2", "copysign", "divide", "equal", "floor_divide", "greater",
          "greater_equal", "hypot", "less", "less_equal", "logaddexp", "maximum", "minimum",
          "multiply", "nextafter", "not_equal", "pow", "remainder", "subtract"]


@pytest.mark.parametrize("name", BINARY)
def test_binary_matches_strict(name):
    a, sa = _pair(POS + 0.5)
    b, sb = _pair(A[0])   # broadcasting (4,) against (3, 4)
    _same(getattr(xp, name)(a, b), getattr(strict, name)(sa, sb))


@pytest.mark.parametrize("call", [
    lambda ns, x: ns.sum(x, axis=1), lambda ns, x: ns.sum(x, dtype=ns.float32),
    lambda ns, x: ns.prod(x, axis=0, keepdims=True), lambda ns, x: ns.mean(x, axis=(0, 1)),
    lambda ns, x: ns.std(x, axis=0, correction=1), lambda ns, x: ns.var(x, correction=0.5),
    lambda ns, x: ns.max(x, axis=1), lambda ns, x: ns.min(x),
    lambda ns, x: ns.cumulative_sum(x, axis=1, include_initial=True),
    lambda ns, x: ns.cumulative_prod(x, axis=0),
    lambda ns, x: ns.argmax(x, axis=1, keepdims=True), lambda ns, x: ns.argmin(x),
    lambda ns, x: ns.count_nonzero(x > 0, axis=0), lambda ns, x: ns.all(x > -5),
    lambda ns, x: ns.any(x > 5, axis=1), lambda ns, x: ns.diff(x, axis=0, n=2),
    lambda ns, x: ns.diff(x, prepend=x[:, :1]), lambda ns, x: ns.sort(x, descending=True),
    lambda ns, x: ns.argsort(ns.round(x), axis=0, descending=True),
    lambda ns, x: ns.clip(x, min=-0.5, max=0.5), lambda ns, x: ns.clip(x, max=0.1),
    lambda ns, x: ns.where(x > 0, x, ns.zeros_like(x)),
    lambda ns, x: ns.concat([x, x], axis=None), lambda ns, x: ns.concat((x, x), axis=1),
    lambda ns, x: ns.stack([x, x], axis=-1), lambda ns, x: ns.unstack(x, axis=1),
    lambda ns, x: ns.permute_dims(x, (1, 0)), lambda ns, x: ns.moveaxis(x, 0, 1),
    lambda ns, x: ns.reshape(x, (4, 3)), lambda ns, x: ns.expand_dims(x, axis=1),
    lambda ns, x: ns.squeeze(ns.expand_dims(x, axis=0), axis=0),
    lambda ns, x: ns.flip(x, axis=1), lambda ns, x: ns.roll(x, 2, axis=1),
    lambda ns, x: ns.repeat(x, 2, axis=0), lambda ns, x: ns.tile(x, (2, 1)),
    lambda ns, x: ns.broadcast_to(x[0, :], (2, 4)), lambda ns, x: ns.broadcast_arrays(x, x[0, :]),
    lambda ns, x: ns.take(x, ns.asarray([2, 0, 2]), axis=1),
    lambda ns, x: ns.take_along_axis(x, ns.argsort(x, axis=1), axis=1),
    lambda ns, x: ns.tril(x, k=1), lambda ns, x: ns.triu(x),
    lambda ns, x: ns.matmul(x, ns.matrix_transpose(x)), lambda ns, x: ns.vecdot(x, x),
    lambda ns, x: ns.tensordot(x, x, axes=([1], [1])), lambda ns, x: x.mT,
    lambda ns, x: ns.searchsorted(ns.sort(x[0, :]), x[1, :]), lambda ns, x: ns.nonzero(x > 0),
    lambda ns, x: ns.unique_values(ns.round(x)), lambda ns, x: ns.unique_counts(ns.round(x)),
    lambda ns, x: ns.unique_inverse(ns.round(x)), lambda ns, x: ns.unique_all(ns.round(x)),
    lambda ns, x: ns.astype(x, ns.float32), lambda ns, x: ns.linspace(0, 1, 5),
    lambda ns, x: ns.arange(1, 7, 2), lambda ns, x: ns.eye(3, 4, k=1),
    lambda ns, x: ns.full((2, 2), 3.5), lambda ns, x: ns.ones_like(x),
    lambda ns, x: ns.meshgrid(x[0, :], x[1, :2], indexing="ij"),
    lambda ns, x: x[1:, ::2] * 2.0 + 1.0, lambda ns, x: -x @ ns.matrix_transpose(x),
    lambda ns, x: ns.linalg.vector_norm(x, axis=1, ord=3),
    lambda ns, x: ns.linalg.matrix_norm(x, ord="nuc"), lambda ns, x: ns.linalg.svdvals(x),
    lambda ns, x: ns.linalg.outer(x[0, :], x[1, :]), lambda ns, x: ns.linalg.diagonal(x, offset=1),
    lambda ns, x: ns.linalg.trace(x), lambda ns, x: ns.linalg.cross(x[:, :3], x[:, 1:]),
    lambda ns, x: ns.linalg.matrix_rank(x), lambda ns, x: ns.linalg.pinv(x),
    lambda ns, x: ns.fft.fft(ns.astype(x, ns.complex128), n=6, axis=0), lambda ns, x: ns.fft.rfftn(x),
    lambda ns, x: ns.fft.irfft(ns.fft.rfft(x)), lambda ns, x: ns.fft.fftshift(x),
    lambda ns, x: ns.fft.fftfreq(5, d=0.5), lambda ns, x: ns.fft.hfft(ns.astype(x, ns.complex128)),
])
def test_functions_match_strict(call):
    ours, theirs = _pair(A)
    _same(call(xp, ours), call(strict, theirs))


@pytest.mark.parametrize("call", [
    lambda ns, x: ns.linalg.cholesky(x, upper=True), lambda ns, x: ns.linalg.det(x),
    lambda ns, x: ns.linalg.inv(x), lambda ns, x: ns.linalg.solve(x, x[:, 0]),
    lambda ns, x: ns.linalg.slogdet(x), lambda ns, x: ns.linalg.eigvalsh(x),
    lambda ns, x: ns.linalg.matrix_power(x, 3), lambda ns, x: ns.linalg.qr(x)[1] ** 2,
])
def test_linalg_matches_strict(call):
    ours, theirs = _pair(SPD)
    _same(call(xp, ours), call(strict, theirs))


def test_data_type_functions_match_strict():
    a, sa = _pair(A, "float32")
    assert xp.result_type(a, xp.float64) == np.float64
    assert xp.result_type(a, 1.0) == np.float32
    assert strict.result_type(sa, 1.0) == strict.float32
    assert xp.can_cast(xp.float32, xp.float64) and not xp.can_cast(a, xp.int32)
    assert xp.isdtype(xp.float32, "real floating") and xp.isdtype(xp.int8, ("bool", "integral"))
    assert not xp.isdtype(xp.complex64, "real floating")
    with pytest.raises(ValueError, match="unknown kind"):
        xp.isdtype(xp.float32, "floating")
    assert xp.finfo(a).eps == strict.finfo(sa).eps and xp.iinfo(xp.int16).max == 32767
    assert xp.astype(a, xp.float64).dtype == np.float64


def test_inspection():
    info = xp.__array_namespace_info__()
    assert info.default_device() == "cpu" and info.devices() == ["cpu"]
    assert info.default_dtypes()["real floating"] == np.float64
    assert set(info.dtypes(kind="real floating")) == {"float32", "float64"}
    assert set(info.dtypes(kind=("bool", "complex floating"))) == {"bool", "complex64",
                                                                   "complex128"}
    assert info.capabilities() == {"boolean indexing": False, "data-dependent shapes": True,
                                   "max dimensions": 64}
    with pytest.raises(ValueError, match="device"):
        info.dtypes(device="gpu")


def test_plain_ndarrays_give_plain_ndarrays():
    """A call on NumPy arrays returns NumPy arrays (NumPy's namespace stays NumPy's);
    the namespace's own constructors return its Array."""
    out = xp.sin(A)
    assert type(out) is np.ndarray
    assert type(xp.std(A, correction=1)) is not Array
    assert type(xp.zeros(3)) is Array and type(xp.asarray(A)) is Array
    assert xp.asarray(A).__array_namespace__() is xp


def test_asarray_copy_and_device():
    base = np.arange(3.0)
    view = xp.asarray(base)
    base_copy = xp.asarray(base, copy=True)
    base[0] = 7.0
    assert np.asarray(view)[0] == 7.0 and np.asarray(base_copy)[0] == 0.0
    with pytest.raises(ValueError, match="device"):
        xp.asarray(base, device="cuda")
    with pytest.raises(ValueError):
        xp.asarray([1.0, 2.0], dtype=xp.float32, copy=False)
    with pytest.raises(ValueError, match="cannot be viewed"):
        xp.reshape(xp.matrix_transpose(xp.asarray(A)), (12,), copy=False)


def test_array_writes_are_copy_on_write():
    a = xp.zeros(4)
    b = a[1:]              # a view of the value a held
    a[1] = 5.0
    assert float(a[1]) == 5.0 and float(b[0]) == 0.0
    a[xp.asarray([True, False, False, True])] = 2.0
    assert [float(v) for v in a] == [2.0, 5.0, 0.0, 2.0]


def test_errors_name_what_to_write():
    with pytest.raises(ValueError, match="axis is required"):
        xp.take(xp.asarray(A), xp.asarray([0]))
    with pytest.raises(ValueError, match="size 4, not 1"):
        xp.squeeze(xp.asarray(A), axis=1)
    with pytest.raises(ValueError, match="axis is required"):
        xp.cumulative_sum(xp.asarray(A))
    with pytest.raises(ValueError, match="api_version"):
        dualad.grad(lambda x: x.__array_namespace__(api_version="2019.01") and x)(1.0)
