"""What a score is: :class:`ScoreResult`, the scoring modes and :func:`blend`.

A result keeps S_WL, S_SBERT, the alignment maps, the matched triples and the signature, so alpha
can change without recomputing anything (:meth:`ScoreResult.blend`). ``kgx`` mode weights the WL
side by alpha (as the authors' released code does); every other mode (``paper``, ``hybrid``,
``text``, ``wwl`` and ``ot``, the default) weights the embedding side (as the paper's equation
does). The defaults of a mode, alpha and tau, and their checks, are written here once.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ..errors import ConfigError
from ..kg import Triple

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_MODE",
    "DEFAULT_TAU",
    "MODES",
    "TEXT_MODES",
    "WL_MODES",
    "Mode",
    "ScoreResult",
    "blend",
    "check_alpha",
    "check_mode",
    "check_tau",
]


Mode = Literal["paper", "kgx", "hybrid", "text", "wwl", "ot"]


MODES: tuple[Mode, ...] = ("paper", "kgx", "hybrid", "text", "wwl", "ot")
"""The scoring modes. ``text`` is the only one that needs the two texts as well as their KGs."""

TEXT_MODES: tuple[Mode, ...] = ("text",)
"""Modes whose score uses the texts of the pair (callers must pass them)."""


WL_MODES: tuple[Mode, ...] = ("kgx",)
"""Modes whose alpha weights the WL side (the authors' code); the others weight the embedding
side (the paper's equation)."""


DEFAULT_MODE: Mode = "ot"
"""The project's default mode, chosen by evidence from two families (docs/scores.md, "Which mode
is the default"): the BAMBOO meaning-graph benchmark (dev) and the nine labelled pair sets (mean
test AUROC, alpha chosen on each set's dev pairs). ``hybrid`` was the default before it."""

DEFAULT_ALPHA = 0.5
"""The default blend weight (the paper's, kept in every mode: docs/scores.md); every default
of an ``alpha`` parameter or option is this one."""

DEFAULT_TAU = 0.65
"""The default soft-alignment threshold (cosine): every default of a ``tau`` is this one."""


def blend(s_wl: Any, s_sbert: Any, alpha: Any, mode: Any = DEFAULT_MODE) -> Any:
    """Blend the structural and embedding components into S3KG: the one blend of the project.

    In every mode but ``kgx`` ``alpha`` weights the embedding side, as in the
    paper's equation: ``(1 - alpha) * s_wl + alpha * s_sbert``. In ``kgx`` mode it weights the
    WL side, as in the authors' released code: ``alpha * s_wl + (1 - alpha) * s_sbert``. Works
    on floats and on NumPy arrays alike, so a whole run can be re-blended at once; ``alpha`` and
    ``mode`` may be NumPy arrays too (one per row: stored scores of several modes, each at its
    own alpha). In SQL: :func:`s3kg_core.store.blend_queries.blend_sql`, the same operations in the
    same order (equal doubles).

    Raises
    ------
    ConfigError
        If an alpha is outside [0, 1] or a mode is not one of :data:`MODES`.

    Examples
    --------
    >>> blend(1.0, 0.0, 0.25)
    0.75
    >>> blend(1.0, 0.0, 0.25, mode="kgx")
    0.25
    >>> blend(0.2, 0.8, 0.0)
    0.2
    >>> blend(1.0, 0.0, 0.25, mode="hybrid")
    0.75
    >>> blend(np.array([1.0, 1.0]), np.array([0.0, 0.0]), np.array([0.25, 0.5]),
    ...       np.array(["paper", "kgx"])).tolist()
    [0.75, 0.5]
    """
    if not isinstance(alpha, np.ndarray):
        check_alpha(alpha)
    else:
        alpha = alpha.astype(np.float64, copy=False)
        outside = ~((alpha >= 0.0) & (alpha <= 1.0))  # NaN too
        if outside.any():
            raise ConfigError(f"alpha must be a number in [0, 1]; got {alpha[outside][0]!r}")
    on_wl = _weights_wl(mode)
    if isinstance(on_wl, bool):
        if on_wl:
            return alpha * s_wl + (1.0 - alpha) * s_sbert
        return (1.0 - alpha) * s_wl + alpha * s_sbert
    wl, sbert = np.asarray(s_wl, dtype=np.float64), np.asarray(s_sbert, dtype=np.float64)
    return np.where(on_wl, alpha * wl + (1.0 - alpha) * sbert, (1.0 - alpha) * wl + alpha * sbert)


def _weights_wl(mode: Any) -> bool | np.ndarray:
    """Whether alpha weights the WL side: for one mode, or per row of a NumPy array of modes."""
    if not isinstance(mode, np.ndarray):
        check_mode(mode)
        return mode in WL_MODES
    modes = set(mode.tolist())
    unknown = modes - set(MODES)
    if unknown:
        check_mode(sorted(unknown, key=repr)[0])
    if len(modes) <= 1:  # one mode for every row (a signature's scores): one convention
        return bool(modes & set(WL_MODES))
    return np.isin(mode.astype(object, copy=False), WL_MODES)


def check_alpha(alpha: float) -> None:
    """Raise :class:`ConfigError` unless ``0 <= alpha <= 1``."""
    if not isinstance(alpha, numbers.Real) or not 0.0 <= float(alpha) <= 1.0:
        raise ConfigError(f"alpha must be a number in [0, 1]; got {alpha!r}")


def check_tau(tau: float) -> None:
    """Raise :class:`ConfigError` unless ``0 <= tau <= 1``.

    Examples
    --------
    >>> check_tau(DEFAULT_TAU)
    >>> check_tau(1.5)
    Traceback (most recent call last):
    ...
    s3kg_core.errors.ConfigError: tau must be a number in [0, 1]; got 1.5
    """
    if not isinstance(tau, numbers.Real) or not 0.0 <= float(tau) <= 1.0:
        raise ConfigError(f"tau must be a number in [0, 1]; got {tau!r}")


def check_mode(mode: object) -> None:
    """Raise :class:`ConfigError` unless ``mode`` is one of :data:`MODES`: the one check.

    Examples
    --------
    >>> check_mode("ot")
    >>> check_mode("fast")
    Traceback (most recent call last):
    ...
    s3kg_core.errors.ConfigError: mode must be one of paper, kgx, hybrid, text, wwl, ot; got 'fast'
    """
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")


@dataclass(frozen=True)
class ScoreResult:
    """The S3KG comparison of a reference KG (T1) with a candidate KG (T2).

    It keeps the components, so :meth:`blend` can change alpha without recomputing anything.
    A pair that cannot be scored (an empty side) has ``status`` set to the reason and every
    score 0.0, never NaN; in ``text`` mode both components of such a pair are the cosine of the
    two texts instead (the texts are still there when a KG is empty).

    Attributes
    ----------
    s_wl, s_sbert
        Structural (Weisfeiler-Lehman) and embedding components, each in [0, 1].
    alpha, mode
        The blend weight and its convention (see :func:`blend`).
    status
        ``"ok"`` or the reason the KGs could not be compared (``"empty_kg_1"``, ``"empty_kg_2"``,
        ...): the score is then 0, or the texts' cosine in ``text`` mode.
    matched
        T2^: the distinct triples of T2 picked as best matches of T1's triples (normalised).
    entity_map, relation_map
        For every (normalised) label of T1's graph, the T2^ label it was aligned to, or ``None``.
    signature
        ``mode:..|enc:..|tau:..|K:..|align:..|norm:..|version:..``; publish it with the numbers.
    n_triples_1, n_triples_2
        Triples on each side after normalisation and de-duplication.

    Examples
    --------
    >>> r = ScoreResult(s_wl=0.5, s_sbert=0.9, alpha=0.5, mode="paper")
    >>> round(r.score, 3), round(r.blend(0.0), 3)
    (0.7, 0.5)
    >>> ScoreResult.from_dict(r.to_dict()) == r
    True
    """

    s_wl: float
    s_sbert: float
    alpha: float = DEFAULT_ALPHA
    mode: Mode = "paper"
    status: str = "ok"
    matched: tuple[Triple, ...] = ()
    entity_map: dict[str, str | None] = field(default_factory=dict)
    relation_map: dict[str, str | None] = field(default_factory=dict)
    signature: str = ""
    n_triples_1: int = 0
    n_triples_2: int = 0

    @property
    def ok(self) -> bool:
        """Whether the pair was scored (both sides non-empty)."""
        return self.status == "ok"

    @property
    def score(self) -> float:
        """S3KG at this result's alpha."""
        return self.blend(self.alpha)

    def blend(self, alpha: float) -> float:
        """S3KG at another alpha, from the stored components."""
        return float(blend(self.s_wl, self.s_sbert, alpha, self.mode))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (triples as lists)."""
        return {
            "s_wl": self.s_wl,
            "s_sbert": self.s_sbert,
            "alpha": self.alpha,
            "mode": self.mode,
            "status": self.status,
            "score": self.score,
            "matched": [t.to_list() for t in self.matched],
            "entity_map": dict(self.entity_map),
            "relation_map": dict(self.relation_map),
            "signature": self.signature,
            "n_triples_1": self.n_triples_1,
            "n_triples_2": self.n_triples_2,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ScoreResult:
        """Inverse of :meth:`to_dict` (``score`` is derived, so it is ignored)."""
        return cls(
            s_wl=float(data["s_wl"]),
            s_sbert=float(data["s_sbert"]),
            alpha=float(data.get("alpha", DEFAULT_ALPHA)),
            mode=data.get("mode", "paper"),
            status=str(data.get("status", "ok")),
            matched=tuple(Triple.from_any(t) for t in data.get("matched", ())),
            entity_map=dict(data.get("entity_map", {})),
            relation_map=dict(data.get("relation_map", {})),
            signature=str(data.get("signature", "")),
            n_triples_1=int(data.get("n_triples_1", 0)),
            n_triples_2=int(data.get("n_triples_2", 0)),
        )
