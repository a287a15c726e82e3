"""``dualad.scipy.spatial``: ``distance`` (cdist, pdist, squareform and the metrics),
differentiable in the points (and in ``V``/``VI``/``w`` where SciPy takes them)."""
from . import distance  # noqa: F401
