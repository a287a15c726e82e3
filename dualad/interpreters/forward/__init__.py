"""Forward mode: dual numbers ``primal + tangent * eps`` (:mod:`.dual`)."""

__all__: list[str] = []
