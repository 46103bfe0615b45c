"""The pipeline's stages: import, collect, extract, score, tau, chained by ``run``, on Ray.

What the score stage stored is read back by :mod:`~s3kg_core.stages.scored` (signatures,
components re-blended, coverage); the analysis of stored runs is :mod:`s3kg_core.analysis`, the
report :mod:`s3kg_core.report` and the export :mod:`s3kg_core.export`.
"""
