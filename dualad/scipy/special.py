"""dualad.scipy.special (placeholder, filled by issue 4)."""
