"""Two runs compared on the questions both answered: per-question changes, a paired bootstrap.

A run is named by its id or its display name (:func:`find_run`). :func:`compare_runs` takes
a new run and a baseline of the same dataset, scored under one signature, and gives for
GoldSim, CtxSim and CUS the mean change over the questions both have a score for (new minus
baseline) with a seeded paired-bootstrap interval (:func:`s3kg_core.stats.paired_bootstrap`,
scipy's BCa), the change of every question (:func:`question_deltas`, biggest regression first),
and the questions the baseline could score that the new run cannot. The dashboard's Run
comparison page, the ``s3kg check`` gate and the report read the same functions.

Whether one run's mean is clearly lower or higher than another's is a :class:`Verdict`, in one
set of words wherever it is shown (the Overview against each dataset's #1, the Run comparison,
``s3kg check``, ``s3kg report`` and ``s3kg compare``): :func:`paired_verdict` of
:func:`paired_difference` when the runs are compared on shared questions (the paired bootstrap),
:func:`unpaired_verdict` of two runs' intervals only where they answered different question
sets; :meth:`Verdict.text` names the test.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

import pandas as pd

from ..errors import ComparisonError, RunSelectionError
from ..stages.scored import (
    EmptyPolicy,
    apply_empty_policy,
    check_empty_policy,
    reblend,
    resolve_signature,
    unscored_reasons,
)
from ..stats import DEFAULT_RESAMPLES, NORMAL_FROM, PairedDifference, paired_bootstrap
from ..statuses import Reference, role_status
from ..store import queries
from ..store.store import Store, in_one_session

__all__ = [
    "DELTA_COLUMNS",
    "SCORES",
    "UNSCORABLE_COLUMNS",
    "RunComparison",
    "RunInfo",
    "Verdict",
    "bootstrap_text",
    "compare_runs",
    "find_run",
    "paired_difference",
    "paired_verdict",
    "question_deltas",
    "scorability",
    "unpaired_verdict",
]

SCORES = ("gold_sim", "ctx_sim", "cus")
"""The per-answer scores compared, in the order shown."""

DELTA_COLUMNS = (
    "item_id",
    "ext_id",
    "question",
    *(f"{s}_{side}" for s in SCORES for side in ("a", "b")),
    *(f"d_{s}" for s in SCORES),
)
"""The columns of :func:`question_deltas`."""

UNSCORABLE_COLUMNS = ("item_id", "ext_id", "question", "baseline", "new")
"""The columns of :attr:`RunComparison.unscorable`: the question and each run's state."""


@dataclass(frozen=True)
class RunInfo:
    """A run as a user names it: id, display name, dataset, temperature, extractor."""

    run_id: int
    name: str
    dataset: str
    temperature: float
    extractor: str

    def label(self) -> str:
        """``name (run 3: dataset d, temperature 0.7, extractor offline)``."""
        return (
            f"{self.name} (run {self.run_id}: dataset {self.dataset}, temperature "
            f"{self.temperature:g}, extractor {self.extractor})"
        )


@dataclass(frozen=True)
class Verdict:
    """Whether a run's mean score is clearly lower or higher than another's, and by which test.

    Attributes
    ----------
    side
        ``"lower"`` or ``"higher"`` (the run against the other), ``None``: no clear difference.
    paired
        Decided by the paired test on the questions both runs answered
        (:func:`paired_verdict`); ``False``: by the overlap of two intervals of different
        question sets (:func:`unpaired_verdict`).
    n
        The questions compared (paired), else 0.
    method
        The paired interval's method (:class:`~s3kg_core.stats.PairedDifference`), or
        ``overlap``.
    """

    side: Literal["lower", "higher"] | None
    paired: bool
    n: int = 0
    method: str = "overlap"

    def words(self) -> str:
        """``clearly lower``, ``clearly higher`` or ``no clear difference``."""
        return "no clear difference" if self.side is None else f"clearly {self.side}"

    def test(self) -> str:
        """The test that decided, as every surface names it.

        Examples
        --------
        >>> Verdict("lower", True, 30, "BCa").test()
        'paired bootstrap over 30 shared questions'
        >>> Verdict("lower", True, 2500, "normal").test()
        'paired bootstrap (normal approximation) over 2,500 shared questions'
        >>> Verdict(None, False).test()
        'intervals of different question sets'
        """
        if not self.paired:
            return "intervals of different question sets"
        how = " (normal approximation)" if self.method == "normal" else ""
        noun = "question" if self.n == 1 else "questions"
        return f"paired bootstrap{how} over {self.n:,} shared {noun}"

    def text(self) -> str:
        """The verdict and its test: the words every surface shows.

        Examples
        --------
        >>> Verdict("lower", True, 30, "BCa").text()
        'clearly lower (paired bootstrap over 30 shared questions)'
        >>> Verdict(None, False).text()
        'no clear difference (intervals of different question sets)'
        """
        return f"{self.words()} ({self.test()})"


def paired_verdict(difference: PairedDifference) -> Verdict:
    """The verdict of a paired difference (new minus baseline): its interval against 0.

    Clearly lower when the whole interval is below 0, clearly higher when it is above, else
    (it holds 0, or there is none: one question) no clear difference.

    Examples
    --------
    >>> d = paired_bootstrap([0.5, 0.6, 0.7, 0.4], [0.6, 0.6, 0.8, 0.6], resamples=999)
    >>> paired_verdict(d).text()
    'clearly lower (paired bootstrap over 4 shared questions)'
    >>> paired_verdict(paired_bootstrap([0.5, 0.7], [0.6, 0.6])).words()
    'no clear difference'
    """
    side: Literal["lower", "higher"] | None = None
    if difference.high < 0.0:
        side = "lower"
    elif difference.low > 0.0:
        side = "higher"
    return Verdict(side, True, difference.n, difference.method)


def unpaired_verdict(new: tuple[float, float], baseline: tuple[float, float]) -> Verdict:
    """The verdict of two runs that answered different questions: their intervals' overlap.

    ``new`` and ``baseline`` are ``(low, high)`` intervals of each run's mean. Clearly lower
    when ``new``'s lies wholly below ``baseline``'s, clearly higher when wholly above, else (they
    overlap, or one is missing) no clear difference.

    Examples
    --------
    >>> unpaired_verdict((0.40, 0.50), (0.55, 0.60)).words()
    'clearly lower'
    >>> unpaired_verdict((0.40, 0.56), (0.55, 0.60)).text()
    'no clear difference (intervals of different question sets)'
    """
    side: Literal["lower", "higher"] | None = None
    if new[1] < baseline[0]:
        side = "lower"
    elif new[0] > baseline[1]:
        side = "higher"
    return Verdict(side, False)


def bootstrap_text(resamples: int, seed: int, confidence: float, normal_from: int | None) -> str:
    """The paired bootstrap's settings in words, as ``s3kg check`` and ``s3kg compare`` print them.

    Examples
    --------
    >>> bootstrap_text(9999, 0, 0.95, 1000)
    'paired, 9999 resamples, seed 0, 95% intervals, the normal approximation from 1000 paired values'
    """  # noqa: E501
    normal = (
        ""
        if normal_from is None
        else f", the normal approximation from {normal_from} paired values"
    )
    return f"paired, {resamples} resamples, seed {seed}, {confidence:.0%} intervals{normal}"


def paired_difference(
    new: pd.Series,
    baseline: pd.Series,
    *,
    metric: str = "cus",
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    normal_from: int | None = NORMAL_FROM,
) -> PairedDifference:
    """Run ``new`` minus ``baseline`` on the questions both have a value for, paired.

    ``new`` and ``baseline`` are one score's values indexed by item id. The shared items, in
    item order (the bootstrap draws by position, so the order is part of the result), go to
    :func:`~s3kg_core.stats.paired_bootstrap` with its normal approximation from
    ``normal_from`` questions. The one paired comparison of two runs: :func:`compare_runs`
    (the Run comparison, ``s3kg check``, ``s3kg report``, ``s3kg compare``) and the Overview's
    verdict against each dataset's #1 call it with these defaults.

    Raises
    ------
    ConfigError
        If no item is shared.

    Examples
    --------
    >>> a = pd.Series([0.5, 0.6, 0.7], index=[3, 1, 2])
    >>> b = pd.Series([0.4, 0.6, 0.9, 0.1], index=[1, 2, 3, 4])
    >>> d = paired_difference(b, a)
    >>> d.n, round(d.difference, 3), d.method
    (3, 0.033, 'BCa')
    """
    both = pd.concat({"new": new, "baseline": baseline}, axis=1, join="inner").sort_index()
    return paired_bootstrap(
        both["new"].to_numpy(dtype=float),
        both["baseline"].to_numpy(dtype=float),
        metric=metric,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        normal_from=normal_from,
    )


def find_run(store: Store, ref: str | int) -> RunInfo:
    """The run ``ref`` names: its id, or its display name (``runs.name``).

    An id wins: where a run's name is made of digits that are another run's id (a run
    renamed ``1``), ``1`` names run 1, and the renamed run is named by its own id.

    Raises
    ------
    RunSelectionError
        If no run has that id or name (the message lists the runs), or the name fits several
        runs (the message lists them: pass the id).

    Examples
    --------
    >>> import os, tempfile
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "r.duckdb"))
    >>> with store.transaction() as con:
    ...     ds = store.ensure_dataset(con, "toy")
    ...     a = store.ensure_run(con, ds, "org/m", 0.0, "offline")
    ...     b = store.ensure_run(con, ds, "org/m", 0.7, "offline")
    >>> find_run(store, "2").label()
    'm (run 2: dataset toy, temperature 0.7, extractor offline)'
    >>> find_run(store, "m")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    s3kg_core.errors.RunSelectionError: run name 'm' fits 2 runs; name one by its id: 1 = m ...
    """
    with store.connect() as con:
        runs = queries.run_overview(con)
    text = str(ref).strip()
    infos = [
        RunInfo(int(r.run_id), str(r.model), str(r.dataset), float(r.temperature), str(r.extractor))
        for r in runs.sort_values("run_id").itertuples()
    ]
    by_id = [r for r in infos if text.isdigit() and r.run_id == int(text)]
    # an id wins over a name made of the same digits (run 1 stays addressable as `1`)
    found = by_id or [r for r in infos if r.name == text]
    if len(found) == 1:
        return found[0]
    listed = "; ".join(f"{r.run_id} = {r.label()}" for r in (found or infos)[:20])
    if len(found) > 1:
        raise RunSelectionError(
            f"run name {text!r} fits {len(found)} runs; name one by its id: {listed}"
        )
    if not infos:
        raise RunSelectionError(f"no run {text!r}: the database has no runs; import some first")
    more = f" and {len(infos) - 20} more" if len(infos) > 20 else ""
    raise RunSelectionError(f"no run {text!r} (by id or name); the runs: {listed}{more}")


def question_deltas(
    frame: pd.DataFrame, run_a: int, run_b: int, questions: pd.DataFrame
) -> pd.DataFrame:
    """GoldSim, CtxSim and CUS of each question both runs answered, and B minus A.

    Biggest regression first: sorted by ``d_cus`` ascending (then by item). ``frame`` is the
    blended per-answer frame (``reblend``), ``questions`` has ``item_id, ext_id, question``.
    Columns: :data:`DELTA_COLUMNS`.

    Examples
    --------
    >>> f = pd.DataFrame({"run_id": [1, 1, 2, 2], "item_id": [1, 2, 1, 2],
    ...                   "gold_sim": [.5, .5, .4, .7], "ctx_sim": [.5, .5, .5, .5],
    ...                   "cus": [.5, .5, .45, .6]})
    >>> q = pd.DataFrame({"item_id": [1, 2], "ext_id": ["q1", "q2"], "question": ["a?", "b?"]})
    >>> question_deltas(f, 1, 2, q)[["item_id", "d_cus"]].round(2).to_dict("records")
    [{'item_id': 1, 'd_cus': -0.05}, {'item_id': 2, 'd_cus': 0.1}]
    """
    cols = ["item_id", *SCORES]
    a = frame.loc[frame["run_id"] == run_a, cols]
    b = frame.loc[frame["run_id"] == run_b, cols]
    both = a.merge(b, on="item_id", suffixes=("_a", "_b"))
    for s in SCORES:
        both[f"d_{s}"] = both[f"{s}_b"] - both[f"{s}_a"]
    texts = questions[["item_id", "ext_id", "question"]]
    both = both.merge(texts, on="item_id", how="left")
    both["ext_id"] = both["ext_id"].fillna("").astype(str)
    both["question"] = both["question"].fillna("").astype(str)
    both["item_id"] = both["item_id"].astype(int)
    return (
        both.sort_values(["d_cus", "item_id"], kind="stable")
        .reset_index(drop=True)
        .loc[:, list(DELTA_COLUMNS)]
    )


def scorability(statuses: pd.DataFrame, scored: pd.DataFrame) -> pd.Series:
    """Why each answer of ``statuses`` cannot be scored, ``None`` where it can.

    An answer is unscorable without a score under the signature (the reason of
    :func:`~s3kg_core.stages.scored.unscored_reasons`: ``collect_error``,
    ``kg_extraction_failed``, ``not_extracted``, ``not_scored``) or when a comparison found a
    KG empty or unparseable: the statuses, which name the KG (``answer_kg_empty``,
    ``gold_kg_empty, context_kg_unparseable``...; the old pair names are read too).
    ``scored`` holds ``run_id, item_id, gold_status, ctx_status`` of the scored answers.

    Examples
    --------
    >>> st = pd.DataFrame({"run_id": [1, 1, 1], "item_id": [1, 2, 3],
    ...                    "scored": [True, True, False], "answer_status": ["ok"] * 3,
    ...                    "gold_kg_status": ["ok"] * 3, "answer_kg_status": ["ok", "empty", None],
    ...                    "context_kg_status": ["ok"] * 3})
    >>> sc = pd.DataFrame({"run_id": [1, 1], "item_id": [1, 2],
    ...                    "gold_status": ["ok", "answer_kg_empty"],
    ...                    "ctx_status": ["ok", "answer_kg_empty"]})
    >>> scorability(st, sc).tolist()
    [None, 'answer_kg_empty', 'not_extracted']
    """
    reasons = unscored_reasons(statuses)
    merged = statuses[["run_id", "item_id"]].merge(
        scored[["run_id", "item_id", "gold_status", "ctx_status"]],
        on=["run_id", "item_id"],
        how="left",
    )
    out: list[str | None] = []
    for reason, gold, ctx in zip(reasons, merged["gold_status"], merged["ctx_status"], strict=True):
        if reason is not None:
            out.append(str(reason))
            continue
        sides: tuple[tuple[Reference, Any], ...] = (("gold", gold), ("context", ctx))
        parts = dict.fromkeys(
            role_status(status, ref)
            for ref, status in sides
            if isinstance(status, str) and status != "ok"
        )
        out.append(", ".join(parts) or None)
    return pd.Series(out, index=statuses.index, dtype=object)


@dataclass(frozen=True)
class RunComparison:
    """A new run against a baseline on the questions both answered.

    Attributes
    ----------
    baseline, new
        The two runs.
    signature
        The scores' signature (without alpha); ``alpha`` the blend (``None``: as stored).
    empty
        How answers with an empty or unparseable KG count (``zero`` or ``drop``).
    differences
        :class:`PairedDifference` of each of :data:`SCORES`, by name.
    deltas
        :func:`question_deltas` with A the baseline and B the new run.
    unscorable
        The questions both runs answered that the baseline could score and the new run cannot
        (:data:`UNSCORABLE_COLUMNS`; ``baseline`` and ``new`` say why, ``None``: scorable).
    resamples, seed, normal_from
        The bootstrap's settings (:func:`paired_difference`'s).
    """

    baseline: RunInfo
    new: RunInfo
    signature: str
    alpha: float | None
    empty: EmptyPolicy
    differences: dict[str, PairedDifference]
    deltas: pd.DataFrame
    unscorable: pd.DataFrame
    resamples: int
    seed: int
    normal_from: int | None = NORMAL_FROM

    @property
    def confidence(self) -> float:
        """The intervals' two-sided confidence level."""
        return next(iter(self.differences.values())).confidence

    @property
    def shared(self) -> int:
        """Questions compared (both runs have a score for them)."""
        return len(self.deltas)

    def verdict(self, score: str = "cus") -> Verdict:
        """The new run's mean ``score`` against the baseline's: :func:`paired_verdict`."""
        return paired_verdict(self.differences[score])

    def lines(self, signature: str) -> list[str]:
        """What ``s3kg compare`` prints: each score's change and verdict, the facts.

        ``signature`` is the one printed: the scores' with the alpha they are blended at.
        """
        level = f"{self.confidence:.0%}"
        out = [
            f"s3kg compare: {self.new.name} (run {self.new.run_id}) against "
            f"{self.baseline.name} (run {self.baseline.run_id})"
        ]
        for score, d in self.differences.items():
            interval = (
                "no interval"
                if d.method == "none"
                else f"{level} interval {d.low:+.4f} to {d.high:+.4f}"
            )
            out.append(
                f"  {score}: {d.baseline_mean:.4f} -> {d.new_mean:.4f}, change "
                f"{d.difference:+.4f} ({interval}): {self.verdict(score).words()}"
            )
        out += [
            f"  mean CUS against the baseline: {self.verdict().text()}",
            f"  new run: {self.new.label()}",
            f"  baseline: {self.baseline.label()}",
            f"  questions compared: {self.shared}",
            f"  signature: {signature}",
            "  empty KGs: " + ("left out (--empty drop)" if self.empty == "drop" else "scored 0"),
            "  bootstrap: "
            + bootstrap_text(self.resamples, self.seed, self.confidence, self.normal_from),
        ]
        return out

    def to_dict(self, signature: str) -> dict[str, Any]:
        """A JSON-ready dict: the runs, each score's difference and verdict, the settings."""
        return {
            "new": asdict(self.new),
            "baseline": asdict(self.baseline),
            "shared": self.shared,
            "signature": signature,
            "empty": self.empty,
            "differences": {
                score: {**d.to_dict(), "verdict": self.verdict(score).words()}
                for score, d in self.differences.items()
            },
            "verdict": self.verdict().text(),
            "test": self.verdict().test(),
            "resamples": self.resamples,
            "seed": self.seed,
            "normal_from": self.normal_from,
        }


@in_one_session
def compare_runs(
    store: Store,
    new: str | int,
    baseline: str | int,
    *,
    signature: str | None = None,
    alpha: float | None = None,
    empty: EmptyPolicy = "zero",
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    normal_from: int | None = NORMAL_FROM,
) -> RunComparison:
    """Compare run ``new`` with run ``baseline`` (ids or display names) on shared questions.

    Both runs must be of one dataset and scored under ``signature`` (default: the latest).
    With ``empty="drop"`` questions where either run's KG is empty or unparseable are left
    out of the means (they still count in :attr:`RunComparison.unscorable`). Each score's
    difference is :func:`paired_difference` (the normal approximation from ``normal_from``
    shared questions).

    Raises
    ------
    RunSelectionError
        If a run is unknown or its name ambiguous.
    ComparisonError
        If the runs are one run, of other datasets, one of them has no score under the
        signature, or no question is scored in both.
    ConfigError
        If nothing is scored, ``signature`` is unknown or ``empty`` is not zero or drop.
    """
    check_empty_policy(empty)
    old_run, new_run = find_run(store, baseline), find_run(store, new)
    if old_run.run_id == new_run.run_id:
        raise ComparisonError(f"--run and --baseline name one run: {new_run.label()}")
    if old_run.dataset != new_run.dataset:
        raise ComparisonError(
            f"the runs answer other datasets ({new_run.dataset} and {old_run.dataset}); "
            "compare runs of one dataset"
        )
    resolved = resolve_signature(store, signature)
    if resolved is None:
        raise ComparisonError(f"nothing is scored in {store.path}: run `s3kg score` first")
    ids = [old_run.run_id, new_run.run_id]
    with store.connect() as con:
        components = queries.scored_components(con, resolved, ids)  # only these two runs
        statuses = queries.answer_statuses(con, resolved)
        questions = queries.item_texts(con)
    statuses = statuses[statuses["run_id"].isin(ids)].reset_index(drop=True)
    for run in (new_run, old_run):
        if not (components["run_id"] == run.run_id).any():
            raise ComparisonError(
                f"run {run.label()} has no score under signature {resolved}; score it with "
                "the same settings (`s3kg score`) or pass --signature"
            )
    frame = apply_empty_policy(reblend(components, alpha), empty)
    deltas = question_deltas(frame, old_run.run_id, new_run.run_id, questions)
    if deltas.empty:
        raise ComparisonError(
            f"no question is scored in both runs ({new_run.label()}; {old_run.label()})"
        )
    by_item = deltas.set_index("item_id")
    differences = {
        score: paired_difference(
            by_item[f"{score}_b"],
            by_item[f"{score}_a"],
            metric=score,
            confidence=confidence,
            resamples=resamples,
            seed=seed,
            normal_from=normal_from,
        )
        for score in SCORES
    }
    return RunComparison(
        baseline=old_run,
        new=new_run,
        signature=resolved,
        alpha=alpha,
        empty=empty,
        differences=differences,
        deltas=deltas,
        unscorable=_became_unscorable(statuses, components, old_run, new_run, questions),
        resamples=resamples,
        seed=seed,
        normal_from=normal_from,
    )


def _became_unscorable(
    statuses: pd.DataFrame,
    scored: pd.DataFrame,
    old_run: RunInfo,
    new_run: RunInfo,
    questions: pd.DataFrame,
) -> pd.DataFrame:
    why = statuses[["run_id", "item_id"]].assign(why=scorability(statuses, scored))
    old = why[why["run_id"] == old_run.run_id].drop(columns="run_id")
    new = why[why["run_id"] == new_run.run_id].drop(columns="run_id")
    both = old.merge(new, on="item_id", suffixes=("_old", "_new"))
    lost = both[both["why_old"].isna() & both["why_new"].notna()]
    lost = lost.merge(questions[["item_id", "ext_id", "question"]], on="item_id", how="left")
    out = pd.DataFrame(
        {
            "item_id": lost["item_id"].astype(int),
            "ext_id": lost["ext_id"].astype(str),
            "question": lost["question"].fillna("").astype(str),
            "baseline": lost["why_old"],
            "new": lost["why_new"],
        }
    )
    return out.sort_values("item_id", kind="stable").reset_index(drop=True)
