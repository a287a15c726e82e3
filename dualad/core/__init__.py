"""The core every interpreter shares (internal: reach it through :mod:`dualad.extend`).

- :mod:`.primitive` — :class:`Primitive`, the registry, rule declaration (``defjvp``,
  ``defvjp``, ``defderiv``);
- :mod:`.tracer` — traces, levels and boxes: which interpreter sees a value;
- :mod:`.values` — reading traced values (``primal_value``) and the one query rules ask
  the current interpreter (``is_staged``, ...);
- :mod:`.batch_axes` — the one batch-axis convention (batch axes lead: an axis of the
  primal is ``axis + nb`` in its tangent; vmap's batch is axis 0 one level down);
- :mod:`.tree` — pytrees; :mod:`.partials` — elementwise partial derivatives;
- :mod:`.onehot`, :mod:`.scaled` — batch-value types (one-hot and scaled batches of
  tangents); :mod:`.boxes` — the base of value types that keep their primal one level down;
- :mod:`.array_types` — the ndarray subclasses (``np.matrix``, masked arrays) refused
  at the door;
- :mod:`.rules` — rule tables: each interpreter's rules, found by name;
- :mod:`.lazy`, :mod:`.families` — what loads on first use.

Nothing here imports an interpreter, the front end or a transformation
(``tests/test_rule_queries.py``). What the layers above hand the core (the rules derived from
partials and by transposition, the object-array hook) is installed in one place,
``dualad/__init__.py``, through :func:`.primitive.install_builders`.
"""

__all__: list[str] = []
