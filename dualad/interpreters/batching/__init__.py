"""Batching: ``vmap`` (:mod:`.vmap`), its value type (:mod:`.tracer`), the derived
batching rules (:mod:`.rules`). Batched indexing is a primitive of the registry
(:mod:`dualad.ops.core.gather`)."""

__all__: list[str] = []
