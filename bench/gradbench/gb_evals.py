"""GradBench's evals as functions of a peer (bench/gradbench/gb_peers.py) and an eval's
``input`` (the JSON object of an ``evaluate`` message).

``build(module, function, peer, input)`` returns ``(call, post)``: ``call()`` runs the
function once on inputs already converted to the peer's arrays (what is timed; a jitted
peer's first call traces and compiles), ``post(result)`` turns its result into the JSON
output GradBench's eval expects (not timed, as in GradBench's ``wrap.multiple_runs``).

Functions (GradBench's names; the outputs as its eval READMEs say):
``lse`` primal/gradient, ``ode`` primal (the final state) / gradient (of its last entry),
``det`` primal/gradient (row-major), ``llsq`` primal/gradient, ``kmeans`` cost / dir
(gradient / Hessian diagonal, the diagonal as the JVP of the gradient along ones),
``gmm`` objective / jacobian ({alpha, mu, q, l}), ``lstm`` objective / jacobian
(main_params then extra_params, each row-major, concatenated).
``particle`` / ``saddle`` ``ff``, ``fr``, ``rf``, ``rr`` (nested derivatives: the final w,
r1 ++ r2; bench/gradbench/gb_nested.py), and ``reference``, not GradBench's: the solve with
its derivatives written by hand (the runner's reference time and check).
Not here: ``ba``, ``ht`` (their data files are not in the offline mirror), ``hello``.
"""
from __future__ import annotations

import numpy as np

import gb_nested as N
import gb_programs as P

FUNCTIONS = {"lse": ("primal", "gradient"), "ode": ("primal", "gradient"),
             "det": ("primal", "gradient"), "llsq": ("primal", "gradient"),
             "kmeans": ("cost", "dir"), "gmm": ("objective", "jacobian"),
             "lstm": ("objective", "jacobian"),
             "particle": ("reference", *N.VARIANTS), "saddle": ("reference", *N.VARIANTS)}
NESTED = ("particle", "saddle")
PRIMAL = {m: fs[0] for m, fs in FUNCTIONS.items()}
DERIVATIVE = {m: fs[1] for m, fs in FUNCTIONS.items()}


def _f64(a):
    return np.asarray(a, dtype=np.float64)


def _scalar(peer):
    return lambda r: float(peer.to_numpy(r))


def _vector(peer):
    return lambda r: np.ravel(peer.to_numpy(r)).tolist()


def _ode_state(peer, s):
    if peer.scan is not None:
        return P.ode_state_scan(peer.xp, s, peer.scan)
    return P.ode_state(peer.xp, s)


def _program(module, peer, inp):
    """(objective over peer.xp, its differentiated arguments as NumPy arrays,
    argnums, post of the derivative)."""
    xp = peer.xp
    if module == "lse":
        return P.lse_objective(xp), [_f64(inp["x"])], 0, _vector(peer)
    if module == "ode":
        state = _ode_state(peer, int(inp["s"]))
        return (lambda x: state(x)[-1]), [_f64(inp["x"])], 0, _vector(peer)
    if module == "det":
        ell = int(inp["ell"])
        return P.det_objective(xp), [_f64(inp["A"]).reshape(ell, ell)], 0, _vector(peer)
    if module == "llsq":
        x = _f64(inp["x"])
        return P.llsq_objective(xp, int(inp["n"]), x.size), [x], 0, _vector(peer)
    if module == "kmeans":
        return (P.kmeans_objective(xp, P.constant(xp, _f64(inp["points"]))),
                [_f64(inp["centroids"])], 0, lambda r: peer.to_numpy(r).tolist())
    if module == "gmm":
        d, k = int(inp["d"]), int(inp["k"])
        f = P.gmm_objective(xp, _f64(inp["x"]).reshape(-1, d), int(inp["m"]),
                            float(inp["gamma"]))
        args = [_f64(inp["alpha"]), _f64(inp["mu"]).reshape(k, d),
                _f64(inp["q"]).reshape(k, d), _f64(inp["l"]).reshape(k, d * (d - 1) // 2)]

        def post(r):
            a, mu, q, l = peer.to_numpy(r)
            return {"alpha": a.tolist(), "mu": mu.tolist(), "q": q.tolist(),
                    "l": l.tolist()}
        return f, args, (0, 1, 2, 3), post
    if module == "lstm":
        f = P.lstm_objective(xp, _f64(inp["state"]), _f64(inp["sequence"]), peer.scan)

        def post(r):
            return np.concatenate([np.ravel(g) for g in peer.to_numpy(r)]).tolist()
        return f, [_f64(inp["main_params"]), _f64(inp["extra_params"])], (0, 1), post
    raise KeyError(module)


def _nested(module, function, peer, inp):
    """(call, post) of a nested eval: the solver in Python calling the peer's objective and
    gradient (each under the peer's jit), or the peer's whole-program spelling."""
    if function == "reference":
        if module == "particle":
            return (lambda: N.particle_by_hand(inp["w"])), (lambda r: float(r[0]))
        return (lambda: N.saddle_by_hand(inp["start"])), (lambda r: r.tolist())
    whole = getattr(peer, "nested", None)
    if whole is not None:
        run = whole(module, function, inp)
    elif module == "particle":
        f, g = N.particle(peer, function)
        f, g = peer.jit(f), peer.jit(g)
        w0 = peer.arr([float(inp["w"])])

        def run():
            return N.argmin(peer.xp, f, g, w0)
    else:
        start = peer.arr(inp["start"])
        r1_cost, r1_grad, _ = N.saddle(peer, function, start)
        f, g = peer.jit(r1_cost), peer.jit(r1_grad)

        def run():
            return N.saddle_solve(peer, function, start, f, g)
    block = peer.block
    if module == "particle":
        return (lambda: block(run())), (lambda r: float(peer.to_numpy(r)[0]))
    return (lambda: block(run())), (lambda r: np.ravel(peer.to_numpy(r)).tolist())


def build(module, function, peer, inp):
    """(call, post) for ``module.function`` at ``inp`` on ``peer`` (see the module doc)."""
    if module not in FUNCTIONS or function not in FUNCTIONS[module]:
        raise KeyError(f"{module}.{function} is not implemented")
    if module in NESTED:
        return _nested(module, function, peer, inp)
    f, args, argnums, post_d = _program(module, peer, inp)
    args = [peer.arr(a) for a in args]
    if function == PRIMAL[module]:
        if module == "ode":
            fn, post = _ode_state(peer, int(inp["s"])), _vector(peer)
        else:
            fn, post = f, _scalar(peer)
    elif module == "kmeans":
        g = peer.fgrad(f)
        ones = peer.arr(np.ones(np.shape(args[0])))

        def fn(C):
            gval, hdiag = peer.jvp(g, (C,), (ones,))
            return gval / hdiag
        post = post_d
    else:
        fn, post = peer.grad(f, argnums), post_d
    run = peer.jit(fn)
    block = peer.block
    return (lambda: block(run(*args))), post
