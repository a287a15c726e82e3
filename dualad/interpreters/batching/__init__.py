"""Batching: ``vmap`` (:mod:`.vmap`), its value type (:mod:`.tracer`), the derived
batching rules (:mod:`.rules`) and batched indexing (:mod:`.gather`)."""

__all__: list[str] = []
