"""The coverage table's data: one row per public function (a few twice), with a sample
call inside its domain and the arguments it is differentiated in; the list of what HIPS
autograd differentiates; the document's prose. :mod:`verification.coverage` runs every
row; nothing here is a verdict.

A row is ``Entry(name, expr, wrt, claim)``: ``name`` as users know the function
(``numpy.linalg.slogdet``), ``expr`` the call, evaluated with the aliases of
:data:`verification.coverage.ALIASES` (``np``, ``sc`` = SciPy's own scipy.special,
``ds``/``dl``/``dst``/``dsig``/``dint`` = ``dualad.scipy.special``/``.linalg``/``.stats``/
``.signal``/``.integrate``, ``dnp`` = ``dualad.numpy``) and the :data:`SAMPLES`, ``wrt``
the sample names the derivative is taken in (the others are plain values), ``claim``
what both modes must give (or ``"forward/reverse"``): ``ok`` (a nonzero derivative
matching finite differences), ``zero`` (zero derivative by design), ``raises`` (a clear
error naming the function) or ``FAILS`` (a known, reported problem: the test fails once
it is fixed, to have the claim updated).
"""
from __future__ import annotations

__all__ = ["GROUPS", "SAMPLES", "SAMPLE_NOTES", "Entry", "row", "rows", "AUTOGRAD_MODULES",
           "AUTOGRAD_RENAMED", "AUTOGRAD_INTERNAL", "qualified_name", "AUTOGRAD_SNAPSHOT",
           "autograd_snapshot", "autograd_functions", "HEADER", "PRIMITIVES_NOTE"]

from dataclasses import dataclass

import numpy as np
import scipy.linalg

GROUPS = ("numpy", "numpy.linalg", "numpy.fft", "scipy.special", "scipy.linalg",
          "scipy.stats", "scipy.signal", "scipy.integrate")

_A = np.array([[2.0, 0.3, -0.4], [0.5, 1.5, 0.2], [-0.3, 0.6, 1.1]])
_S = np.array([[2.0, 0.5, 0.3], [0.5, 1.5, -0.2], [0.3, -0.2, 1.0]])
_a0 = np.asarray
SAMPLES = {   # float64, small, inside every domain they are used in, no ties, off kinks
    "x": np.array([0.3, 0.55, 0.8]), "y": np.array([0.45, 0.7, 0.25]),
    "z": np.array([-0.7, 0.4, 1.3]), "z0": np.array([-0.7, 0.0, 1.3]),
    "w": np.array([-2.0, -1.1, -0.4]), "big": np.array([1.3, 1.7, 2.4]),
    "q": np.array([0.35, 0.62, 0.74]), "xn": np.array([0.3, np.nan, 0.8, 0.55]),
    "u": np.array([[0.3, 0.9, 0.5], [0.7, 0.2, 0.6]]), "a": _a0(0.7), "c": _a0(1.6),
    "b": np.array([0.4, -0.2, 0.9]), "A": _A, "S": _S,
    "B": np.array([[0.4, -0.3], [0.8, 0.5], [-0.6, 0.9]]),
    "T": np.array([[1.5, 0.0, 0.0], [0.4, 2.0, 0.0], [-0.3, 0.7, 1.2]]),
    "E": np.array([[0.1, -0.2, 0.3], [0.05, 0.2, -0.1], [0.3, 0.1, 0.15]]),
    "U": np.linalg.cholesky(_S).T, "LU": scipy.linalg.lu_factor(_A)[0],
    "piv": scipy.linalg.lu_factor(_A)[1],
    "ab": np.array([[0.0, 0.3, 0.2], [2.0, 1.5, 1.1], [0.5, 0.6, 0.0]]),
    "abh": np.array([[0.0, 0.5, -0.2], [2.0, 1.5, 1.0]]),
    "kern": np.array([[0.5, -0.2], [0.3, 0.8]]),
    "k": np.array([0, 2, 0]), "n": np.array([0, 1, 2]), "nu": np.array([0.0, 1.0, 2.5]),
    "sa": np.array([0.5, 1.0, 2.5]), "sb": np.array([3.0, 0.7, 1.0]),
    "df": np.array([1.0, 2.5, 4.0]), "ex": np.array([1.5, 2.0, 3.0]),
    "loc": _a0(0.2), "scale": _a0(1.3), "shape": _a0(1.7), "shape2": _a0(2.3),
    "dof": _a0(3.5), "mu": _a0(2.2), "counts": np.array([0, 2, 5]),
    "mean": np.array([0.1, -0.3, 0.2]), "p2": np.array([0.2, 0.5]),
    "alpha": np.array([1.5, 2.0, 0.8]), "tgrid": np.array([0.0, 0.5, 1.0]),
}
SAMPLE_NOTES = {"U": "np.linalg.cholesky(S).T", "LU": "scipy.linalg.lu_factor(A)[0]",
                "piv": "scipy.linalg.lu_factor(A)[1]"}


@dataclass(frozen=True)
class Entry:
    name: str                 # as users know it: numpy.linalg.slogdet
    expr: str                 # the sample call
    wrt: tuple                # sample names differentiated in
    claim: str = "ok"         # ok | zero | raises | FAILS (known) (or "forward/reverse")
    ref: str | None = None    # SciPy's value for a dualad.scipy row ("" = none; None = derived)

    @property
    def group(self):
        return max((g for g in GROUPS if self.name.startswith(g + ".")), key=len)

    @property
    def claims(self):
        parts = self.claim.split("/")
        return (parts[0], parts[-1])


ENTRIES: list[Entry] = []


def row(name, expr, wrt="x", claim="ok", ref=None):
    ENTRIES.append(Entry(name, expr, tuple(w.strip() for w in wrt.split(",") if w.strip()),
                         claim, ref))


def rows(module, template, names, wrt="x", claim="ok"):
    """One row per name: ``template`` with ``{}`` the name (``np.{}(x)``)."""
    alias = {"numpy": "np", "numpy.linalg": "np.linalg", "numpy.fft": "np.fft",
             "scipy.special": "sc"}[module]
    for name in names.split():
        row(f"{module}.{name}", template.format(f"{alias}.{name}"), wrt, claim)


# --- numpy ----------------------------------------------------------------------------------
rows("numpy", "{}(x)", "sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arctanh exp "
     "exp2 expm1 log log2 log10 log1p sqrt cbrt square reciprocal absolute fabs negative "
     "positive deg2rad radians rad2deg degrees conjugate sinc i0 real real_if_close "
     "nan_to_num frexp sum prod mean var std max min amax amin ptp median cumsum cumprod "
     "cumulative_sum cumulative_prod diff ediff1d gradient trapezoid sort flip copy ravel "
     "atleast_1d atleast_2d atleast_3d diag diagflat vander trim_zeros polyder polyint")
rows("numpy", "{}(y)", "unique unique_values unique_all unique_counts unique_inverse", "y")
rows("numpy", "{}(big)", "arccosh", "big")
rows("numpy", "{}(z)", "modf unwrap", "z")
rows("numpy", "{}(xn)", "nansum nanprod nanmean nanvar nanstd nanmax nanmin nancumsum "
     "nancumprod nanmedian", "xn")
rows("numpy", "{}(x, y)", "add subtract multiply divide true_divide power float_power arctan2 "
     "hypot logaddexp logaddexp2 maximum minimum fmax fmin remainder fmod divmod copysign "
     "inner outer kron cross dot vdot vecdot convolve correlate polyadd polysub polymul "
     "polyval append", "x, y")
rows("numpy", "{}(z)", "sign floor ceil trunc rint fix round around spacing signbit isnan "
     "isinf isfinite isposinf isneginf logical_not argmax argmin argsort nonzero argwhere "
     "flatnonzero all any count_nonzero iscomplex isreal iscomplexobj isrealobj shape ndim "
     "size zeros_like ones_like imag angle result_type nanargmax nanargmin",
     "z", "zero")
rows("numpy", "{}(x, y)", "greater greater_equal less less_equal equal not_equal logical_and "
     "logical_or logical_xor floor_divide isclose allclose array_equal array_equiv isin "
     "searchsorted shares_memory may_share_memory", "x, y", "zero")
for name, expr, wrt in [
        ("ldexp", "np.ldexp(x, n)", "x"), ("heaviside", "np.heaviside(z0, y)", "y"),
        ("clip", "np.clip(z, -0.5, 1.0)", "z"), ("clip", "np.clip(z, min=-0.5, max=1.0)", "z"), ("where", "np.where(z > 0, x, y)", "x, y"),
        ("select", "np.select([z < 0, z >= 0], [x, y])", "x, y"),
        ("choose", "np.choose(np.array([0, 1, 0]), [x, y])", "x, y"),
        ("piecewise", "np.piecewise(z, [z < 0, z >= 0], [np.sin, np.cos])", "z"),
        ("extract", "np.extract(x > 0.5, x)", "x"),
        ("compress", "np.compress([True, False, True], x)", "x"),
        ("take", "np.take(x, k)", "x"), ("take_along_axis", "np.take_along_axis(x, k, 0)", "x"),
        ("repeat", "np.repeat(x, 2)", "x"), ("tile", "np.tile(x, 2)", "x"),
        ("resize", "np.resize(x, 5)", "x"), ("pad", "np.pad(x, 1)", "x"),
        ("roll", "np.roll(x, 1)", "x"), ("rot90", "np.rot90(u)", "u"),
        ("fliplr", "np.fliplr(u)", "u"), ("flipud", "np.flipud(u)", "u"),
        ("rollaxis", "np.rollaxis(u, 1)", "u"), ("moveaxis", "np.moveaxis(u, 0, 1)", "u"),
        ("swapaxes", "np.swapaxes(u, 0, 1)", "u"), ("transpose", "np.transpose(u)", "u"),
        ("matrix_transpose", "np.matrix_transpose(u)", "u"),
        ("reshape", "np.reshape(u, (3, 2))", "u"), ("squeeze", "np.squeeze(x[None])", "x"),
        ("expand_dims", "np.expand_dims(x, 0)", "x"),
        ("broadcast_to", "np.broadcast_to(x, (2, 3))", "x"),
        ("broadcast_arrays", "np.broadcast_arrays(x, u)", "x, u"),
        ("split", "np.split(x, 3)", "x"), ("array_split", "np.array_split(x, 2)", "x"),
        ("hsplit", "np.hsplit(u, 3)", "u"), ("vsplit", "np.vsplit(u, 2)", "u"),
        ("dsplit", "np.dsplit(np.reshape(u, (1, 2, 3)), 3)", "u"),
        ("unstack", "np.unstack(u)", "u"),
        ("concatenate", "np.concatenate([x, y])", "x, y"), ("concat", "np.concat([x, y])", "x, y"),
        ("permute_dims", "np.permute_dims(u, (1, 0))", "u"), ("mod", "np.mod(x, y)", "x, y"),
        ("stack", "np.stack([x, y])", "x, y"), ("hstack", "np.hstack([x, y])", "x, y"),
        ("vstack", "np.vstack([x, y])", "x, y"), ("dstack", "np.dstack([x, y])", "x, y"),
        ("column_stack", "np.column_stack([x, y])", "x, y"),
        ("block", "np.block([x, y])", "x, y"),
        ("insert", "np.insert(x, 1, a)", "x, a"), ("delete", "np.delete(x, 1)", "x"),
        ("diagonal", "np.diagonal(A)", "A"), ("trace", "np.trace(A)", "A"),
        ("triu", "np.triu(A)", "A"), ("tril", "np.tril(A)", "A"),
        ("matmul", "np.matmul(A, B)", "A, B"), ("matvec", "np.matvec(A, b)", "A, b"),
        ("vecmat", "np.vecmat(b, A)", "b, A"), ("tensordot", "np.tensordot(A, B, 1)", "A, B"),
        ("einsum", "np.einsum('ij,j->i', A, b)", "A, b"),
        ("average", "np.average(x, weights=y)", "x, y"),
        ("percentile", "np.percentile(x, 30)", "x"), ("quantile", "np.quantile(x, 0.3)", "x"),
        ("nanpercentile", "np.nanpercentile(xn, 30)", "xn"),
        ("nanquantile", "np.nanquantile(xn, 0.3)", "xn"),
        ("partition", "np.partition(y, 1)", "y"),
        ("linspace", "np.linspace(a, c, 4)", "a, c"), ("logspace", "np.logspace(a, c, 4)", "a, c"),
        ("geomspace", "np.geomspace(a, c, 4)", "a, c"),
        ("meshgrid", "np.meshgrid(x, y)", "x, y"), ("interp", "np.interp(q, x, b)", "q, x, b"),
        ("bincount", "np.bincount(k, weights=x)", "x"), ("cov", "np.cov(u)", "u"),
        ("corrcoef", "np.corrcoef(u)", "u"),
        ("apply_along_axis", "np.apply_along_axis(np.cumsum, 1, u)", "u"),
        ("apply_over_axes", "np.apply_over_axes(np.sum, u, [0])", "u"),
        ("astype", "np.astype(x, np.float64)", "x"), ("full", "dnp.full((2, 2), a)", "a"),
        ("array", "dnp.array([a, c])", "a, c"), ("ndarray.__getitem__", "u[1, ::2]", "u")]:
    row(f"numpy.{name}", expr, wrt)
for name, expr, wrt in [
        ("full_like", "np.full_like(x, 0.5)", "x"),
        ("digitize", "np.digitize(y, x)", "y"), ("argpartition", "np.argpartition(y, 1)", "y"),
        ("diag_indices_from", "np.diag_indices_from(A)", "A"),
        ("tril_indices_from", "np.tril_indices_from(A)", "A"),
        ("triu_indices_from", "np.triu_indices_from(A)", "A"),
        ("einsum_path", "np.einsum_path('ij,j->i', A, b)", "A, b"),
        ("empty_like", "np.empty_like(z).shape", "z")]:   # its values are uninitialized
    row(f"numpy.{name}", expr, wrt, "zero")
row("numpy.full_like", "np.full_like(x, a)", "x, a")
# NumPy runs its own full/full_like for a traced fill value (they are not dispatched on
# it) and would fill a plain array: an error naming the call and dualad.numpy.full
row("numpy.full_like", "np.full_like(x, a)", "a", "raises")
row("numpy.full", "np.full((2, 2), a, dtype=float)", "a", "raises")
row("numpy.copyto", "np.copyto(np.zeros(3), x)", "x", "raises")   # in place into a plain array
row("numpy.einsum", "np.einsum('ii->i', A)", "A")   # repeated subscripts: a diagonal
row("numpy.einsum", "np.einsum('ij,jj->i', B, A[:2, :2])", "B, A")
row("numpy.row_stack", "np.row_stack([x, y])", "x, y")   # NumPy 2 passes dtype=, casting=
row("numpy.lexsort", "np.lexsort((x, y))", "x, y", "zero")   # keys in a tuple
# known failures (reported) claim FAILS until fixed, then the test asks for the new claim.
# np.full without dtype= converts the fill value first (np.asarray): the traced value's
# __array__ names np.full (numpy_inplace.conversion_hint)
row("numpy.full", "np.full((2, 2), a)", "a", "raises")
row("numpy.histogram", "np.histogram(x)", "x", "raises")
row("numpy.nextafter", "np.nextafter(x, y)", "x, y", "raises")

# --- numpy.linalg, numpy.fft ------------------------------------------------------------------
rows("numpy.linalg", "{}(A)", "det slogdet inv eig eigvals qr cond norm matrix_norm trace "
     "diagonal", "A")
rows("numpy.linalg", "{}(S)", "cholesky eigh eigvalsh", "S")
rows("numpy.linalg", "{}(u)", "svdvals matrix_transpose", "u")
for name, expr, wrt in [
        ("solve", "np.linalg.solve(A, b)", "A, b"), ("lstsq", "np.linalg.lstsq(B, b)", "B, b"),
        ("pinv", "np.linalg.pinv(B)", "B"), ("svd", "np.linalg.svd(u, full_matrices=False)", "u"),
        ("matrix_power", "np.linalg.matrix_power(A, 3)", "A"),
        ("multi_dot", "np.linalg.multi_dot([A, A, B])", "A, B"),
        ("matmul", "np.linalg.matmul(A, B)", "A, B"), ("outer", "np.linalg.outer(x, y)", "x, y"),
        ("tensordot", "np.linalg.tensordot(A, B, axes=1)", "A, B"),
        ("tensorinv", "np.linalg.tensorinv(A, ind=1)", "A"),
        ("tensorsolve", "np.linalg.tensorsolve(A, b)", "A, b"),
        ("vecdot", "np.linalg.vecdot(x, y)", "x, y"),
        ("vector_norm", "np.linalg.vector_norm(z)", "z")]:
    row(f"numpy.linalg.{name}", expr, wrt)
row("numpy.linalg.matrix_rank", "np.linalg.matrix_rank(A)", "A", "zero")
# hermitian=True: NumPy reads the lower triangle only (eigh); so do the rules, so an entry
# above the diagonal has derivative 0. S - 1.6 I is indefinite (singular values |λ|).
row("numpy.linalg.svd", "np.linalg.svd(S, hermitian=True)", "S")
row("numpy.linalg.svd", "np.linalg.svd(S - 1.6 * np.eye(3), hermitian=True, compute_uv=False)",
    "S")
row("numpy.linalg.pinv", "np.linalg.pinv(S - 1.6 * np.eye(3), hermitian=True)", "S")
rows("numpy.fft", "{}(x)", "fft ifft rfft irfft hfft ihfft fftshift ifftshift")
rows("numpy.fft", "{}(u)", "fft2 ifft2 fftn ifftn rfft2 irfft2 rfftn irfftn", "u")

# --- scipy.special: SciPy's own ufuncs on traced values (and dualad.scipy.special) -----------
rows("scipy.special", "{}(x)", "gammaln loggamma digamma psi gamma rgamma erf erfc erfcx erfi "
     "dawsn erfinv erfcinv ndtr log_ndtr ndtri expit logit log_expit entr j0 j1 y0 y1 i0 i1 "
     "i0e i1e k0 k1 k0e k1e expm1 log1p exp2 exp10 cbrt")
rows("scipy.special", "{}(w)", "ndtri_exp", "w")
rows("scipy.special", "{}(x, y)", "beta betaln xlogy xlog1py rel_entr kl_div", "x, y")
rows("scipy.special", "{}(nu, x)", "jv yv iv ive kv kve")
rows("scipy.special", "{}(n, x)", "jn yn")
rows("scipy.special", "{}(sa, x)", "gammainc gammaincc gammaincinv gammainccinv")
rows("scipy.special", "{}(sa, sb, x)", "betainc betaincc betaincinv")
rows("scipy.special", "{}(df, z)", "stdtr", "df, z")
rows("scipy.special", "{}(ex, x)", "zeta", "ex, x")
rows("scipy.special", "{}(z)", "gammasgn", "z", "zero")
rows("scipy.special", "{}(big)", "zeta", "big")                    # Riemann
rows("scipy.special", "{}(z0)", "zeta", "z0")                      # Riemann, x < 1
rows("scipy.special", "{}(x)", "lambertw spence", "x")
rows("scipy.special", "{}(z)", "lambertw", "z")                    # complex W for x < -1/e
rows("scipy.special", "{}(x, a)", "owens_t boxcox boxcox1p inv_boxcox inv_boxcox1p", "x, a")
rows("scipy.special", "{}(z, a)", "owens_t", "z, a")
rows("scipy.special", "{}(df, x)", "stdtrit", "df, x")
for name, expr, wrt in [   # SciPy's Python functions do not dispatch: dualad.scipy.special
        ("logsumexp", "ds.logsumexp(x)", "x"), ("softmax", "ds.softmax(x)", "x"),
        ("log_softmax", "ds.log_softmax(x)", "x"), ("polygamma", "ds.polygamma(n, x)", "x"),
        ("multigammaln", "ds.multigammaln(big, 2)", "big")]:
    row(f"scipy.special.{name}", expr, wrt)

# --- scipy.linalg (dualad.scipy.linalg) ---------------------------------------------------------
for name, expr, wrt, *ref in [
        ("inv", "dl.inv(A)", "A"), ("det", "dl.det(A)", "A"), ("solve", "dl.solve(A, b)", "A, b"),
        ("solve_triangular", "dl.solve_triangular(T, b, lower=True)", "T, b"),
        ("cholesky", "dl.cholesky(S)", "S"),
        ("cho_factor", "dl.cho_factor(S)", "S", "np.triu(sl.cho_factor(S)[0])"),
        ("cho_solve", "dl.cho_solve((U, False), b)", "U, b"),
        ("lu", "dl.lu(A)", "A"), ("lu_factor", "dl.lu_factor(A)", "A"),
        ("lu_solve", "dl.lu_solve((LU, piv), b)", "LU, b"),
        ("eigh", "dl.eigh(S)", "S", "sl.eigh(S, driver='evd')"),
        ("eigvalsh", "dl.eigvalsh(S)", "S"),
        ("svd", "dl.svd(u, full_matrices=False)", "u"), ("svdvals", "dl.svdvals(u)", "u"),
        ("qr", "dl.qr(A)", "A"), ("pinv", "dl.pinv(B)", "B"), ("norm", "dl.norm(A)", "A"),
        ("expm", "dl.expm(A)", "A"), ("expm_frechet", "dl.expm_frechet(A, E)", "A, E"),
        ("logm", "dl.logm(S)", "S"), ("sqrtm", "dl.sqrtm(S)", "S"),
        ("solve_sylvester", "dl.solve_sylvester(A, S, E)", "A, S, E"),
        ("solve_banded", "dl.solve_banded((1, 1), ab, b)", "ab, b"),
        ("solveh_banded", "dl.solveh_banded(abh, b)", "abh, b"),
        ("toeplitz", "dl.toeplitz(x, y)", "x, y"), ("circulant", "dl.circulant(x)", "x"),
        ("hankel", "dl.hankel(x, y)", "x, y"), ("block_diag", "dl.block_diag(A, B)", "A, B"),
        ("solve_continuous_lyapunov", "dl.solve_continuous_lyapunov(A, E)", "A, E"),
        ("solve_discrete_lyapunov", "dl.solve_discrete_lyapunov(A / 4, E)", "A, E"),
        ("solve_lyapunov", "dl.solve_lyapunov(A, E)", "A, E"),
        ("cosm", "dl.cosm(A)", "A"), ("sinm", "dl.sinm(A)", "A"),
        ("tanm", "dl.tanm(A / 4)", "A"), ("coshm", "dl.coshm(A)", "A"),
        ("sinhm", "dl.sinhm(A)", "A"), ("tanhm", "dl.tanhm(A)", "A"),
        ("fractional_matrix_power", "dl.fractional_matrix_power(S, 0.5)", "S"),
        ("polar", "dl.polar(A)", "A")]:
    row(f"scipy.linalg.{name}", expr, wrt, ref=ref[0] if ref else None)

# --- scipy.stats (dualad.scipy.stats) ------------------------------------------------------------
_SHAPES = {"norm": "", "cauchy": "", "logistic": "", "laplace": "", "expon": "",
           "uniform": "", "t": "dof", "gamma": "shape", "chi2": "dof", "beta": "shape, shape2"}
for dist, shapes in _SHAPES.items():
    for method in "logpdf pdf cdf logcdf sf logsf ppf isf".split():
        point = "q" if method in ("ppf", "isf") else "x"
        args = ", ".join(filter(None, [point, shapes, "loc", "scale"]))
        wrt = args if method in ("logpdf", "pdf") or dist == "t" else f"{point}, loc, scale"
        row(f"scipy.stats.{dist}.{method}", f"dst.{dist}.{method}({args})", wrt)
for method in "logpmf pmf cdf logcdf sf logsf".split():
    row(f"scipy.stats.poisson.{method}", f"dst.poisson.{method}(counts, mu)", "mu")
for method in ("logpdf", "pdf"):
    row(f"scipy.stats.multivariate_normal.{method}",
        f"dst.multivariate_normal.{method}(b, mean, S)", "b, mean, S")
    row(f"scipy.stats.dirichlet.{method}", f"dst.dirichlet.{method}(p2, alpha)", "p2, alpha")
row("scipy.stats.multivariate_normal.entropy", "dst.multivariate_normal.entropy(mean, S)", "S")
row("scipy.stats.dirichlet.rvs", "dst.dirichlet.rvs(alpha, random_state=0)", "alpha", "raises")
for dist, shapes in _SHAPES.items():   # moments (dualad/scipy/stats/_moments.py)
    args = ", ".join(filter(None, [shapes, "loc", "scale"]))
    for method in "mean var std entropy median".split():
        closed = method != "median" or dist in ("norm", "t", "cauchy", "logistic", "laplace",
                                                "expon", "uniform")
        wrt = args if closed else "loc, scale"
        if dist == "cauchy" and method in ("mean", "var", "std"):   # nan, as SciPy: constant
            row(f"scipy.stats.cauchy.{method}", f"np.nan_to_num(dst.cauchy.{method}({args}))",
                wrt, "zero")
            continue
        row(f"scipy.stats.{dist}.{method}", f"dst.{dist}.{method}({args})", wrt)
for method in ("mean", "var", "std"):
    row(f"scipy.stats.poisson.{method}", f"dst.poisson.{method}(mu)", "mu")
row("scipy.stats.poisson.entropy", "dst.poisson.entropy(mu)", "mu", "raises")
for method in ("mean", "var", "entropy"):
    row(f"scipy.stats.dirichlet.{method}", f"dst.dirichlet.{method}(alpha)", "alpha")

# --- scipy.signal, scipy.integrate ---------------------------------------------------------------
for name in ("convolve", "correlate", "fftconvolve", "oaconvolve"):
    row(f"scipy.signal.{name}", f"dsig.{name}(x, y)", "x, y")
for name in ("convolve2d", "correlate2d"):
    row(f"scipy.signal.{name}", f"dsig.{name}(u, kern)", "u, kern")
row("scipy.signal.lfilter", "dsig.lfilter(b, y, x)", "b, y, x")
row("scipy.signal.lfilter_zi", "dsig.lfilter_zi(b, y)", "b, y")
row("scipy.signal.filtfilt", "dsig.filtfilt(b, y, x, padlen=1)", "b, y, x")
row("scipy.signal.sosfilt", "dsig.sosfilt(np.concatenate([b, [1.0], y[1:]])[None], x)",
    "b, y, x")
row("scipy.signal.sosfilt_zi", "dsig.sosfilt_zi(np.concatenate([b, y])[None])", "b, y")
row("scipy.signal.sosfiltfilt",
    "dsig.sosfiltfilt(np.concatenate([b, [1.0], y[1:]])[None], x, padlen=1)", "b, y, x")
row("scipy.integrate.odeint", "dint.odeint(lambda y, t, r: -r * y, x, tgrid, (a,))", "x, a")
row("scipy.integrate.quad", "dint.quad(lambda t, r: np.exp(-r * t), 0.0, c, args=(a,))[0]",
    "a, c")
row("scipy.integrate.solve_ivp", "dint.solve_ivp(lambda t, y, r: -r * y, (0.0, 1.0), x, "
    "t_eval=tgrid, args=(a,), rtol=1e-10, atol=1e-12).y", "x, a")
row("scipy.integrate.quad_vec",
    "dint.quad_vec(lambda t, r: np.exp(-r * t) * b, 0.0, c, args=(a,))[0]", "a, c")
row("scipy.integrate.trapezoid", "dint.trapezoid(y, x)", "x, y")
row("scipy.integrate.simpson", "dint.simpson(y, x=x)", "y")

# --- HIPS autograd's list: every function it differentiates must have a row -------------------
AUTOGRAD_MODULES = ("autograd.numpy", "autograd.numpy.linalg", "autograd.numpy.fft",
                    "autograd.scipy.special", "autograd.scipy.linalg", "autograd.scipy.signal",
                    "autograd.scipy.integrate", "autograd.scipy.stats")
AUTOGRAD_RENAMED = {   # autograd's wrapper -> the function users call
    "autograd.numpy.numpy_boxes.ArrayBox.__getitem__": "numpy.ndarray.__getitem__",
    "autograd.numpy.numpy_wrapper.array_from_args": "numpy.array",
    "autograd.numpy.numpy_wrapper._array_from_scalar_or_array": "numpy.array",
    "autograd.numpy.numpy_wrapper.concatenate_args": "numpy.concatenate",
    "autograd.scipy.signal.convolve": "scipy.signal.convolve",
}
AUTOGRAD_INTERNAL = (   # primitives that are helpers inside autograd's own rules
    "autograd.builtins.",                          # tuples/lists/dicts of boxes
    "autograd.core.",                              # vector-space arithmetic of the sweep
    "autograd.numpy.numpy_vjps.",                  # dot/tensordot adjoints, untake
    "autograd.numpy.fft.truncate_pad",             # inside its FFT rules
    "autograd.numpy.numpy_wrapper.make_diagonal",  # the transpose of diagonal (diag_embed)
)


def qualified_name(fn):
    """The name users know a NumPy or scipy.special callable by (``numpy.linalg.slogdet``)."""
    import scipy.special
    name, mod = fn.__name__, getattr(fn, "__module__", None) or ""
    if not mod and getattr(scipy.special, name, None) is fn:
        return f"scipy.special.{name}"
    sub = next((s for s in ("numpy.linalg", "numpy.fft") if mod.startswith(s)), "numpy")
    return f"{sub}.{name}"


AUTOGRAD_SNAPSHOT = "autograd_functions.txt"


def autograd_snapshot():
    """The names in ``verification/autograd_functions.txt``: :func:`autograd_functions` as
    it was when last written (the file's header names the autograd version)."""
    from pathlib import Path
    text = (Path(__file__).with_name(AUTOGRAD_SNAPSHOT)).read_text(encoding="utf-8")
    return {line.strip() for line in text.splitlines()
            if line.strip() and not line.startswith("#")}


def autograd_functions():
    """Every function HIPS autograd differentiates (its primitives, by the names users
    know), without the helpers inside its own rules. ImportError without autograd."""
    import importlib
    import pkgutil
    import types
    import autograd.core
    import autograd.scipy.stats
    for mod in AUTOGRAD_MODULES:
        importlib.import_module(mod)
    for info in pkgutil.iter_modules(autograd.scipy.stats.__path__):
        importlib.import_module(f"autograd.scipy.stats.{info.name}")
    names = set()
    for prim in set(autograd.core.primitive_vjps) | set(autograd.core.primitive_jvps):
        fn = prim.fun
        owner = getattr(fn, "__self__", None)
        if owner is not None and not isinstance(owner, types.ModuleType):   # scipy.stats
            dist = getattr(owner, "name", None) or type(owner).__name__.removesuffix("_gen")
            names.add(f"scipy.stats.{dist}.{fn.__name__}")
            continue
        mod = getattr(fn, "__module__", None)
        key = f"{mod}.{getattr(fn, '__qualname__', fn.__name__)}"
        if key in AUTOGRAD_RENAMED:
            names.add(AUTOGRAD_RENAMED[key])
        elif key.startswith(AUTOGRAD_INTERNAL):
            continue
        elif mod is None or mod.startswith("numpy"):
            names.add(qualified_name(fn))
        elif mod.startswith("scipy."):
            names.add(f"scipy.{mod.split('.')[1]}.{fn.__name__}")
        else:
            raise ValueError(f"autograd primitive {key} is unknown to the coverage table: "
                             f"name it in AUTOGRAD_RENAMED or AUTOGRAD_INTERNAL")
    return names


# --- the document's prose --------------------------------------------------------------------
HEADER = """
# Coverage: function, forward, reverse, SymPy oracle

<!-- Generated by `python -m dualad.verification.coverage --write docs/coverage.md`. Do not edit:
tests/verification/test_coverage.py fails when this file differs from what the generator
writes, or when a row does not give what it claims. -->

Every row below is **measured**, not written: `verification/coverage.py` runs the sample
call through dualad and reports what happened. The rows (`verification/coverage_table.py`)
are every function HIPS autograd differentiates (the test checks this against autograd's
primitive list) and the rest of dualad's surface (every NumPy callable its front end
dispatches, every function of `dualad.scipy.*`; the test checks this too), a few of them
twice to show a second behaviour.

How each column is measured:

- **sample call**: evaluated with `np` = numpy, `sc` = SciPy's own `scipy.special` (its
  ufuncs dispatch on traced values; `= ds.f(...)`: `dualad.scipy.special.f` was run too
  and agrees), `ds`, `dl`, `dst`, `dsig`, `dint` = `dualad.scipy.special`, `.linalg`,
  `.stats`, `.signal`, `.integrate`, `dnp` = `dualad.numpy`, and the float64 sample inputs
  below. **w.r.t.**: the inputs differentiated; the others are plain values.
- **forward**: `dualad.jvp` in vector mode, every basis direction of the inputs in one
  sweep; **reverse**: `dualad.vjp`, a batch of basis cotangents in one backward sweep. Both
  Jacobians are compared with central differences of the plain call
  (`verification.numeric`; Richardson extrapolation decides a disagreement). Outputs are
  flattened, complex ones as [Re, Im]; integer and boolean ones are values only. The traced
  value must equal the plain value, and a `dualad.scipy` function's value SciPy's.
  Verdicts: `ok` (a nonzero derivative that matches); `zero` (identically zero, and so are
  the differences: zero derivative by design, or a value-only function); `raises` (not
  differentiable: a clear error naming the function); `pending` (not in dualad yet: the
  row is written against SciPy's signature); **FAILS** (a wrong or dropped derivative, or
  an unclear error). A row that fails is a known, reported problem: the test accepts it
  only while the row says so, and fails as soon as the function is fixed.
- **SymPy**: the primitives the call reaches (recorded by a forward sweep, last column)
  and their SymPy status (the registry table at the end): `oracle` when every one of them
  has its JVP and VJP rules compared with `sympy.diff` (by the registry's rule checker,
  `check_registry`, or here), `oracle (SciPy-evaluated)` when SciPy had to evaluate SymPy's
  special functions for at least one of them (NumPy has no `erfinv`, `ndtri`, ...),
  `partial (no SymPy: ...)` naming the primitives without a translation, `—` when none
  has one, `n/a` when no differentiable primitive is reached.
- **keywords** (NumPy, `numpy.linalg`, `numpy.fft` and `scipy.special` rows): every keyword
  NumPy (or SciPy) documents for the function that the sample call does not pass, added
  to it with a sample value NumPy accepts there (`verification/coverage_keywords.py`) and
  measured as the row is (the traced value against NumPy's with that keyword, both
  Jacobians against differences). Listed first, those that work; `raises:` those that
  raise a clear error naming the keyword (or, on a row that raises anyway, the
  function); `untried:` those with no sample value NumPy accepts for this call (e.g.
  `order=` of structured arrays); `RAW:` an error that does not name the keyword (Python's
  "unexpected keyword argument" included) and `FAILS:` a wrong value or derivative are
  defects. `out=` is left out (in-place updates); a ufunc's `where=` is only run traced
  (NumPy leaves the masked entries uninitialized, so dualad raises: see
  [numpy_coverage.md](numpy_coverage.md#keywords)).

Under `dualad.jit`: every registered primitive traces once per signature and replays at
new values, and so do its JVP and VJP (the registry table's jit column, checked by
`check_registry`). A few front ends read values that decide their result, so each new value
traces again (every trace is right; past `max_traces` the call runs without jit, with a
`JitRetraceWarning`): `solve_ivp` without `t_eval`, with events or with dense output
(SciPy's solver runs on the values in the front end and fixes the output grid, the event
times or the interpolant you are given), the `optimize` solvers (`root`,
`fsolve`, `brentq` and its kin, `newton`, `minimize`, `least_squares`, `fixed_point`: SciPy's
iteration finds the solution from the values; its implicit derivative is recorded), a spline
or `interp1d` evaluated at traced points (each point's interval is looked up by value), and
`lu`/`lu_factor` and LU's derivatives only when the pivot order changes (the pivots are
guarded, not the matrix).

Conventions at kinks and what is not supported: [numpy_coverage.md](numpy_coverage.md);
domains, poles and stats: [special.md](special.md); complex numbers (the rows here use real
inputs): [complex.md](complex.md).

Sample inputs:
"""

PRIMITIVES_NOTE = """
Every primitive of the registry: the module that declares it, its JVP and VJP rules
(`linear rule`: linear in its differentiable arguments; `zero`: a zero-derivative
primitive), its SymPy status and how many rows above reach it. SymPy status: `oracle`
when the registry's rule checker (`check_registry`, run by `tests/dualad/core/test_registry.py`)
compares its rules with `sympy.diff`; `oracle (here)` when it has a translation that
checker does not reach (its samples are too large for the symbolic comparison), so the
forward and reverse rules on symbols are compared with `sympy.diff` here, at its smallest
sample; `oracle (here, SciPy-evaluated)` the same with SciPy evaluating SymPy's special
functions (the checker's numeric fallback uses NumPy only; `tests/dualad/ops/test_special.py`
runs the same comparison); `n/a (complex only)`: only complex samples (the oracle works
on real symbols); `—`: no SymPy translation. vmap: how `dualad.vmap` batches it (checked
against a Python loop over examples, with its JVP and VJP, by `check_registry`): `rule` a
batching rule declared beside the primitive, `derived` one vmap derives (elementwise
broadcasting, a linear primitive's `batched=` parameters), `loop` a loop over the examples
(correct, one call per example; docs/vmap.md says why), `rule, loops over k` a rule
that loops when argument k is batched. jit: how `dualad.jit` runs it (checked by
`check_registry`: `jit(f)`, `jit(jvp(f))`, `jit(vjp(f))` and `jvp`/`vjp` of `jit(f)` at a
second point against the un-jitted calls, `verification/jit.py`): `replays` each of them
traced once and replayed at new values; `re-traces` its derivatives read values that
decide them (the ODE adjoint's time grid, when the times are traced), so a new value is a
new program (`verification.jit.RETRACES` says why, per primitive).
"""
