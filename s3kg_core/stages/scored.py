"""What the score stage stored, read back: signatures, components re-blended, coverage.

Which signature a store's scores are under (:func:`latest_signature`,
:func:`resolve_signature`), the alpha a blend of them uses (:func:`blend_alpha`: every printed
signature names it) and which encoder scored them (:func:`encoder_for`); the stored
components re-blended at any alpha (:func:`reblend`, :func:`scored_frame`); why an answer has no
score under a signature (:data:`UNSCORED_REASONS`) and how many stored answers a signature
covers (:class:`ScoreCoverage`). The CUS table is in :mod:`s3kg_core.analysis.cus_table`, the
export in :mod:`s3kg_core.export`.

Every stored answer is accounted for: those without a score under the signature are counted by
reason, and an answer that can be scored but is not yet (a ``s3kg score`` in progress, or
stopped) says the scores are partial.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import pandas as pd

from ..encoders.backend import backend_of_name, with_backend
from ..encoders.registry import PACKAGED_ENCODERS
from ..errors import ConfigError, InputFormatError
from ..scoring.cus import harmonic_mean
from ..scoring.result import TEXT_MODES, blend
from ..scoring.signature import Signature
from ..store import queries
from ..store.store import Store

__all__ = [
    "EMPTY_POLICIES",
    "UNSCORED_REASONS",
    "EmptyPolicy",
    "ScoreCoverage",
    "apply_empty_policy",
    "blend_alpha",
    "check_empty_policy",
    "coverage_of",
    "encoder_for",
    "latest_signature",
    "reblend",
    "resolve_signature",
    "scored_frame",
    "unscored_reasons",
]

EmptyPolicy = Literal["zero", "drop"]

EMPTY_POLICIES: tuple[EmptyPolicy, ...] = ("zero", "drop")
"""How an answer with an empty or unparseable KG counts in CUS means: ``zero`` (the default:
its scores are 0 and it counts) or ``drop`` (left out, as the authors' released QA scripts do)."""


def check_empty_policy(empty: str) -> None:
    """Raise :class:`ConfigError` unless ``empty`` is one of :data:`EMPTY_POLICIES`.

    Examples
    --------
    >>> check_empty_policy("drop")
    >>> check_empty_policy("none")
    Traceback (most recent call last):
    ...
    s3kg_core.errors.ConfigError: empty must be one of zero, drop; got 'none'
    """
    if empty not in EMPTY_POLICIES:
        raise ConfigError(f"empty must be one of {', '.join(EMPTY_POLICIES)}; got {empty!r}")


UNSCORED_REASONS: dict[str, str] = {
    "collect_error": "collect error",
    "kg_extraction_failed": "KG extraction failed",
    "not_extracted": "no KGs yet",
    "not_scored": "not yet scored",
}
"""Why a stored answer has no score under a signature (its ``unscored_reason`` -> words).

The first that applies: the answer failed to collect (status ``error``); one of its KGs failed
to extract; its answer KG is not stored (not extracted yet); else it can be scored but is not
yet. Answers whose KG is empty or unparseable are scored, and their CUS is 0.
"""


def latest_signature(store: Store) -> str | None:
    """The signature of the latest `score` pass (even one that only re-blended), or ``None``."""
    with store.connect() as con:
        latest = store.get_meta(con, "latest_signature")
        if latest is not None:
            return latest
        return queries.latest_scored_signature(con)


def resolve_signature(store: Store, signature: str | None = None) -> str | None:
    """``signature`` if the store has scores under it, else the latest one (``None``: none).

    Raises
    ------
    ConfigError
        If ``signature`` is given and nothing is scored under it; the message lists the
        stored signatures, latest first (and, for a signature printed with ``|alpha:A``, how
        to pass it: signatures are stored without alpha).

    Examples
    --------
    >>> import os, tempfile
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "r.duckdb"))
    >>> resolve_signature(store) is None
    True
    >>> resolve_signature(store, "nope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    s3kg_core.errors.ConfigError: unknown signature 'nope'; nothing is scored yet: run ...
    """
    if signature is None:
        return latest_signature(store)
    with store.connect() as con:
        stored = queries.signatures_by_recency(con)
    if signature in stored:
        return signature
    if not stored:
        raise ConfigError(
            f"unknown signature {signature!r}; nothing is scored yet: run `s3kg score` first"
        )
    message = f"unknown signature {signature!r}; the stored signatures, latest first: " + (
        ", ".join(stored)
    )
    try:
        parsed = Signature.parse(signature)
    except InputFormatError:
        parsed = None
    if parsed is not None and parsed.alpha is not None and parsed.components in stored:
        message += (
            f" (signatures are stored without alpha: pass --signature "
            f"{parsed.components!r} --alpha {parsed.alpha:g})"
        )
    raise ConfigError(message)


def blend_alpha(store: Store, signature: str, alpha: float | None = None) -> float:
    """The alpha a blend of ``signature``'s scores uses: ``alpha``, else their stored one.

    What a printed signature names after ``|alpha:``
    (:meth:`~s3kg_core.scoring.signature.Signature.blended`): a command run without ``--alpha``
    blends each score at its stored alpha, the same for all of a signature's scores.

    Raises
    ------
    ConfigError
        If ``alpha`` is ``None`` and nothing is scored under ``signature``, or its scores are
        stored with several alphas (pass one).

    Examples
    --------
    >>> import os, tempfile
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "a.duckdb"))
    >>> blend_alpha(store, "mode:ot|enc:m|tau:0.65|K:5|align:yes|norm:lemma|version:4", 0.3)
    0.3
    """
    if alpha is not None:
        return float(alpha)
    with store.connect() as con:
        stored = queries.score_alphas(con, signature)
    if len(stored) == 1:
        return stored[0]
    if not stored:
        raise ConfigError(f"nothing is scored under signature {signature}: run `s3kg score`")
    raise ConfigError(
        f"the scores of signature {signature} are stored with alphas "
        f"{', '.join(f'{a:g}' for a in stored)}: pass --alpha, or re-blend them at one "
        "with `s3kg score --alpha A`"
    )


def encoder_for(store: Store, signature: str) -> str:
    """The name or path to load the encoder a signature was scored with, on its backend.

    The backend comes from the signature's encoder name (``minilm@0.1.0+openvino``; no suffix:
    torch), whatever ``$S3KG_ENCODER_BACKEND`` says now, so the vectors match the stored ones.

    Raises
    ------
    ConfigError
        If the database does not record it (pass the encoder explicitly then).
    """
    name = Signature.parse(signature).encoder
    backend = backend_of_name(name)
    with store.connect() as con:
        recorded = store.get_meta(con, f"encoder:{name}")
    if recorded is not None:
        return with_backend(recorded, backend)
    base = name.split("@", 1)[0]
    if base in PACKAGED_ENCODERS:
        return with_backend(base, backend)
    raise ConfigError(
        f"this database does not record where encoder {name!r} was loaded from; "
        "pass it with --encoder PATH"
    )


def scored_frame(
    store: Store, signature: str, alpha: float | None = None, run_ids: Sequence[int] | None = None
) -> pd.DataFrame:
    """Every scored answer of ``signature`` with its run, components and blended scores."""
    with store.connect() as con:
        frame = queries.scored_components(con, signature, run_ids)
    return reblend(frame, alpha)


def reblend(frame: pd.DataFrame, alpha: float | None = None) -> pd.DataFrame:
    """Set ``gold_sim``, ``ctx_sim`` and ``cus`` of stored components at ``alpha``.

    ``frame`` needs the columns ``mode``, ``alpha``, ``gold_s_wl``, ``gold_s_sbert``,
    ``ctx_s_wl`` and ``ctx_s_sbert``; ``alpha=None`` keeps each row's stored alpha. The scores
    are :func:`~s3kg_core.scoring.result.blend` and :func:`~s3kg_core.scoring.cus.harmonic_mean`
    (in SQL: :data:`~s3kg_core.store.blend_queries.BLENDED`). Vectorised: ten thousand answers
    take a few milliseconds, so a dashboard slider can call it on every move.

    Raises
    ------
    ConfigError
        If an alpha is outside [0, 1] or a row's mode is unknown.

    Examples
    --------
    >>> f = pd.DataFrame({"mode": ["paper"], "alpha": [0.5], "gold_s_wl": [1.0],
    ...                   "gold_s_sbert": [0.0], "ctx_s_wl": [0.0], "ctx_s_sbert": [0.0]})
    >>> reblend(f, 0.25)[["gold_sim", "ctx_sim", "cus"]].round(3).values.tolist()
    [[0.75, 0.0, 0.0]]
    """
    frame = frame.copy()
    a = frame["alpha"].to_numpy(dtype=float) if alpha is None else float(alpha)
    kinds = frame["mode"].unique()  # a signature's scores share one mode: blend it as one
    modes = str(kinds[0]) if len(kinds) == 1 else frame["mode"].to_numpy()
    for side in ("gold", "ctx"):
        wl = frame[f"{side}_s_wl"].to_numpy(dtype=float)
        sbert = frame[f"{side}_s_sbert"].to_numpy(dtype=float)
        frame[f"{side}_sim"] = blend(wl, sbert, a, modes)
    frame["cus"] = harmonic_mean(frame["gold_sim"].to_numpy(), frame["ctx_sim"].to_numpy())
    return frame


def unscored_reasons(statuses: pd.DataFrame) -> pd.Series:
    """Why each answer is not scored: a key of :data:`UNSCORED_REASONS`, ``None`` if scored.

    ``statuses`` has the columns ``scored, answer_status, gold_kg_status, answer_kg_status,
    context_kg_status`` (:func:`~s3kg_core.store.queries.answer_statuses`).

    Examples
    --------
    >>> f = pd.DataFrame({"scored": [True, False, False, False, False],
    ...                   "answer_status": ["ok", "error", "ok", "ok", "ok"],
    ...                   "gold_kg_status": ["ok", None, "failed: x", None, "ok"],
    ...                   "answer_kg_status": ["ok", None, "ok", None, "empty"],
    ...                   "context_kg_status": ["ok", None, "ok", None, "ok"]})
    >>> unscored_reasons(f).tolist()
    [None, 'collect_error', 'kg_extraction_failed', 'not_extracted', 'not_scored']
    """
    reasons = pd.Series("not_scored", index=statuses.index, dtype=object)
    reasons[statuses["answer_kg_status"].isna()] = "not_extracted"
    reasons[_any_kg_failed(statuses)] = "kg_extraction_failed"
    reasons[statuses["answer_status"] == "error"] = "collect_error"
    reasons[statuses["scored"].astype(bool)] = None
    return reasons


def _any_kg_failed(statuses: pd.DataFrame) -> pd.Series:
    failed = pd.Series(False, index=statuses.index)
    for column in ("gold_kg_status", "answer_kg_status", "context_kg_status"):
        failed |= statuses[column].fillna("").astype(str).str.startswith("failed")
    return failed


@dataclass(frozen=True)
class ScoreCoverage:
    """How many stored answers a signature's scores cover, and why the others are not scored.

    Attributes
    ----------
    signature
        The scores' signature (``None``: nothing is scored).
    answers
        Stored answers.
    scored
        Answers with a score under ``signature``.
    scorable
        Answers that can be scored: answer KG stored, no KG failed (what ``s3kg score`` takes).
    unscored
        Answers not scored, by reason (keys of :data:`UNSCORED_REASONS`, in its order; only
        reasons that occur).
    zero_kg
        Scored answers whose gold or context comparison found a KG empty or unparseable: their
        CUS is 0.
    text_kg
        The same, scored in a mode that uses the texts (``text``): their comparisons with an
        empty KG scored the texts' cosine instead.

    Examples
    --------
    >>> c = ScoreCoverage("sig", answers=11, scored=8, scorable=9,
    ...                   unscored={"collect_error": 2, "not_scored": 1})
    >>> for line in c.lines():  # doctest: +ELLIPSIS
    ...     print(line)
    3 answers not scored: 2 collect error, 1 not yet scored
    run in progress (or stopped): 8 of 9 scorable answers scored under this signature; ...
    """

    signature: str | None
    answers: int
    scored: int
    scorable: int
    unscored: dict[str, int] = field(default_factory=dict)
    zero_kg: int = 0
    text_kg: int = 0

    @property
    def empty_kg(self) -> int:
        """Scored answers with an empty or unparseable KG, whatever they scored."""
        return self.zero_kg + self.text_kg

    @property
    def pending(self) -> int:
        """Answers that can be scored but are not yet (a scoring run in progress, or to run)."""
        return self.unscored.get("not_scored", 0)

    def lines(self) -> list[str]:
        """What a reader of the table should know, one line each (none when all is scored)."""
        out = []
        if self.unscored:
            parts = ", ".join(f"{n} {UNSCORED_REASONS[k]}" for k, n in self.unscored.items())
            out.append(f"{sum(self.unscored.values())} answers not scored: {parts}")
        if self.pending:
            out.append(
                f"run in progress (or stopped): {self.scorable - self.pending} of "
                f"{self.scorable} scorable answers scored under this signature; `s3kg score` "
                "with the same settings finishes it"
            )
        if self.zero_kg:
            out.append(
                f"{self.zero_kg} of the {self.scored} scored answers have CUS 0: a KG is empty "
                "or unparseable (gold_status and ctx_status in `s3kg export`)"
            )
        if self.text_kg:
            out.append(
                f"{self.text_kg} of the {self.scored} scored answers have a KG empty or "
                "unparseable: the texts' cosine stands in for those comparisons (text mode)"
            )
        return out


def _both_ok(scored: pd.DataFrame) -> pd.Series:
    return (scored["gold_status"] == "ok") & (scored["ctx_status"] == "ok")


def apply_empty_policy(scored: pd.DataFrame, empty: str) -> pd.DataFrame:
    """``scored`` under the empty-KG policy ``empty`` (:data:`EMPTY_POLICIES`).

    As it is (``zero``), or without the answers whose gold or context comparison is not ``ok``
    (``drop``). The one filter of the policy in pandas (in SQL: ``drop_empty`` of
    :mod:`s3kg_core.store.leaderboard_queries`).

    Raises
    ------
    ConfigError
        On an unknown policy.

    Examples
    --------
    >>> f = pd.DataFrame({"gold_status": ["ok", "answer_kg_empty"], "ctx_status": ["ok", "ok"]})
    >>> len(apply_empty_policy(f, "zero")), len(apply_empty_policy(f, "drop"))
    (2, 1)
    """
    check_empty_policy(empty)
    return scored[_both_ok(scored)] if empty == "drop" else scored


def coverage_of(
    statuses: pd.DataFrame, scored: pd.DataFrame, signature: str | None
) -> ScoreCoverage:
    """The :class:`ScoreCoverage` of ``signature`` from frames already read on one connection.

    ``statuses`` is :func:`~s3kg_core.store.queries.answer_statuses`' frame and ``scored``
    :func:`~s3kg_core.store.queries.scored_components`' (both of ``signature``).

    Examples
    --------
    >>> statuses = pd.DataFrame({"scored": [False], "answer_status": ["error"],
    ...                          "gold_kg_status": [None], "answer_kg_status": [None],
    ...                          "context_kg_status": [None]})
    >>> scored = pd.DataFrame(columns=["mode", "gold_status", "ctx_status"])
    >>> coverage_of(statuses, scored, None).lines()
    ['1 answers not scored: 1 collect error']
    """
    reasons = unscored_reasons(statuses)
    counts = reasons.value_counts()
    scorable = statuses["answer_kg_status"].notna() & ~_any_kg_failed(statuses)
    empty_kg = ~_both_ok(scored)
    on_texts = scored["mode"].isin(TEXT_MODES) if len(scored) else empty_kg
    return ScoreCoverage(
        signature=signature,
        answers=len(statuses),
        scored=int(statuses["scored"].astype(bool).sum()),
        scorable=int(scorable.sum()),
        unscored={k: int(counts[k]) for k in UNSCORED_REASONS if k in counts},
        zero_kg=int((empty_kg & ~on_texts).sum()),
        text_kg=int((empty_kg & on_texts).sum()),
    )
