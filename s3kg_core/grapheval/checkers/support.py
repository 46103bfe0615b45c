"""The offline support checker: embedding support plus explicit number, negation and entity checks.

No LLM and no NLI model: the context is split into sentences (a punctuation rule), and every
sentence and every pair of adjacent sentences becomes a *window*. A claim (a triple as a
sentence, or a whole answer in raw mode) is embedded with a packaged sentence encoder
(``minilm`` by default, through :class:`~s3kg_core.encoders.cache.EmbeddingCache`) and matched to
the
most similar windows. Then these features, each in [0, 1]:

``best_cos``
    cosine of the claim and its best window (negative cosines count as 0);
``num_absent_window`` / ``num_absent_context``
    1 if a number of the claim (digits or a number word) is missing from the two best windows /
    from the whole context;
``negation_mismatch``
    1 if exactly one of the claim and its best window is negated ("not", "never", "n't"...);
``entity_absent``
    share of the claim's capitalised head/tail words missing from the context (0 without any);
``token_absent_context``
    share of the claim's content words (head and tail; whole answer in raw mode) missing from the
    context (crude suffix stemming);
``window_overlap``
    share of those content words found in the two best windows.

They are combined by a logistic regression into ``P(not supported)``. Its weights were fitted on
the **dev split** of the summarisation benchmarks only (see
``bench/experiments/calibrate_support.py`` and :mod:`s3kg_core.evaluation.summ_sets`) and ship
as ``support_calibration.json`` next to this module; without that file hand-set weights are
used (:data:`FALLBACK_WEIGHTS`), and the signature says which.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from ...encoders.base import Encoder
from ...encoders.cache import EmbeddingCache
from ...encoders.registry import load_encoder
from ...errors import CheckerError
from ...scoring.signature import CheckerSignature
from ...text import STOP_WORDS, split_sentences
from .base import Checker, Claim, Verdict

__all__ = [
    "CALIBRATION_FILE",
    "FALLBACK_WEIGHTS",
    "FEATURES",
    "LogisticWeights",
    "SupportChecker",
    "load_calibration",
]

FEATURES = (
    "best_cos",
    "num_absent_window",
    "num_absent_context",
    "negation_mismatch",
    "entity_absent",
    "token_absent_context",
    "window_overlap",
)
"""The feature order of :meth:`SupportChecker.features_many` and of the calibration file."""

CALIBRATION_FILE = Path(__file__).with_name("support_calibration.json")
"""The packaged calibration (weights fitted on the dev split only)."""

_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?|\d+(?:[.,]\d+)*")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nothing|nobody|neither|nor|without|cannot)\b|n't\b|n’t\b",
    re.IGNORECASE,
)
_NUMBER_WORDS_TEXT = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
)
_NUMBER_WORDS = {w: str(i) for i, w in enumerate(_NUMBER_WORDS_TEXT.split())} | {
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "hundred": "100",
    "thousand": "1000",
}


def _stem(word: str) -> str:
    w = word.lower()
    for suffix in ("ing", "ed", "es", "s"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            return w[: -len(suffix)]
    return w


def _numbers(text: str) -> set[str]:
    found = {m.replace(",", "") for m in _NUMBER.findall(text)}
    found |= {_NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", text.lower()) if w in _NUMBER_WORDS}
    return found


def _content(text: str) -> list[str]:
    return [
        _stem(w)
        for w in _WORD.findall(text)
        if w.lower() not in STOP_WORDS and not _NUMBER.fullmatch(w) and len(w) > 1
    ]


def _capitalised(text: str) -> list[str]:
    return [
        _stem(w) for w in _WORD.findall(text) if w[:1].isupper() and w.lower() not in STOP_WORDS
    ]


def _stems(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(text)}


@dataclass(frozen=True)
class LogisticWeights:
    """``P(not supported) = sigmoid(intercept + sum(weights[f] * feature f))``.

    Examples
    --------
    >>> w = LogisticWeights(0.0, {"best_cos": -2.0})
    >>> round(w.probability({"best_cos": 1.0}), 4)
    0.1192
    """

    intercept: float
    weights: Mapping[str, float]

    def probability(self, features: Mapping[str, float]) -> float:
        """The logistic probability of one feature mapping (missing features count as 0)."""
        z = self.intercept + sum(w * float(features.get(f, 0.0)) for f, w in self.weights.items())
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"intercept": self.intercept, "weights": dict(self.weights)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LogisticWeights:
        """Read back :meth:`to_dict`.

        Raises
        ------
        CheckerError
            If a weight names an unknown feature or is not a number.
        """
        try:
            weights = {str(k): float(v) for k, v in dict(data["weights"]).items()}
            intercept = float(data["intercept"])
        except (KeyError, TypeError, ValueError) as exc:
            raise CheckerError(f"calibration weights are malformed: {exc}") from exc
        unknown = sorted(set(weights) - set(FEATURES))
        if unknown:
            raise CheckerError(f"calibration names unknown features {unknown}; known: {FEATURES}")
        return cls(intercept, weights)


FALLBACK_WEIGHTS: dict[str, LogisticWeights] = {
    "triple": LogisticWeights(
        3.0,
        {
            "best_cos": -7.0,
            "num_absent_window": 1.0,
            "num_absent_context": 4.0,
            "negation_mismatch": 1.5,
            "entity_absent": 2.0,
            "token_absent_context": 3.0,
            "window_overlap": -1.0,
        },
    ),
    "raw": LogisticWeights(
        3.0,
        {
            "best_cos": -6.0,
            "num_absent_context": 2.0,
            "negation_mismatch": 0.5,
            "entity_absent": 2.0,
            "token_absent_context": 4.0,
            "window_overlap": -1.0,
        },
    ),
}
"""Hand-set weights used when no calibration file is available (signature ``calibration:hand``)."""


def load_calibration(
    path: str | Path | None = CALIBRATION_FILE,
) -> tuple[dict[str, LogisticWeights], str, dict[str, Any]]:
    """Weights for triple and raw mode, a calibration id, and the file's metadata.

    A missing file gives :data:`FALLBACK_WEIGHTS` with the id ``hand``.

    Raises
    ------
    CheckerError
        If the file exists but is not a valid calibration.

    Examples
    --------
    >>> weights, cid, meta = load_calibration("/no/such/file.json")
    >>> cid, sorted(weights)
    ('hand', ['raw', 'triple'])
    """
    if path is None or not Path(path).is_file():
        return dict(FALLBACK_WEIGHTS), "hand", {}
    text = Path(path).read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CheckerError(f"calibration file {path} is not JSON: {exc}") from exc
    if not isinstance(data, dict) or "triple" not in data or "raw" not in data:
        raise CheckerError(f"calibration file {path} needs 'triple' and 'raw' weights")
    weights = {k: LogisticWeights.from_dict(data[k]) for k in ("triple", "raw")}
    digest = hashlib.sha256(
        json.dumps({k: w.to_dict() for k, w in weights.items()}, sort_keys=True).encode()
    ).hexdigest()[:8]
    meta = {k: v for k, v in data.items() if k not in ("triple", "raw")}
    return weights, f"{data.get('name', 'dev')}-{digest}", meta


@dataclass
class _Context:
    windows: list[str]
    window_stems: list[set[str]]
    window_negated: list[bool]
    window_numbers: list[set[str]]
    stems: set[str]
    numbers: set[str]


class SupportChecker(Checker):
    """Offline checker: embedding support and explicit mismatches, logistic-calibrated.

    Parameters
    ----------
    encoder
        A packaged encoder name (``minilm``, ``mpnet``), a local model path, or an
        :class:`~s3kg_core.encoders.base.Encoder`.
    calibration
        A calibration JSON file (default: the packaged one; ``None``: the hand-set weights).
    top_windows
        Best windows whose words count for the lexical features.
    batch_size
        Claims per job.

    Examples
    --------
    >>> from s3kg_core.kg import Triple
    >>> checker = SupportChecker()
    >>> ctx = "The Eiffel Tower is in Paris. It opened in 1889."
    >>> good, bad = checker.check([Triple("Eiffel Tower", "is in", "Paris"),
    ...                            Triple("Eiffel Tower", "opened in", "1899")], ctx)
    >>> good < bad
    True
    >>> hand = SupportChecker(calibration=None)  # the hand-set weights flag the wrong year
    >>> [p > 0.5 for p in hand.check([Triple("Eiffel Tower", "opened in", "1899")], ctx)]
    [True]
    """

    version = "support-1"

    def __init__(
        self,
        encoder: str | Encoder = "minilm",
        *,
        calibration: str | Path | None = CALIBRATION_FILE,
        top_windows: int = 2,
        batch_size: int = 64,
    ) -> None:
        super().__init__(batch_size)
        if top_windows < 1:
            raise CheckerError(f"top_windows must be >= 1; got {top_windows}")
        self.encoder: Encoder = load_encoder(encoder) if isinstance(encoder, str) else encoder
        self.cache = EmbeddingCache(self.encoder)
        self.weights, self.calibration_id, self.calibration_meta = load_calibration(calibration)
        self.top_windows = top_windows
        self._contexts: dict[str, _Context] = {}
        self.name = "support"

    @property
    def signature(self) -> str:
        """Checker, encoder, calibration id, windows, version."""
        settings = (
            ("encoder", self.encoder.name),
            ("calibration", self.calibration_id),
            ("top", self.top_windows),
        )
        return CheckerSignature("support", self.version, settings).format()

    # -- features ---------------------------------------------------------------------------------

    def _context(self, context: str) -> _Context:
        found = self._contexts.get(context)
        if found is not None:
            return found
        sentences = split_sentences(context) or [context.strip()]
        windows = list(sentences)
        windows += [f"{a} {b}" for a, b in pairwise(sentences)]
        prepared = _Context(
            windows=windows,
            window_stems=[_stems(w) for w in windows],
            window_negated=[bool(_NEGATION.search(w)) for w in windows],
            window_numbers=[_numbers(w) for w in windows],
            stems=_stems(context),
            numbers=_numbers(context),
        )
        if len(self._contexts) > 4096:
            self._contexts.clear()
        self._contexts[context] = prepared
        return prepared

    def features_many(
        self, jobs: Sequence[tuple[Sequence[Claim | str], str]], *, raw: bool = False
    ) -> list[np.ndarray]:
        """One ``(len(claims), len(FEATURES))`` array per ``(claims, context)`` job.

        Contexts must not be blank (the :class:`Checker` base answers those itself).

        Examples
        --------
        >>> f = SupportChecker().features_many([(["Paris is in France"], "Paris is in France.")])
        >>> f[0].shape, float(f[0][0, 0]) > 0.9
        ((1, 7), True)
        """
        contexts = [self._context(ctx) for _, ctx in jobs]
        claim_jobs = [[c if isinstance(c, Claim) else Claim(c) for c in cs] for cs, _ in jobs]
        texts = [w for c in contexts for w in c.windows]
        texts += [c.text for claims in claim_jobs for c in claims]
        self.cache.add(texts)
        out: list[np.ndarray] = []
        for claims, ctx in zip(claim_jobs, contexts, strict=True):
            if not claims:
                out.append(np.zeros((0, len(FEATURES)), dtype=np.float64))
                continue
            win = self.cache.vectors(ctx.windows)
            vec = self.cache.vectors([c.text for c in claims])
            sims = vec @ win.T
            rows = [self._claim_features(c, sims[i], ctx, raw) for i, c in enumerate(claims)]
            out.append(np.asarray(rows, dtype=np.float64))
        return out

    def _claim_features(
        self, claim: Claim, sims: np.ndarray, ctx: _Context, raw: bool
    ) -> list[float]:
        order = np.argsort(-sims)[: self.top_windows]
        best = int(order[0])
        top_stems = set().union(*(ctx.window_stems[i] for i in order))
        top_numbers = set().union(*(ctx.window_numbers[i] for i in order))
        numbers = _numbers(claim.text)
        # the relation's words are paraphrased freely; head and tail carry the entities
        focus = claim.text if claim.triple is None else f"{claim.triple.head} {claim.triple.tail}"
        words = _content(focus)
        capitals = _capitalised(focus)
        absent = [w for w in words if w not in ctx.stems]
        return [
            max(0.0, float(sims[best])),
            float(bool(numbers - top_numbers)),
            float(bool(numbers - ctx.numbers)),
            float(bool(_NEGATION.search(claim.text)) != ctx.window_negated[best]),
            (sum(w not in ctx.stems for w in capitals) / len(capitals)) if capitals else 0.0,
            (len(absent) / len(words)) if words else 0.0,
            (sum(w in top_stems for w in words) / len(words)) if words else 0.0,
        ]

    # -- checking ---------------------------------------------------------------------------------

    def _check(self, jobs: Sequence[tuple[Sequence[Claim], str]], raw: bool) -> list[list[Verdict]]:
        weights = self.weights["raw" if raw else "triple"]
        out: list[list[Verdict]] = []
        for feats in self.features_many(jobs, raw=raw):
            verdicts = []
            for row in feats:
                named = {f: round(float(v), 6) for f, v in zip(FEATURES, row, strict=True)}
                verdicts.append(Verdict(weights.probability(named), detail=named))
            out.append(verdicts)
        return out
