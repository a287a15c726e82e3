"""Linear algebra: ``numpy.linalg`` and ``scipy.linalg``. :mod:`.basic` holds inv, solve,
det, cholesky, solve_triangular and the helpers the other modules share; decompositions
(:mod:`.decomp`, :mod:`.lu`), matrix functions (:mod:`.func`, :mod:`.func_extra`),
norms (:mod:`.norm`), matrix equations (:mod:`.equations`), banded solvers
(:mod:`.banded`), the adjugate (:mod:`.adjugate`).
"""
