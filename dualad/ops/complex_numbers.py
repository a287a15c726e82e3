"""(placeholder: complex parts and the complex conventions, filled by issue 4)"""
NUMPY_UFUNCS = {}
NUMPY_FUNCTIONS = {}
