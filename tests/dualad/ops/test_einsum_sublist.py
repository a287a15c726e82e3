"""np.einsum's sublist form, einsum(op0, sublist0, op1, sublist1, ..., [sublist_out]):
converted to the subscripts form (integer k is letter k of 'A'…'Z' 'a'…'z', as in NumPy),
with and without the output sublist, with Ellipsis; values compared with NumPy's own
einsum, derivatives with finite differences in both modes to order 2."""
import numpy as np
import pytest

import dualad
from dualad.ops.core.products import _sublist_to_subscripts
from dualad.verification import check_grads

RNG = np.random.default_rng(5)
A, B, C = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 5)), RNG.standard_normal((5, 3))
S = RNG.standard_normal((2, 3, 4))

CASES = {   # name: (function of the operands in sublist form, operands)
    "matmul": (lambda a, b: np.einsum(a, [0, 1], b, [1, 2], [0, 2]), (A, B)),
    "matmul_implicit": (lambda a, b: np.einsum(a, [0, 1], b, [1, 2]), (A, B)),
    "transpose": (lambda a: np.einsum(a, [0, 1], [1, 0]), (A,)),
    "trace_like_sum": (lambda a: np.einsum(a, [0, 1], []), (A,)),
    "diagonal": (lambda c: np.einsum(c, [0, 0], [0]), (C[:3],)),
    "trace": (lambda c: np.einsum(c, [0, 0]), (C[:3],)),
    "three_args": (lambda a, b, c: np.einsum(a, [0, 1], b, [1, 2], c, [2, 3], [0, 3]), (A, B, C)),
    "ellipsis_batch": (lambda s, b: np.einsum(s, [Ellipsis, 0, 1], b, [1, 2],
                                              [Ellipsis, 0, 2]), (S, B)),
    "ellipsis_implicit": (lambda s, b: np.einsum(s, [Ellipsis, 1], b, [1, 2]), (S, B)),
    "large_indices": (lambda a, b: np.einsum(a, [30, 51], b, [51, 40], [40, 30]), (A, B)),
    "outer_numpy_int": (lambda a: np.einsum(a, [np.int64(0), 1], a, [2, 3]), (A[:2, :2],)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_sublist_values_and_derivatives(name):
    f, ops = CASES[name]
    want = f(*ops)                                     # NumPy's own einsum on plain arrays
    for i in range(len(ops)):
        g = lambda x, i=i: f(*ops[:i], x, *ops[i + 1:])  # noqa: E731
        np.testing.assert_allclose(dualad.jvp(g, (ops[i],), (ops[i],))[0], want)
        check_grads(g, ops[i], order=2)


def test_sublist_matches_subscripts_form():
    assert _sublist_to_subscripts((A, [0, 1], B, [1, 2], [0, 2]))[0] == "AB,BC->AC"
    assert _sublist_to_subscripts((S, [Ellipsis, 26], B, [26, 27]))[0] == "...a,ab"
    ga = dualad.grad(lambda a: np.sum(np.einsum(a, [0, 1], B, [1, 2], [0, 2]) ** 2))(A)
    gb = dualad.grad(lambda a: np.sum(np.einsum("ij,jk->ik", a, B) ** 2))(A)
    np.testing.assert_allclose(ga, gb)
    np.testing.assert_allclose(ga, 2 * (A @ B) @ B.T)  # closed form


def test_sublist_complex_operands():
    z = A + 1j * A[::-1]
    check_grads(lambda z: np.einsum(z, [0, 1], np.conj(z), [0, 1], []), z, order=2)


@pytest.mark.parametrize("bad, match", [
    ((A, [0, "j"]), "integers in \\[0, 52\\) or Ellipsis"),
    ((A, [0, 52]), "integers in \\[0, 52\\)"),
    ((A, [0, -1]), "integers in \\[0, 52\\)"),
    ((A, [0, True]), "integers in \\[0, 52\\)"),
    ((A, 3), "must be a list of integers"),
    ((A, [0, 1], [0.5]), "output sublist must hold integers"),
])
def test_bad_sublists_raise(bad, match):
    with pytest.raises(TypeError, match=match):
        dualad.jvp(lambda a: np.einsum(a, *bad[1:]), (bad[0],), (bad[0],))


def test_sublist_wrong_length_raises():
    with pytest.raises(ValueError, match="einsum: subscripts .* do not match an operand"):
        dualad.grad(lambda a: np.sum(np.einsum(a, [0, 1, 2])))(A)
