"""scipy.sparse in differentiated code: the numbers quoted in docs/sparse.md (no asserts).

    python bench/sparse_matrices.py

- ``sparse_jacobian`` of the residual r(u) = A u + u³ − f with A the 2-D Laplacian (5-point
  stencil) at n = 10^4 and n ≈ 10^5: total time (detection, coloring, compressed sweeps,
  a fresh function each call so no pattern is reused), the detection alone, the number of
  colors, and one plain evaluation of r for scale;
- ``grad`` of |A⁻¹ b|² through ``dualad.scipy.sparse.linalg.spsolve`` at n = 10^4, in b
  and in A's stored values, against one call of SciPy's own ``spsolve``.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import median_time  # noqa: E402

import dualad  # noqa: E402
import dualad.scipy.sparse as dsp  # noqa: E402
from dualad import jacobians  # noqa: E402
from dualad.scipy.sparse.linalg import spsolve  # noqa: E402


def laplacian_2d(m):
    L = sp.diags([np.ones(m - 1), -2 * np.ones(m), np.ones(m - 1)], [-1, 0, 1])
    eye = sp.eye(m)
    return (sp.kron(L, eye) + sp.kron(eye, L)).tocsr()


def residual_rows():
    for m in (100, 317):
        A = laplacian_2d(m)
        n = A.shape[0]
        f0, u0 = np.linspace(0, 1, n), np.cos(np.arange(n))

        def fresh():
            return jacobians.sparse_jacobian(lambda u: A @ u + u ** 3 - f0, u0)
        residual = lambda u: A @ u + u ** 3 - f0   # noqa: E731
        t_total = median_time(fresh, repeat=3)
        t_detect = median_time(lambda: jacobians.jacobian_sparsity(residual, u0), repeat=3)
        colors = jacobians.column_coloring(jacobians.jacobian_sparsity(residual, u0)).ncolors
        J = fresh()
        err = abs(J - (A + sp.diags(3 * u0 ** 2))).max()
        t_plain = median_time(lambda: residual(u0), repeat=3)
        print(f"sparse_jacobian, 2-D Laplacian residual, n={n}: {t_total * 1e3:.1f} ms "
              f"(detection {t_detect * 1e3:.1f} ms), {colors} colors, nnz {J.nnz}, "
              f"max |J - exact| {err:.1e}; one plain evaluation {t_plain * 1e3:.2f} ms")


def spsolve_rows():
    A = (-laplacian_2d(100)).tocsr()
    A.sort_indices()
    n = A.shape[0]
    b = np.linspace(0, 1, n)
    t_scipy = median_time(lambda: spla.spsolve(A.tocsc(), b), repeat=3)
    grad_b = dualad.grad(lambda b: (spsolve(A, b) ** 2).sum())
    t_b = median_time(lambda: grad_b(b), repeat=3)
    ref = spla.spsolve(A.T.tocsc(), 2 * spla.spsolve(A.tocsc(), b))
    err = np.abs(grad_b(b) - ref).max() / np.abs(ref).max()

    def loss(d, b):
        return (spsolve(dsp.csr_array((d, A.indices, A.indptr), shape=A.shape), b) ** 2).sum()
    grad_both = dualad.grad(loss, argnums=(0, 1))
    t_both = median_time(lambda: grad_both(A.data.copy(), b), repeat=3)
    print(f"grad through spsolve, n={n}: in b {t_b * 1e3:.1f} ms, in b and A's {A.nnz} stored "
          f"values {t_both * 1e3:.1f} ms; SciPy's spsolve alone {t_scipy * 1e3:.1f} ms "
          f"(ratios {t_b / t_scipy:.2f}, {t_both / t_scipy:.2f}); relative error vs closed "
          f"form {err:.1e}")


if __name__ == "__main__":
    residual_rows()
    spsolve_rows()
