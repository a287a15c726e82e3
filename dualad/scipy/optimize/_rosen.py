"""SciPy's Rosenbrock test functions on traced values (``dualad.scipy.optimize.rosen``, ...).

``rosen(x) = Σ_{i<n-1} 100 (x_{i+1} − x_i²)² + (1 − x_i)²`` (Rosenbrock 1960, SciPy's
convention, summed over axis 0 so that a 2-D x holds one point per column), and its
gradient, Hessian and Hessian-vector product in closed form, as SciPy computes them:
written with NumPy operations, so they differentiate to any order in both modes (the
derivative of ``rosen_der`` is ``rosen_hess``).
"""
from __future__ import annotations

__all__ = ["rosen", "rosen_der", "rosen_hess", "rosen_hess_prod"]

import numpy as np


def rosen(x):
    r"""The Rosenbrock function, :math:`\sum_{i<n-1} 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2`.

    SciPy's convention: the sum runs over axis 0, so a 2-D ``x`` holds one point per
    column. Written with NumPy operations, it differentiates to any order in both modes;
    its minimum is 0 at :math:`x = (1, \dots, 1)`.

    Parameters
    ----------
    x : array_like
        The point(s), at least 2 entries along axis 0.

    Returns
    -------
    float or numpy.ndarray
        The function value (one per column for a 2-D ``x``).

    Raises
    ------
    ValueError
        Fewer than 2 entries along axis 0.

    See Also
    --------
    rosen_der, rosen_hess, rosen_hess_prod : Its derivatives in closed form.

    References
    ----------
    .. [1] H. H. Rosenbrock, "An automatic method for finding the greatest or least value
       of a function", *The Computer Journal* 3 (1960), 175-184.

    Examples
    --------
    >>> from dualad.scipy import optimize
    >>> print(float(optimize.rosen(np.array([1.0, 1.0]))))
    0.0
    >>> print(dualad.grad(optimize.rosen)(np.array([0.0, 0.0])))
    [-2.  0.]
    """
    x = _vector(x)
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2.0) ** 2.0 + (1 - x[:-1]) ** 2.0, axis=0)


def rosen_der(x):
    r"""The gradient of :func:`rosen` in closed form.

    :math:`\partial/\partial x_j = 200 (x_j - x_{j-1}^2) - 400 x_j (x_{j+1} - x_j^2) - 2 (1 - x_j)`,
    with the first and last terms dropped at the ends. Differentiable itself: its Jacobian
    is :func:`rosen_hess`.

    Parameters
    ----------
    x : array_like
        The point, at least 2 entries.

    Returns
    -------
    numpy.ndarray
        The gradient, of ``x``'s shape.

    See Also
    --------
    rosen, rosen_hess

    Examples
    --------
    >>> from dualad.scipy import optimize
    >>> print(optimize.rosen_der(np.array([0.0, 0.0])))
    [-2.  0.]
    """
    x = _vector(x)
    xm, xm_m1, xm_p1 = x[1:-1], x[:-2], x[2:]
    middle = 200 * (xm - xm_m1 ** 2) - 400 * (xm_p1 - xm ** 2) * xm - 2 * (1 - xm)
    first = -400 * x[0] * (x[1] - x[0] ** 2) - 2 * (1 - x[0])
    last = 200 * (x[-1] - x[-2] ** 2)
    return np.concatenate([np.reshape(first, (1,)), middle, np.reshape(last, (1,))])


def rosen_hess(x):
    """The Hessian of :func:`rosen` in closed form.

    Tridiagonal: diagonal :math:`1200 x_j^2 - 400 x_{j+1} + 202` (at the ends
    :math:`1200 x_0^2 - 400 x_1 + 2` and 200), off-diagonals :math:`-400 x_j`.

    Parameters
    ----------
    x : array_like
        The point, at least 2 entries.

    Returns
    -------
    numpy.ndarray
        The ``n x n`` Hessian.

    See Also
    --------
    rosen, rosen_hess_prod

    Examples
    --------
    >>> from dualad.scipy import optimize
    >>> print(optimize.rosen_hess(np.array([1.0, 1.0])))
    [[ 802. -400.]
     [-400.  200.]]
    """
    x = _vector(x)
    off = -400 * x[:-1]
    diagonal = np.concatenate([
        np.reshape(1200 * x[0] ** 2 - 400 * x[1] + 2, (1,)),
        202 + 1200 * x[1:-1] ** 2 - 400 * x[2:],
        np.full(1, 200.0)])
    return np.diag(diagonal) + np.diag(off, 1) + np.diag(off, -1)


def rosen_hess_prod(x, p):
    r"""The Hessian of :func:`rosen` times a vector ``p``, without forming the Hessian.

    The tridiagonal product of :func:`rosen_hess` with ``p``, computed band by band.

    Parameters
    ----------
    x : array_like
        The point, at least 2 entries.
    p : array_like
        The vector, of ``x``'s shape.

    Returns
    -------
    numpy.ndarray
        :math:`\nabla^2 \mathrm{rosen}(x)\, p`.

    See Also
    --------
    rosen_hess

    Examples
    --------
    >>> from dualad.scipy import optimize
    >>> print(optimize.rosen_hess_prod(np.array([1.0, 1.0]), np.array([1.0, 0.0])))
    [ 802. -400.]
    """
    x, p = _vector(x), _vector(p, "p")
    first = (1200 * x[0] ** 2 - 400 * x[1] + 2) * p[0] - 400 * x[0] * p[1]
    middle = (-400 * x[:-2] * p[:-2] + (202 + 1200 * x[1:-1] ** 2 - 400 * x[2:]) * p[1:-1]
              - 400 * x[1:-1] * p[2:])
    last = -400 * x[-2] * p[-2] + 200 * p[-1]
    return np.concatenate([np.reshape(first, (1,)), middle, np.reshape(last, (1,))])


def _vector(x, name="x"):
    if x is None:
        raise TypeError(f"rosen: {name} is None; pass a vector of at least 2 entries")
    if not hasattr(x, "shape"):
        x = np.asarray(x, dtype=float)
    if len(x.shape) < 1 or x.shape[0] < 2:
        raise ValueError(f"rosen: {name} of shape {tuple(x.shape)} needs at least 2 entries "
                         f"along axis 0")
    return x
