"""Regression gates for CI: a new run (or pair file) within bounds of a baseline, or not.

Each gate passes or fails; ``s3kg check`` exits :data:`EXIT_PASSED` (0) when none fails,
:data:`EXIT_FAILED` (1) when one does, and :data:`EXIT_BAD_INPUT` (2) when the inputs cannot be
checked (an unknown or ambiguous run, other datasets, nothing shared, a signature the runs are
not scored under, an unreadable pair file). The gates on two runs of one dataset, scored under
one signature, compared on the questions both have a score for:

``cus_drop``, ``gold_sim_drop``, ``ctx_sim_drop``
    d is the mean over those questions of the score's change, new minus baseline, and
    [low, high] its paired-bootstrap interval (:func:`~s3kg_core.analysis.compare.
    paired_difference`: seeded, BCa, ``confidence`` 0.95 by default; its normal approximation
    from :data:`~s3kg_core.stats.NORMAL_FROM` questions). The gate **fails when
    high < -max_drop**: even the most favourable end of the interval is a drop larger than
    ``max_drop``, so the drop is larger with (one-sided) confidence (1 + confidence) / 2,
    97.5 %. When only low is below -max_drop the gate passes, marked inconclusive (more
    questions would tell). GoldSim's and CtxSim's bounds default to CUS's.
``min_cus``
    The new run's mean CUS over all its scored answers (not only the shared ones) is at least
    ``min_cus`` (the mean itself, no interval).
``new_unscorable``
    At most ``max_new_unscorable`` (0) of the questions scorable in the baseline are not in the
    new run: no score under the signature (collect error, KG extraction failed, not extracted,
    not scored), a KG empty or unparseable, or not answered at all (``missing``; with
    ``allow_missing`` a question the new run did not answer is left out instead).

Beside the gates the check states the verdict on mean CUS that every surface gives for the two
runs (:meth:`~s3kg_core.analysis.compare.RunComparison.verdict`: clearly lower, clearly higher
or no clear difference, and the test).

A measure that is not a number fails its gate: a stored score whose components hold NaN
(a damaged database, or one written by hand) makes the drop gates of its scores and
``min_cus`` fail, naming the questions, where a NaN would otherwise compare as passing.

On two ``s3kg pairs score`` outputs (``id,s_wl,s_sbert,s3kg,status``), rows paired by id (the
k-th row of an id with the k-th of the same id): ``s3kg_drop`` (as ``cus_drop``, on the
``s3kg`` column, a row that could not be scored counting as its 0), ``min_score`` (the new
file's mean ``s3kg`` over all its rows) and ``new_failed`` (rows ``ok`` in the baseline and not
in the new file, ``missing`` from it included unless ``allow_missing``, at most
``max_new_unscorable``). Pair files carry no signature: compare files
scored with the same settings.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..errors import ComparisonError, ConfigError, InputFormatError
from ..scoring.signature import Signature
from ..stages.scored import (
    EmptyPolicy,
    apply_empty_policy,
    blend_alpha,
    check_empty_policy,
    reblend,
    resolve_signature,
)
from ..stats import DEFAULT_RESAMPLES, NORMAL_FROM, PairedDifference, paired_bootstrap
from ..store import queries
from ..store.store import Store, in_one_session
from ..tables import read_csv_rows
from .compare import RunComparison, bootstrap_text, compare_runs, find_run, scorability

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_FAILED",
    "EXIT_PASSED",
    "REGRESSION_COLUMNS",
    "CheckResult",
    "CheckSettings",
    "Gate",
    "check_pairs",
    "check_runs",
    "read_pair_scores",
]

EXIT_PASSED = 0
"""Exit status when every gate passes."""
EXIT_FAILED = 1
"""Exit status when a gate fails."""
EXIT_BAD_INPUT = 2
"""Exit status when the inputs cannot be checked (the message says why)."""

REGRESSION_COLUMNS = ("id", "question", "baseline", "new", "change")
"""The columns of :attr:`CheckResult.regressions`."""

_TITLES = {"cus": "CUS", "gold_sim": "GoldSim", "ctx_sim": "CtxSim", "s3kg": "S3KG"}
_SHOWN = 10
_COMPONENTS = ("gold_s_wl", "gold_s_sbert", "ctx_s_wl", "ctx_s_sbert")


@dataclass(frozen=True)
class CheckSettings:
    """The bounds of the gates and the bootstrap's settings.

    Attributes
    ----------
    max_drop
        The largest mean drop of CUS (of ``s3kg`` for pair files) allowed, as a positive score
        difference (0.02: two hundredths).
    max_gold_drop, max_ctx_drop
        The same for GoldSim and CtxSim (``None``: ``max_drop``).
    min_cus
        The least mean CUS of the new run (``None``: no such gate).
    min_score
        The least mean ``s3kg`` of a new pair file (``None``: no such gate).
    max_new_unscorable
        How many answers (pair rows) may become unscorable.
    confidence, resamples, seed, normal_from
        The paired bootstrap's two-sided confidence level, resamples and seed, and the
        questions (pairs) from which its interval is the normal approximation (``None``: never).
    allow_missing
        Leave out the questions (pair rows) of the baseline the new run (file) lacks; by
        default each counts against it as unscorable (``missing``).
    """

    max_drop: float = 0.02
    max_gold_drop: float | None = None
    max_ctx_drop: float | None = None
    min_cus: float | None = None
    min_score: float | None = None
    max_new_unscorable: int = 0
    confidence: float = 0.95
    resamples: int = DEFAULT_RESAMPLES
    seed: int = 0
    allow_missing: bool = False
    normal_from: int | None = NORMAL_FROM

    def __post_init__(self) -> None:
        for name in ("max_drop", "max_gold_drop", "max_ctx_drop"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value >= 0):
                raise ConfigError(f"{name} must be a score difference of 0 or more; got {value}")
        if self.max_new_unscorable < 0:
            raise ConfigError("max_new_unscorable must be 0 or more")
        if not 0.0 < self.confidence < 1.0:
            raise ConfigError(f"confidence must be between 0 and 1; got {self.confidence}")
        if self.resamples < 100:
            raise ConfigError(f"resamples must be 100 or more; got {self.resamples}")

    def allowed_drop(self, metric: str) -> float:
        """The largest drop allowed for ``metric``."""
        chosen = {"gold_sim": self.max_gold_drop, "ctx_sim": self.max_ctx_drop}.get(metric)
        return self.max_drop if chosen is None else chosen


@dataclass(frozen=True)
class Gate:
    """One gate's verdict.

    Attributes
    ----------
    name
        A stable identifier (``cus_drop``): the JUnit test case's name.
    title
        What a reader sees (``CUS drop``).
    passed
        Whether the gate passes.
    measured
        The measurement, in words and numbers.
    rule
        When the gate fails.
    detail
        More: the questions concerned, a note on an inconclusive interval ("" if none).
    value
        The number the rule reads (``None`` when there is none).
    inconclusive
        Passed, but the interval reaches past the bound.
    """

    name: str
    title: str
    passed: bool
    measured: str
    rule: str
    detail: str = ""
    value: float | None = None
    inconclusive: bool = False


@dataclass(frozen=True)
class CheckResult:
    """The gates of one check, what was compared, and the questions behind a failure.

    Attributes
    ----------
    title
        ``new run against baseline`` in words.
    gates
        Every gate, in the order run.
    facts
        ``(label, value)`` pairs: the runs, dataset, signature, questions compared, settings.
    regressions
        The biggest drops of the gated score (CUS, or ``s3kg``), worst first, at most 10
        (:data:`REGRESSION_COLUMNS`); empty without a baseline.
    unscorable
        The answers (pair rows) that became unscorable: ``id, question, baseline, new``.
    seconds
        How long the check took.
    comparison
        The run comparison behind the gates (``None`` for pair files or without a baseline).
    """

    title: str
    gates: tuple[Gate, ...]
    facts: tuple[tuple[str, str], ...]
    regressions: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(REGRESSION_COLUMNS))
    )
    unscorable: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=["id", "question", "baseline", "new"])
    )
    seconds: float = 0.0
    comparison: RunComparison | None = None

    @property
    def failed(self) -> tuple[Gate, ...]:
        """The gates that fail."""
        return tuple(g for g in self.gates if not g.passed)

    @property
    def passed(self) -> bool:
        """Whether every gate passes."""
        return not self.failed

    @property
    def exit_code(self) -> int:
        """:data:`EXIT_PASSED` or :data:`EXIT_FAILED`."""
        return EXIT_PASSED if self.passed else EXIT_FAILED

    def verdict(self) -> str:
        """``passed: 4 gates`` or ``FAILED: 1 of 4 gates``."""
        if self.passed:
            return f"passed: {len(self.gates)} gates"
        return f"FAILED: {len(self.failed)} of {len(self.gates)} gates"

    def lines(self) -> list[str]:
        """What ``s3kg check`` prints: the verdict, one line per gate, the facts."""
        out = [f"s3kg check: {self.title}: {self.verdict()}"]
        for gate in self.gates:
            mark = "PASS" if gate.passed else "FAIL"
            out.append(f"  {mark} {gate.name}: {gate.measured}; fails when {gate.rule}")
            if gate.detail:
                out.append(f"       {gate.detail}")
        out += [f"  {label}: {value}" for label, value in self.facts]
        return out


def _nan_gate(name: str, title: str, rule: str, nan_ids: list[str]) -> Gate:
    shown = ", ".join(nan_ids[:5]) + (f" and {len(nan_ids) - 5} more" if len(nan_ids) > 5 else "")
    return Gate(
        name,
        title,
        False,
        f"not a number: {len(nan_ids)} stored scores hold NaN",
        rule + ", or the measure is not a number",
        f"NaN in the stored scores of {shown}: the database is damaged or was written by "
        "hand; score these answers again",
        math.nan,
    )


def _drop_gate(
    name: str, title: str, diff: PairedDifference, allowed: float, nan_ids: list[str] | None = None
) -> Gate:
    level = f"{diff.confidence:.0%}"
    rule = f"the whole {level} interval is below -{allowed:g} (a drop larger than {allowed:g})"
    if nan_ids or not math.isfinite(diff.difference):
        return _nan_gate(name, title, rule, nan_ids or ["the compared answers"])
    if diff.method == "none":
        measured = f"{diff.difference:+.4f} on one question (no interval)"
        return Gate(
            name,
            title,
            True,
            measured,
            rule,
            "one question gives no interval: the gate cannot fail with confidence",
            diff.difference,
            inconclusive=diff.difference < -allowed,
        )
    measured = (
        f"{diff.difference:+.4f} ({level} interval {diff.low:+.4f} to {diff.high:+.4f}; "
        f"baseline {diff.baseline_mean:.4f}, new {diff.new_mean:.4f}, n={diff.n})"
    )
    passed = not diff.high < -allowed
    inconclusive = passed and diff.low < -allowed
    detail = (
        f"inconclusive: the interval reaches below -{allowed:g}; more questions would tell"
        if inconclusive
        else ""
    )
    return Gate(name, title, passed, measured, rule, detail, diff.difference, inconclusive)


def _min_gate(name: str, title: str, mean: float, n: str, least: float) -> Gate:
    return Gate(
        name,
        title,
        bool(mean >= least),
        f"{mean:.4f} over {n}",
        f"the mean is below {least:g}",
        value=mean,
    )


def _unscorable_gate(
    name: str, title: str, lost: pd.DataFrame, of: int, most: int, among: str = "shared"
) -> Gate:
    shown = "; ".join(f"{r.id}: {r.new}" for r in lost.head(5).itertuples())
    more = f" and {len(lost) - 5} more" if len(lost) > 5 else ""
    return Gate(
        name,
        title,
        len(lost) <= most,
        f"{len(lost)} of {of} {among}",
        f"more than {most} become unscorable",
        (shown + more) if shown else "",
        float(len(lost)),
    )


def _regressions(ids: pd.Series, questions: pd.Series, a: pd.Series, b: pd.Series) -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "id": ids.astype(str).to_numpy(),
            "question": questions.fillna("").astype(str).to_numpy(),
            "baseline": a.to_numpy(dtype=float),
            "new": b.to_numpy(dtype=float),
        }
    )
    frame["change"] = frame["new"] - frame["baseline"]
    worse = frame[frame["change"] < 0].sort_values(["change", "id"], kind="stable")
    return worse.head(_SHOWN).reset_index(drop=True)


@in_one_session
def check_runs(
    store: Store,
    new: str | int,
    baseline: str | int | None = None,
    *,
    settings: CheckSettings | None = None,
    signature: str | None = None,
    alpha: float | None = None,
    empty: EmptyPolicy = "zero",
) -> CheckResult:
    """Run the gates on run ``new`` (id or display name), against ``baseline`` if given.

    Without a baseline only ``min_cus`` can run, so ``settings.min_cus`` is then required.

    Raises
    ------
    RunSelectionError, ComparisonError, ConfigError
        On input that cannot be checked (see :data:`EXIT_BAD_INPUT`): an unknown or ambiguous
        run, other datasets, no shared scored question, no score under the signature, or
        nothing to check.
    """
    started = time.perf_counter()
    settings = settings or CheckSettings()
    check_empty_policy(empty)
    if baseline is None and settings.min_cus is None:
        raise ConfigError("nothing to check: name a baseline (--baseline) or a --min-cus")
    gates: list[Gate] = []
    comparison = None
    if baseline is not None:
        comparison = compare_runs(
            store,
            new,
            baseline,
            signature=signature,
            alpha=alpha,
            empty=empty,
            confidence=settings.confidence,
            resamples=settings.resamples,
            seed=settings.seed,
            normal_from=settings.normal_from,
        )
        nan_ids = _nan_questions(store, comparison)
        for metric in ("cus", "gold_sim", "ctx_sim"):
            gates.append(
                _drop_gate(
                    f"{metric}_drop",
                    f"{_TITLES[metric]} drop",
                    comparison.differences[metric],
                    settings.allowed_drop(metric),
                    nan_ids[metric],
                )
            )
        new_run, resolved = comparison.new, comparison.signature
    else:
        new_run = find_run(store, new)
        resolved = resolve_signature(store, signature) or ""
        if not resolved:
            raise ComparisonError(f"nothing is scored in {store.path}: run `s3kg score` first")
    if settings.min_cus is not None:
        with store.connect() as con:
            components = queries.scored_components(con, resolved)
        mine = reblend(components[components["run_id"] == new_run.run_id], alpha)
        mine = apply_empty_policy(mine, empty)
        if mine.empty:
            raise ComparisonError(
                f"run {new_run.label()} has no score under signature {resolved}; score it "
                "(`s3kg score`) or pass --signature"
            )
        broken = mine[mine[list(_COMPONENTS)].isna().any(axis=1)]
        if not broken.empty:
            with store.connect() as con:
                texts = queries.item_texts(con)
            names = texts.set_index("item_id")["ext_id"].astype(str)
            gates.append(
                _nan_gate(
                    "min_cus",
                    "Mean CUS",
                    f"the mean is below {settings.min_cus:g}",
                    sorted(str(names.get(i, i)) for i in broken["item_id"]),
                )
            )
        else:
            gates.append(
                _min_gate(
                    "min_cus",
                    "Mean CUS",
                    float(mine["cus"].mean()),
                    f"{len(mine)} scored answers",
                    settings.min_cus,
                )
            )
    facts = [("new run", new_run.label())]
    regressions = pd.DataFrame(columns=list(REGRESSION_COLUMNS))
    unscorable = pd.DataFrame(columns=["id", "question", "baseline", "new"])
    if comparison is not None:
        lost = comparison.unscorable.rename(columns={"ext_id": "id"})
        answered, missing, in_baseline = _answered(store, comparison)
        if settings.allow_missing:
            of, among = answered, "shared"
        else:
            lost = (
                pd.concat([lost, missing], ignore_index=True)
                .sort_values("item_id", kind="stable")
                .reset_index(drop=True)
            )
            of, among = in_baseline, "in the baseline"
        gates.append(
            _unscorable_gate(
                "new_unscorable",
                "Answers that became unscorable",
                lost,
                of,
                settings.max_new_unscorable,
                among,
            )
        )
        facts += [
            ("baseline", comparison.baseline.label()),
            ("questions compared", str(comparison.shared)),
            ("mean CUS against the baseline", comparison.verdict().text()),
        ]
        d = comparison.deltas
        regressions = _regressions(d["ext_id"], d["question"], d["cus_a"], d["cus_b"])
        unscorable = lost[["id", "question", "baseline", "new"]]
    facts += [
        ("dataset", new_run.dataset),
        ("signature", Signature.blended(resolved, blend_alpha(store, resolved, alpha))),
        ("empty KGs", "left out (--empty drop)" if empty == "drop" else "scored 0"),
    ]
    if comparison is not None:
        facts.append(_bootstrap_fact(settings))
    title = new_run.name + (
        f" (run {new_run.run_id}) against {comparison.baseline.name} "
        f"(run {comparison.baseline.run_id})"
        if comparison is not None
        else f" (run {new_run.run_id})"
    )
    return CheckResult(
        title,
        tuple(gates),
        tuple(facts),
        regressions,
        unscorable,
        time.perf_counter() - started,
        comparison,
    )


def _answered(store: Store, comparison: RunComparison) -> tuple[int, pd.DataFrame, int]:
    """The questions both runs answered, those missing and those the baseline answered.

    The missing are the questions scorable in the baseline the new run did not answer
    (``item_id, id, question, baseline, new``, ``new`` being ``missing``).
    """
    ids = [comparison.baseline.run_id, comparison.new.run_id]
    with store.connect() as con:
        statuses = queries.answer_statuses(con, comparison.signature)
        components = queries.scored_components(con, comparison.signature, ids)
        texts = queries.item_texts(con)
    statuses = statuses[statuses["run_id"].isin(ids)].reset_index(drop=True)
    old = statuses[statuses["run_id"] == comparison.baseline.run_id]
    new_items = set(statuses.loc[statuses["run_id"] == comparison.new.run_id, "item_id"])
    why = scorability(old.reset_index(drop=True), components)
    gone = old.reset_index(drop=True)[
        why.isna().to_numpy() & ~old["item_id"].isin(new_items).to_numpy()
    ]
    gone = gone[["item_id"]].merge(
        texts[["item_id", "ext_id", "question"]], on="item_id", how="left"
    )
    missing = pd.DataFrame(
        {
            "item_id": gone["item_id"].astype(int),
            "id": gone["ext_id"].astype(str),
            "question": gone["question"].fillna("").astype(str),
            "baseline": None,
            "new": "missing",
        }
    )
    answered_old = set(old["item_id"])
    return len(answered_old & new_items), missing, len(answered_old)


def _nan_questions(store: Store, comparison: RunComparison) -> dict[str, list[str]]:
    """Per score, the questions compared whose stored components (of either run) hold NaN."""
    ids = [comparison.baseline.run_id, comparison.new.run_id]
    with store.connect() as con:
        components = queries.scored_components(con, comparison.signature, ids)
    shared = comparison.deltas[["item_id", "ext_id"]]
    rows = components.merge(shared, on="item_id")
    gold = rows[["gold_s_wl", "gold_s_sbert"]].isna().any(axis=1)
    ctx = rows[["ctx_s_wl", "ctx_s_sbert"]].isna().any(axis=1)

    def named(mask: pd.Series) -> list[str]:
        return sorted(set(rows.loc[mask, "ext_id"].astype(str)))

    return {"gold_sim": named(gold), "ctx_sim": named(ctx), "cus": named(gold | ctx)}


def _bootstrap_fact(settings: CheckSettings) -> tuple[str, str]:
    return (
        "bootstrap",
        bootstrap_text(
            settings.resamples, settings.seed, settings.confidence, settings.normal_from
        ),
    )


def _shown(text: str, limit: int = 80) -> str:
    """``text`` for a one-line message: unprintable characters as U+FFFD, at most ``limit``."""
    clean = "".join(c if c.isprintable() else "\ufffd" for c in text[: limit + 1])
    return clean if len(clean) <= limit else clean[: limit - 3] + "..."


def read_pair_scores(path: str | Path) -> pd.DataFrame:
    r"""An ``s3kg pairs score`` output: ``id, occurrence, s3kg, status``, in file order.

    ``occurrence`` numbers the rows of one id (0, 1, ...), so files with repeated ids pair
    row by row.

    Raises
    ------
    InputFormatError
        If the file cannot be read, lacks ``id``, ``s3kg`` or ``status``, has no rows, or a
        score is not a number in [0, 1]. Text from the file is shown printable, at most 80
        characters.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "out.csv"
    >>> _ = path.write_text("id,s3kg,status\na,0.5,ok\na,0.0,empty_kg_1\n")
    >>> read_pair_scores(path).to_dict("records")  # doctest: +NORMALIZE_WHITESPACE
    [{'id': 'a', 'occurrence': 0, 's3kg': 0.5, 'status': 'ok'},
     {'id': 'a', 'occurrence': 1, 's3kg': 0.0, 'status': 'empty_kg_1'}]
    """
    path = Path(path)
    table = read_csv_rows(path, strip_header=True, what="pair scores ")
    missing = [c for c in ("id", "s3kg", "status") if c not in table.header]
    if missing:
        raise InputFormatError(
            f"{path.name}: not an `s3kg pairs score` output: no {', '.join(missing)} column; "
            f"found {_shown(', '.join(table.header)) or 'none'}"
        )
    if not table.rows:
        raise InputFormatError(f"{path.name}: no rows to check")
    seen: Counter[str] = Counter()
    records = []
    for row in table.rows:
        pair_id = (row.cells["id"] or "").strip()
        try:
            score = float(row.cells["s3kg"] or "")
        except ValueError:
            raise InputFormatError(
                f"{path.name}: row {row.number} (id {_shown(repr(pair_id))}): s3kg "
                f"{_shown(repr(row.cells['s3kg']))} is not a number"
            ) from None
        if not math.isfinite(score):
            raise InputFormatError(f"{path.name}: row {row.number}: s3kg {score} is not finite")
        if not 0.0 <= score <= 1.0:
            raise InputFormatError(
                f"{path.name}: row {row.number} (id {_shown(repr(pair_id))}): s3kg {score:g} is "
                "outside [0, 1]: not an `s3kg pairs score` output"
            )
        records.append((pair_id, seen[pair_id], score, (row.cells["status"] or "").strip()))
        seen[pair_id] += 1
    return pd.DataFrame(records, columns=["id", "occurrence", "s3kg", "status"])


def check_pairs(
    new: str | Path,
    baseline: str | Path | None = None,
    *,
    settings: CheckSettings | None = None,
) -> CheckResult:
    """Run the gates on an ``s3kg pairs score`` output, against a baseline output if given.

    Raises
    ------
    InputFormatError
        If a file is not a readable pairs output.
    ComparisonError
        If the two files share no id.
    ConfigError
        If there is nothing to check (no baseline and no ``settings.min_score``).
    """
    started = time.perf_counter()
    settings = settings or CheckSettings()
    if baseline is None and settings.min_score is None:
        raise ConfigError("nothing to check: name --baseline-pairs or a --min-score")
    new_rows = read_pair_scores(new)
    gates: list[Gate] = []
    facts = [("new pairs", str(new)), ("rows", str(len(new_rows)))]
    regressions = pd.DataFrame(columns=list(REGRESSION_COLUMNS))
    unscorable = pd.DataFrame(columns=["id", "question", "baseline", "new"])
    if baseline is not None:
        old_rows = read_pair_scores(baseline)
        both = old_rows.merge(new_rows, on=["id", "occurrence"], suffixes=("_a", "_b"))
        if both.empty:
            raise ComparisonError(f"{Path(new).name} and {Path(baseline).name} share no pair id")
        diff = paired_bootstrap(
            both["s3kg_b"].to_numpy(),
            both["s3kg_a"].to_numpy(),
            metric="s3kg",
            confidence=settings.confidence,
            resamples=settings.resamples,
            seed=settings.seed,
            normal_from=settings.normal_from,
        )
        gates.append(_drop_gate("s3kg_drop", "S3KG drop", diff, settings.max_drop))
        # in the baseline's order; a row the new file lacks is "missing" (or left out)
        rows = old_rows.merge(new_rows, on=["id", "occurrence"], how="left", suffixes=("_a", "_b"))
        if settings.allow_missing:
            rows = rows[rows["status_b"].notna()]
            of, among = len(both), "shared"
        else:
            rows = rows.assign(status_b=rows["status_b"].fillna("missing"))
            of, among = len(old_rows), "in the baseline"
        lost = rows[(rows["status_a"] == "ok") & (rows["status_b"] != "ok")]
        unscorable = pd.DataFrame(
            {
                "id": lost["id"],
                "question": "",
                "baseline": lost["status_a"],
                "new": lost["status_b"],
            }
        ).reset_index(drop=True)
        gates.append(
            _unscorable_gate(
                "new_failed",
                "Pairs that became unscorable",
                unscorable,
                of,
                settings.max_new_unscorable,
                among,
            )
        )
        regressions = _regressions(
            both["id"], pd.Series([""] * len(both)), both["s3kg_a"], both["s3kg_b"]
        )
        facts += [
            ("baseline pairs", str(baseline)),
            ("pairs compared", str(len(both))),
            _bootstrap_fact(settings),
        ]
    if settings.min_score is not None:
        gates.append(
            _min_gate(
                "min_score",
                "Mean S3KG",
                float(new_rows["s3kg"].mean()),
                f"{len(new_rows)} pairs",
                settings.min_score,
            )
        )
    facts.append(("signature", "not recorded in pair files: score both with the same settings"))
    title = Path(new).name + (f" against {Path(baseline).name}" if baseline is not None else "")
    return CheckResult(
        title,
        tuple(gates),
        tuple(facts),
        regressions,
        unscorable,
        time.perf_counter() - started,
    )
