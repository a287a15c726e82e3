"""dualad.scipy.linalg (placeholder, filled by issue 4)."""
