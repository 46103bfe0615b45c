"""Experiments: thin scripts over :mod:`s3kg_core.evaluation` that print tables of figures."""
