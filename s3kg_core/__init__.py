"""S3KG Workbench core library: compare knowledge graphs, score LLM answers, explain failures.

The two entry points for scoring are :func:`s3kg_score` (one pair) and :class:`KGScorer`
(many pairs, every distinct string encoded once). This package never imports streamlit.
"""

from ._version import __version__
from .kg import KnowledgeGraph, Triple
from .scoring.result import ScoreResult, blend

__all__ = [
    "KnowledgeGraph",
    "ScoreResult",
    "Triple",
    "__version__",
    "blend",
]
