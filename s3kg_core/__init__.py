"""S3KG Workbench core library: compare knowledge graphs, score LLM answers, explain failures.

The two entry points for scoring are :func:`s3kg_score` (one pair) and :class:`KGScorer`
(many pairs, every distinct string encoded once). Importing the package loads no model and no
torch; encoders load on first use. This package never imports streamlit.

Examples
--------
>>> from s3kg_core import Triple, KnowledgeGraph
>>> KnowledgeGraph.from_triples([["Marie Curie", "discovered", "radium"]]).triples[0]
Triple(head='Marie Curie', relation='discovered', tail='radium')
"""

from ._version import SCORING_VERSION, __version__
from .encoders.cache import EmbeddingCache
from .encoders.registry import load_encoder
from .kg import KnowledgeGraph, Triple
from .scoring.cus import CUSResult, cus_score, dataset_cus
from .scoring.result import DEFAULT_MODE, MODES, ScoreResult, blend
from .scoring.s3kg import KGScorer, S3KGConfig, s3kg_score
from .scoring.signature import Signature
from .scoring.tau import TauResult, TripletAnalyzer, lowest_fraction, tau_analyse
from .store.store import Store

__all__ = [
    "DEFAULT_MODE",
    "MODES",
    "SCORING_VERSION",
    "CUSResult",
    "EmbeddingCache",
    "KGScorer",
    "KnowledgeGraph",
    "S3KGConfig",
    "ScoreResult",
    "Signature",
    "Store",
    "TauResult",
    "Triple",
    "TripletAnalyzer",
    "__version__",
    "blend",
    "cus_score",
    "dataset_cus",
    "load_encoder",
    "lowest_fraction",
    "s3kg_score",
    "tau_analyse",
]
