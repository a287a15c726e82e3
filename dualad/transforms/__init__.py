"""What users call (internal modules; the names are public in :mod:`dualad`).

- :mod:`.api` — ``grad``, ``value_and_grad``, ``jvp``, ``vjp``, ``hvp``, ``derivative``;
- :mod:`.custom` — ``@dualad.primitive`` and ``Function``; :mod:`.custom_jvp`,
  :mod:`.custom_vjp` — ``custom_jvp`` / ``custom_vjp`` (what they share: :mod:`.custom_rules`);
- :mod:`.stop` — ``stop_gradient``; :mod:`.checkpoint` — ``checkpoint``;
- :mod:`.scan` — loops; :mod:`.implicit` — ``custom_root``, ``custom_linear_solve``.

(``vmap`` and ``jit`` are their interpreters' entry points: :mod:`dualad.interpreters`.)
"""

__all__: list[str] = []
