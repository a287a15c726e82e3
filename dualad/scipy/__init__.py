"""SciPy functions with derivative rules: ``dualad.scipy.special``, ``.linalg``, ``.stats``.

SciPy's own functions do not dispatch on traced values (except scipy.special's
ufuncs, which do); call these instead.
"""
