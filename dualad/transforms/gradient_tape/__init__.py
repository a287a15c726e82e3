"""``dualad.GradientTape``: TensorFlow's tape, recorded and swept by dualad's one reverse engine.

- :mod:`.tape`: the :class:`GradientTape` users hold (watch, gradient, jacobian, ...);
- :mod:`.recording`: its trace, a reverse-mode trace that can pause, and the enclosing tapes;
- :mod:`.sweeps`: the sweeps of the engine it runs (gradients, Jacobians, batch Jacobians).
"""
from .tape import GradientTape

__all__ = ["GradientTape"]
