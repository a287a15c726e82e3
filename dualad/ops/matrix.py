"""(placeholder, filled by issue 4)"""
NUMPY_UFUNCS = {}
NUMPY_FUNCTIONS = {}
