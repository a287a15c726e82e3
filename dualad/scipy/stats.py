"""dualad.scipy.stats (placeholder, filled by issue 4)."""
