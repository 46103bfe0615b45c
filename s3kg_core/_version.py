"""The one place that holds the package version and the scoring version."""

__all__ = ["SCORING_VERSION", "__version__"]

__version__ = "0.3.0"

SCORING_VERSION = "4"
"""The version of the scores: the ``version`` field of every score signature.

It changes exactly when a score for the same input (triples, texts, encoder, tau, K, mode,
normalisation) changes, and only then: ``tests/test_scoring_version.py`` keeps golden scores of
a fixed set of pairs in every mode under each scoring version and fails when a score moves while
this stayed, or when this moved while no score did. Signatures written before 0.2.0 hold the
package version there (``version:0.1.0``); they still parse, and tell apart from ``version:2``.
"""
