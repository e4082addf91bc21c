"""Worked simulations built from :mod:`silicolab.sim` parts."""
