"""Each peer's best spelling of a derivative (bench/run.py, issue 32).

A peer often has several ways to write the same derivative, and which one is fastest
depends on the shape and on the library's version. A person who knows the library picks by
shape (forward mode for a tall Jacobian, reverse for a wide one) and then keeps whichever
runs faster. :func:`fastest` does that at build time: it checks the spellings agree, times
them interleaved for a moment, keeps the fastest and says on the row which one it kept and
what each took, so a table never charges a peer for a slow spelling it would not use.

The PyTorch spellings are ``torch.func`` (``jacfwd``, ``jacrev``, ``hessian``, ``jvp`` and
``vjp`` of ``grad``) next to the older ``torch.autograd.functional`` ones
(``vectorize=True``) that the suite used before issue 32; the older one is kept only where
it measures faster. Peers are imported inside the builders: a missing peer skips its column.
"""
from __future__ import annotations

from _results import agree
from _timing import fmt, interleaved


def fastest(wl, peer, candidates, *, rounds=5, min_time=0.05):
    """The fastest of ``candidates`` (label -> zero-argument callable, the first being the
    spelling chosen by shape). Every candidate must agree with the first (rtol 1e-8, as
    run.py compares peers); one that raises or disagrees is dropped and named in the note.
    Sets ``wl.notes[peer]`` to the label kept and each candidate's median time."""
    fns, dropped, ref = {}, [], None
    for label, fn in candidates.items():
        try:
            out = fn()
        except Exception as exc:  # noqa: BLE001 - a spelling this version lacks
            dropped.append(f"{label} raised {type(exc).__name__}")
            continue
        if ref is None:
            ref = out
        elif not agree(out, ref, 1e-8)[0]:
            dropped.append(f"{label} disagreed")
            continue
        fns[label] = fn
    if not fns:
        raise RuntimeError(f"{wl.name}: no {peer} spelling ran ({'; '.join(dropped)})")
    times = ({k: t.median for k, t in interleaved(fns, rounds=rounds,
                                                   min_time=min_time).items()}
             if len(fns) > 1 else {})
    best = min(times, key=times.get) if times else next(iter(fns))
    seen = ", ".join(f"{k} {fmt(t)}" for k, t in times.items())
    wl.notes[peer] = (f"{peer}: {best}" + (f" (the fastest at build time of: {seen})"
                                           if seen else "")
                      + (f"; dropped: {'; '.join(dropped)}" if dropped else ""))
    return fns[best]


def torch_jacobian(wl, f, xt, n, m):
    """PyTorch's dense Jacobian of ``f`` at ``xt`` (an n -> m map): ``torch.func.jacfwd``
    when n < m, ``jacrev`` otherwise, the other one, and the pre-issue-32
    ``torch.autograd.functional.jacobian(vectorize=True)`` in the mode chosen by shape."""
    import torch
    from torch.func import jacfwd, jacrev
    forward = n < m
    first, other = (("jacfwd", jacfwd), ("jacrev", jacrev))[::1 if forward else -1]
    strategy = "forward-mode" if forward else "reverse-mode"
    jf, jo = first[1](f), other[1](f)
    return fastest(wl, "torch", {
        f"torch.func.{first[0]}": lambda: jf(xt),
        f"torch.func.{other[0]}": lambda: jo(xt),
        f"torch.autograd.functional.jacobian(vectorize=True, strategy={strategy!r})":
            lambda: torch.autograd.functional.jacobian(f, xt, vectorize=True,
                                                       strategy=strategy)})


def torch_hessian(wl, f, xt):
    """PyTorch's dense Hessian: ``torch.func.hessian`` (forward over reverse),
    ``jacrev(jacrev)`` and the pre-issue-32 ``torch.autograd.functional.hessian(
    vectorize=True)`` (reverse over reverse)."""
    import torch
    from torch.func import hessian, jacrev
    h, rr = hessian(f), jacrev(jacrev(f))
    return fastest(wl, "torch", {
        "torch.func.hessian": lambda: h(xt),
        "torch.func.jacrev(jacrev)": lambda: rr(xt),
        "torch.autograd.functional.hessian(vectorize=True)":
            lambda: torch.autograd.functional.hessian(f, xt, vectorize=True)})


def torch_hvp(wl, f, xt, vt):
    """PyTorch's Hessian-vector product: ``torch.func.jvp`` of ``grad`` (forward over
    reverse), ``vjp`` of ``grad`` (reverse over reverse; the Hessian is symmetric), and the
    pre-issue-32 ``torch.autograd.functional.hvp``."""
    import torch
    from torch.func import grad, jvp, vjp
    g = grad(f)
    return fastest(wl, "torch", {
        "torch.func.jvp(grad(f))": lambda: jvp(g, (xt,), (vt,))[1],
        "torch.func.vjp(grad(f))": lambda: vjp(g, xt)[1](vt)[0],
        "torch.autograd.functional.hvp": lambda: torch.autograd.functional.hvp(f, xt, vt)[1]})


def jax_scan_chain(body, n):
    """``x -> body(...body(x))``, ``n`` times, written with ``jax.lax.scan``: how a JAX user
    writes a long scalar recurrence (the Python loop, unrolled by ``jax.jit``, compiles for
    seconds at 10^4 steps and far longer at 10^5)."""
    import jax

    def chain(x):
        return jax.lax.scan(lambda c, _: (body(c), None), x, None, length=n)[0]
    return chain
