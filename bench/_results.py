"""Comparing peers' derivatives with dualad's (bench/run.py): every peer of a row
differentiates the same function at the same point, so their results must agree."""
from __future__ import annotations

import numpy as np


def as_array(result):
    """A peer's result as a flat float array, or a SciPy sparse matrix kept sparse (a
    20000 x 20000 Jacobian does not fit densely). Lists and tuples (gradients with
    respect to several parameters) are concatenated; tensors are converted."""
    import scipy.sparse as sp
    if sp.issparse(result):
        return result.tocsr()
    if isinstance(result, (list, tuple)):
        return np.concatenate([np.ravel(as_array(r)) for r in result])
    if hasattr(result, "detach"):           # a torch tensor
        result = result.detach().numpy()
    return np.asarray(result, dtype=float).ravel()


def agree(got, want, rtol):
    """(ok, how): ``got`` equals ``want`` to ``rtol`` elementwise, with an absolute floor
    of 1e-12 times the largest entry of ``want`` (entries that cancel to ~0 in one peer
    and to 1e-17 in another are equal). ``how`` describes the worst entry."""
    import scipy.sparse as sp
    try:
        a, b = as_array(got), as_array(want)
    except Exception as exc:  # noqa: BLE001 - an unexpected result type is a mismatch
        return False, f"result not comparable: {describe_error(exc)}"
    if sp.issparse(a) != sp.issparse(b):
        a = a.toarray().ravel() if sp.issparse(a) else a
        b = b.toarray().ravel() if sp.issparse(b) else b
    if a.shape != b.shape:
        return False, f"shape {a.shape} against {b.shape}"
    if sp.issparse(a):
        scale = abs(b).max() if b.nnz else 0.0
        diff = abs(a - b)
        worst = diff.max() if diff.nnz else 0.0
        excess = diff - abs(b) * rtol      # elementwise allclose on the union pattern
        ok = (excess.max() if excess.nnz else 0.0) <= 1e-12 * scale and np.isfinite(a.data).all()
        return ok, f"max |diff| {worst:.3g}, max |dualad| {scale:.3g}"
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    ok = bool(np.allclose(a, b, rtol=rtol, atol=1e-12 * scale)) and np.isfinite(a).all()
    if ok:
        return True, ""
    err = np.abs(a - b)
    err[~np.isfinite(err)] = np.inf          # a NaN or inf entry is the worst entry
    i = int(np.argmax(err)) if err.size else 0
    return False, (f"worst entry {i}: {a[i]:.17g} against {b[i]:.17g}, rtol {rtol:g}"
                   if err.size else "empty")


def describe_error(exc):
    """``Type: message`` on one line, shortened."""
    text = " ".join(str(exc).split())
    text = f"{type(exc).__name__}: {text}"
    return text if len(text) <= 200 else text[:197] + "..."
