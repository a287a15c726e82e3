"""GradBench's bundle adjustment (``evals/ba``, ADBench's BA) as plain array code over a
namespace ``xp`` (NumPy -- and so dualad --, ``jax.numpy``, ``autograd.numpy``).

Written from GradBench's eval description (github.com/gradbench/gradbench,
``evals/ba/README.md``) and its C++ reference (``cpp/gradbench/evals/ba.hpp``).

Inputs (``ba_inputs(n, m, p)``), as GradBench's reference builds them from one data file:
``n`` cameras ``cams`` (n, 11) = [r (3, Rodrigues), C (3), f, u0, v0, k1, k2], all a copy of
one camera; ``m`` points ``X`` (m, 3), copies of one point; ``p`` weights ``w`` (p,) and
features ``feats`` (p, 2), copies of one each; observations ``obs`` (p, 2) with
obs[i] = (i mod n, i mod m).

Objective (per observation i, camera c = cams[obs[i, 0]], point x = X[obs[i, 1]]):

    Xo = x - C;  theta = |r|;  u = r / theta
    Xcam = Xo cos(theta) + (u x Xo) sin(theta) + u (u . Xo) (1 - cos(theta))   (Rodrigues)
    q = Xcam[:2] / Xcam[2];  L = 1 + k1 |q|^2 + k2 |q|^4
    reproj_err[i] = w[i] (f L q + (u0, v0) - feats[i])      (2 numbers)
    w_err[i] = 1 - w[i]^2

The reference's theta == 0 branch (u x Xo replaced by r x Xo) is not taken: GradBench's one
camera has |r| = 1.5, and ``ba_objective`` states the precondition instead of branching.

The Jacobian GradBench asks for is that of the flat map ``ba_flat``:
v = [cams.ravel(), X.ravel(), w] (11 n + 3 m + p) -> [reproj_err.ravel(), w_err] (3 p),
rows and columns in the order of the reference's ``SparseMat``. The reference stores
2 * 15 + 1 = 31 entries per observation, two of them structural zeros (u0 does not move
the y error, v0 not the x error): the exact pattern has 29 per observation.
"""
from __future__ import annotations

import numpy as np

# GradBench's evals/ba/data/ba<k>_n<n>_m<m>_p<p>.txt: all twenty files carry the same camera,
# point, weight and feature (checked); only (n, m, p) differ. The eval runs k = 1..14 by
# default (``--max 14``, "can go up to 20").
CAMERA = np.array([-0.758453, -1.109613, -0.845551, 34.556073, 39.676747, 53.881673,
                   419.194514, 5.864426, -8.518870, 0.087812, 0.002739])
POINT = np.array([7.203245, 0.001144, 3.023326])
WEIGHT = 0.417022
FEATURE = np.array([271.760969, 834.209256])
SIZES = {1: (49, 7776, 31843), 2: (21, 11315, 36455), 3: (161, 48126, 182072),
         4: (372, 47423, 204472), 5: (257, 65132, 225911), 6: (539, 65220, 277273),
         7: (93, 61203, 287451), 8: (88, 64298, 383937), 9: (810, 88814, 393775),
         10: (1197, 126327, 563734), 11: (1723, 156502, 678718), 12: (253, 163691, 899155),
         13: (245, 198739, 1091386), 14: (356, 226730, 1255268),
         15: (1102, 780462, 4052340), 16: (1544, 942409, 4750193),
         17: (1778, 993923, 5001946), 18: (1936, 649673, 5213733),
         19: (4585, 1324582, 9125125), 20: (13682, 4456117, 2987644)}
DEFAULT_SIZES = tuple(range(1, 15))
N_CAM = 11


def ba_inputs(n, m, p):
    """GradBench's BA input for sizes (n cameras, m points, p observations): a dict with
    ``cams`` (n, 11), ``X`` (m, 3), ``w`` (p,), ``feats`` (p, 2), ``obs`` (p, 2) int64
    (obs[i] = (i mod n, i mod m)) and ``n``, ``m``, ``p``."""
    i = np.arange(p, dtype=np.int64)
    return {"n": n, "m": m, "p": p,
            "cams": np.tile(CAMERA, (n, 1)), "X": np.tile(POINT, (m, 1)),
            "w": np.full(p, WEIGHT), "feats": np.tile(FEATURE, (p, 1)),
            "obs": np.stack([i % n, i % m], axis=1)}


def _cross(xp, a, b):
    """Row-wise a x b of (p, 3) arrays."""
    return xp.stack([a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1],
                     a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                     a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]], axis=1)


def rodrigues_rotate(xp, rot, pts):
    """Rotate each row of ``pts`` (p, 3) by the axis-angle row of ``rot`` (p, 3), |rot| > 0."""
    theta = xp.sqrt(xp.sum(rot * rot, axis=1))
    cos, sin = xp.cos(theta)[:, None], xp.sin(theta)[:, None]
    u = rot / theta[:, None]
    along = xp.sum(u * pts, axis=1)[:, None] * (1.0 - cos)
    return pts * cos + _cross(xp, u, pts) * sin + u * along


def project(xp, cam, pts):
    """Pinhole projection with radial distortion of points (p, 3) by cameras (p, 11)."""
    xcam = rodrigues_rotate(xp, cam[:, 0:3], pts - cam[:, 3:6])
    q = xcam[:, 0:2] / xcam[:, 2:3]
    rsq = xp.sum(q * q, axis=1)
    distortion = 1.0 + cam[:, 9] * rsq + cam[:, 10] * rsq * rsq
    return q * (distortion * cam[:, 6])[:, None] + cam[:, 7:9]


def ba_objective(xp, cams, X, w, obs, feats):
    """(reproj_err (p, 2), w_err (p,)) of GradBench's BA; ``obs`` (p, 2) integer indices
    gather each observation's camera and point."""
    cam = cams[obs[:, 0]]
    pts = X[obs[:, 1]]
    reproj = w[:, None] * (project(xp, cam, pts) - feats)
    return reproj, 1.0 - w * w


def ba_point(inputs):
    """The flat differentiation point v = [cams.ravel(), X.ravel(), w]."""
    return np.concatenate([inputs["cams"].ravel(), inputs["X"].ravel(), inputs["w"]])


def ba_flat(inputs, xp=np):
    """The map v (11 n + 3 m + p) -> [reproj_err.ravel(), w_err] (3 p) whose Jacobian GradBench
    asks for; obs and feats are closed over."""
    n, m, p = inputs["n"], inputs["m"], inputs["p"]
    obs, feats = inputs["obs"], inputs["feats"]

    def residual(v):
        cams = xp.reshape(v[:N_CAM * n], (n, N_CAM))
        X = xp.reshape(v[N_CAM * n:N_CAM * n + 3 * m], (m, 3))
        w = v[N_CAM * n + 3 * m:]
        reproj, w_err = ba_objective(xp, cams, X, w, obs, feats)
        return xp.concatenate([xp.reshape(reproj, (2 * p,)), w_err])
    return residual


def ba_sparsity(n, m, p):
    """The exact Jacobian pattern of ``ba_flat`` as a scipy.sparse CSR (boolean), built from
    the index columns: 29 nonzeros per observation (the reference's 31 less the
    structural zeros d err_y / d u0 and d err_x / d v0)."""
    import scipy.sparse as sp
    i = np.arange(p)
    cam, pt = i % n, i % m

    def block(cam_params):   # (p, k) columns of one error row: camera, point, weight
        return np.concatenate([N_CAM * cam[:, None] + np.asarray(cam_params),
                               N_CAM * n + 3 * pt[:, None] + np.arange(3),
                               (N_CAM * n + 3 * m + i)[:, None]], axis=1)
    x_row = block([0, 1, 2, 3, 4, 5, 6, 7, 9, 10])     # no v0 (8)
    y_row = block([0, 1, 2, 3, 4, 5, 6, 8, 9, 10])     # no u0 (7)
    rows = np.concatenate([np.repeat(2 * i, 14), np.repeat(2 * i + 1, 14), 2 * p + i])
    cols = np.concatenate([x_row.ravel(), y_row.ravel(), N_CAM * n + 3 * m + i])
    data = np.ones(rows.size, dtype=bool)
    return sp.csr_matrix((data, (rows, cols)), shape=(3 * p, N_CAM * n + 3 * m + p))
