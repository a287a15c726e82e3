"""The oracles: SymPy, finite differences, complex step, rule checks (grows in a later issue)."""
