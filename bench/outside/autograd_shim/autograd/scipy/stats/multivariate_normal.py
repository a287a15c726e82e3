from autograd._mirror import fill
fill(globals(), "scipy.stats", "multivariate_normal")
