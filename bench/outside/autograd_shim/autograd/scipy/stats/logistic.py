from autograd._mirror import fill
fill(globals(), "scipy.stats", "logistic")
