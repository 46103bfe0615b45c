"""GraphEval's Table 2: balanced accuracy of a checker alone (raw) and with the KG.

For every summary of a benchmark (:mod:`s3kg_core.evaluation.summ_sets`, test split by default)
the raw checker judges the whole summary against the article, and GraphEval judges every triple
of the summary's KG; a summary is predicted inconsistent when the probability (raw) or any
triple's probability (KG) exceeds 0.5 (or by another
:class:`~s3kg_core.grapheval.aggregate.Aggregator`). Labels in the files are 1 = consistent;
balanced accuracy (scikit-learn) is computed with "consistent" as the positive class. Summaries
whose KG has no triple are predicted consistent (nothing flagged); summaries the checker could
not judge at all are predicted consistent too, and both are counted in the result.

:func:`run_bench` is ``s3kg grapheval bench``. Beside it, what comparing checkers needs
(``bench/experiments/bench_trained_checker.py``): :func:`tune_aggregator` (a threshold chosen
on dev), :func:`table2_entry` (balanced accuracy at 0.5 and at the dev threshold with bootstrap
intervals, AUROCs of raw, max and mean), :func:`compare_checkers` (several checkers,
interleaved, on dev and test) and :func:`failure_examples`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import GraphEvalError
from ..extract.base import Extractor
from ..grapheval.aggregate import DEFAULT_AGGREGATOR, Aggregator, MeanAggregator
from ..grapheval.checkers.base import Checker, triple_claim
from ..grapheval.detect import Detection, GraphEval
from ..progress import Progress
from ..text import STOP_WORDS
from .metrics import auroc, balanced_accuracy, best_threshold, bootstrap_ci
from .summ_sets import SummSet, load_summ_set

__all__ = [
    "SUMMARY_MODES",
    "compare_checkers",
    "failure_examples",
    "run_bench",
    "stratified_limit",
    "summary_scores",
    "table2_entry",
    "tune_aggregator",
]

SUMMARY_MODES = ("raw", "kg")
"""How a summary is judged: whole against the article (``raw``), or by its KG's triples."""

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+|\d+(?:[.,]\d+)*")


def stratified_limit(labels: Sequence[int], limit: int | None, seed: int = 0) -> list[int]:
    """Indices of a seeded, label-stratified sample of at most ``limit`` (all when ``None``).

    Examples
    --------
    >>> idx = stratified_limit([1, 1, 1, 1, 0, 0, 0, 0], 4, seed=1)
    >>> len(idx), sorted(set([1, 1, 1, 1, 0, 0, 0, 0][i] for i in idx))
    (4, [0, 1])
    """
    n = len(labels)
    if limit is None or limit >= n:
        return list(range(n))
    if limit < 1:
        raise GraphEvalError(f"limit must be >= 1; got {limit}")
    rng = np.random.default_rng(seed)
    arr = np.asarray(labels)
    picked: list[int] = []
    classes = sorted(set(arr.tolist()))
    quotas = {c: round(limit * float((arr == c).mean())) for c in classes}
    for c in classes:  # keep every class present when the limit allows it
        quotas[c] = max(quotas[c], 1 if limit >= len(classes) else 0)
    while sum(quotas.values()) > limit:
        biggest = max(quotas, key=lambda c: quotas[c])
        quotas[biggest] -= 1
    for c in classes:
        members = np.flatnonzero(arr == c)
        picked.extend(rng.choice(members, size=min(quotas[c], len(members)), replace=False))
    return sorted(int(i) for i in picked)


def _prediction(d: Detection) -> int:
    """1 = predicted consistent."""
    return 0 if d.inconsistent else 1


def run_bench(
    dataset: str | SummSet,
    checker: Checker,
    extractor: Extractor | None = None,
    *,
    data_dir: str | Path | None = None,
    split: str = "test",
    limit: int | None = None,
    seed: int = 0,
    raw: bool = True,
    detail_path: str | Path | None = None,
    progress: Progress | None = None,
    aggregator: Aggregator = DEFAULT_AGGREGATOR,
) -> dict[str, Any]:
    """Run GraphEval (and the raw checker) on a benchmark; return the result as a dict.

    Parameters
    ----------
    dataset
        ``summeval``, ``qags_c``, ``qags_x``, or a loaded :class:`SummSet`.
    checker, extractor
        The checker, and the KG extractor (default: offline spaCy).
    data_dir, split
        Where the files are; which split (``test``, ``dev`` or ``all``).
    limit, seed
        A seeded stratified sample of at most ``limit`` summaries.
    raw
        Also run the raw checker.
    detail_path
        A JSON Lines file to write every summary's detection to.
    progress
        ``progress(done, total)`` over the summaries.
    aggregator
        The KG verdict's rule (default: GraphEval's, any triple over 0.5); the result names
        any other in ``"aggregator"``.

    Returns
    -------
    dict
        ``{"dataset", "n", "checker", "extractor", "raw": {"balanced_accuracy"},
        "kg": {"balanced_accuracy", "flagged_triples"}, ...}`` plus split, counts, signature
        and timings; ``"replaced_rows"`` lists the file's rows whose bytes that were not UTF-8
        were replaced (only when there are such rows).

    Raises
    ------
    GraphEvalError
        If the selected summaries hold one class only.
    """
    summ = (
        dataset
        if isinstance(dataset, SummSet)
        else load_summ_set(dataset, data_dir=data_dir, split=split)
    )
    if isinstance(dataset, SummSet):
        summ = summ.select(split) if split != "all" else summ
    keep = stratified_limit(summ.labels(), limit, seed)
    examples = [summ.examples[i] for i in keep]
    labels = [e.label for e in examples]
    if len(set(labels)) < 2:
        raise GraphEvalError(
            f"{summ.name} ({split}, n={len(labels)}) holds one class only; balanced accuracy "
            "needs consistent and inconsistent summaries (raise --limit or use --split all)"
        )
    ge = GraphEval(checker, extractor, aggregator=aggregator)
    started = time.perf_counter()
    detections = ge.detect_many(
        [e.answer for e in examples], [e.context for e in examples], raw=raw, progress=progress
    )
    seconds = time.perf_counter() - started
    kg_pred = [_prediction(d) for d in detections]
    result: dict[str, Any] = {
        "dataset": summ.name,
        "n": len(examples),
        "checker": checker.name,
        "extractor": ge.extractor.name,
        "raw": None,
        "kg": {
            "balanced_accuracy": round(balanced_accuracy(labels, kg_pred), 6),
            "flagged_triples": sum(len(d.flagged) for d in detections),
            "triples": sum(len(d.triples) for d in detections),
            "predicted_inconsistent": sum(1 for p in kg_pred if p == 0),
            "no_triples": sum(1 for d in detections if d.status == "no_triples"),
            "unjudged": sum(1 for d in detections if d.inconsistent is None),
        },
        "split": summ.split if not isinstance(dataset, SummSet) else split,
        "limit": limit,
        "seed": seed,
        "labels": {"consistent": sum(labels), "inconsistent": len(labels) - sum(labels)},
        "checker_signature": checker.signature,
        "seconds": round(seconds, 3),
    }
    if aggregator != DEFAULT_AGGREGATOR:
        result["aggregator"] = aggregator.signature
    if summ.replaced_rows:
        result["replaced_rows"] = list(summ.replaced_rows)
    if raw:
        raw_pred = [0 if d.raw_inconsistent else 1 for d in detections]
        result["raw"] = {
            "balanced_accuracy": round(balanced_accuracy(labels, raw_pred), 6),
            "predicted_inconsistent": sum(1 for p in raw_pred if p == 0),
        }
    if detail_path is not None:
        path = Path(detail_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as fh:
            for e, d in zip(examples, detections, strict=True):
                row = {"uid": e.uid, "label": e.label, "answer": e.answer, **d.to_dict()}
                fh.write(json.dumps(row) + "\n")
        result["detail_file"] = str(path)
    return result


# -- comparing checkers -------------------------------------------------------------------------


def summary_scores(
    detections: Sequence[Detection], mode: str = "kg", aggregator: Aggregator = DEFAULT_AGGREGATOR
) -> list[float]:
    """Each summary's score of being inconsistent: its raw probability, or its KG's aggregate.

    A summary without a score (raw mode not run, no triple judged) scores 0.0, as it is then
    predicted consistent.

    Examples
    --------
    >>> from s3kg_core.kg import Triple
    >>> d = Detection((Triple("a", "r", "b"), Triple("c", "r", "d")), (0.9, 0.3), (0,), True,
    ...               raw_probability=0.2)
    >>> summary_scores([d]), summary_scores([d], "raw"), summary_scores([d], "kg", MeanAggregator())
    ([0.9], [0.2], [0.6])
    """
    if mode not in SUMMARY_MODES:
        raise GraphEvalError(f"mode must be one of {SUMMARY_MODES}; got {mode!r}")
    if mode == "raw":
        return [d.raw_probability or 0.0 for d in detections]
    return [aggregator.score(d.probabilities) or 0.0 for d in detections]


def tune_aggregator(
    aggregator: Aggregator, detections: Sequence[Detection], labels: Sequence[int]
) -> Aggregator:
    """``aggregator`` at the threshold with the best balanced accuracy on these (dev) summaries.

    See :func:`~s3kg_core.evaluation.metrics.best_threshold`: 0.5 and every score (to 4
    decimals) are tried; ties keep the lowest. Never tune on the test articles.

    Examples
    --------
    >>> from s3kg_core.kg import Triple
    >>> ds = [Detection((Triple("a", "r", "b"),), (p,), (), p > 0.5) for p in (0.3, 0.4, 0.1)]
    >>> tune_aggregator(DEFAULT_AGGREGATOR, ds, [0, 0, 1]).threshold
    0.1
    """
    return aggregator.with_threshold(
        best_threshold(summary_scores(detections, "kg", aggregator), labels)
    )


def _consistent(scores: Sequence[float], threshold: float) -> list[int]:
    return [0 if s > threshold else 1 for s in scores]


def _bacc_ci(labels: Sequence[int], predicted: Sequence[int], n: int, seed: int) -> list[float]:
    low, high = bootstrap_ci(
        lambda s, y: balanced_accuracy(y, s), np.asarray(predicted, float), labels, n=n, seed=seed
    )
    return [round(low, 3), round(high, 3)]


def table2_entry(
    labels: Sequence[int],
    detections: Sequence[Detection],
    thresholds: Mapping[str, float] | None = None,
    *,
    bootstrap: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """One checker's figures on one set's test summaries, as the checker comparison tabulates.

    Balanced accuracy (label 1 = consistent) of raw mode and of the KG (GraphEval's rule) at
    0.5, with 95 % bootstrap intervals resampled per class; with ``thresholds`` (``raw``,
    ``kg``: chosen on dev, see :func:`tune_aggregator`) at those too. AUROC of each mode's
    score for *inconsistent* (raw: the whole summary's probability; ``kg``: the highest
    triple's; ``kg_mean``: the mean triple's), with intervals. Figures rounded to 3 decimals.

    Raises
    ------
    InputFormatError
        If the labels hold one class only.
    """
    y = list(labels)
    raw, kg = summary_scores(detections, "raw"), summary_scores(detections, "kg")
    kg_mean = summary_scores(detections, "kg", MeanAggregator())
    entry: dict[str, Any] = {"n": len(y)}
    for name, scores in (("raw", raw), ("kg", kg)):
        pred = _consistent(scores, DEFAULT_AGGREGATOR.threshold)
        entry[name] = round(balanced_accuracy(y, pred), 3)
        entry[f"{name}_ci"] = _bacc_ci(y, pred, bootstrap, seed)
    for name, scores in (("raw", raw), ("kg", kg)):
        if thresholds is not None:
            t = thresholds[name]
            entry[f"{name}_dev_threshold"] = t
            entry[f"{name}_at_dev_threshold"] = round(
                balanced_accuracy(y, _consistent(scores, t)), 3
            )
    inconsistent = np.asarray([1 - v for v in y])
    for name, scores in (("raw", raw), ("kg", kg), ("kg_mean", kg_mean)):
        s = np.asarray(scores, float)
        entry[f"{name}_auroc"] = round(auroc(s, inconsistent), 3)
        low, high = bootstrap_ci(auroc, s, inconsistent, n=bootstrap, seed=seed)
        entry[f"{name}_auroc_ci"] = [round(low, 3), round(high, 3)]
    return entry


def _read_run(detail: Path, summary: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rows = [json.loads(x) for x in detail.read_text(encoding="utf-8").splitlines() if x.strip()]
    return json.loads(summary.read_text(encoding="utf-8")), rows


def compare_checkers(
    datasets: Sequence[str],
    checkers: Mapping[str, Checker],
    extractor: Extractor | None = None,
    *,
    out_dir: str | Path,
    data_dir: str | Path | None = None,
    test_limits: Mapping[str, int | None] | None = None,
    dev_limit: int | None = 120,
    seed: int = 0,
    bootstrap: int = 1000,
    reuse: bool = False,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Several checkers on the same summaries, raw and with the KG, on dev and test.

    For each set and split (dev, then test), every checker in turn runs :func:`run_bench` on
    the same seeded stratified sample (``dev_limit``; ``test_limits[set]``, all when ``None``),
    so their summaries/s are comparable; each run's detections go to
    ``out_dir/tc.<checker>.<set>.<split>.jsonl`` and its result beside it (``.result.json``).
    A threshold per checker and mode is chosen on the dev summaries pooled over the sets
    (:func:`tune_aggregator`) and applied to test (:func:`table2_entry`).

    Parameters
    ----------
    datasets
        Names among ``summeval``, ``qags_c``, ``qags_x``.
    checkers
        The checkers by the name the results use.
    extractor
        The KG extractor (default: offline spaCy).
    out_dir, data_dir
        Where the runs' files go; where the benchmark files are.
    test_limits, dev_limit
        Summaries per set on test (by set name; all when absent) and on dev.
    seed, bootstrap
        The samples' and the bootstrap's seed; resamples per interval.
    reuse
        Take a run from ``out_dir`` when its result names the same limit and checker signature
        (runs split over processes, then one ``reuse`` run for the pooled threshold).
    log
        Called with a line per finished run.

    Returns
    -------
    dict
        ``{"sets": {set: {checker: entry}}, "mean": {checker: {...}}, "thresholds": ...,
        "runs": {(checker, set, split): (result, detail rows)}}``; ``runs`` is for
        :func:`failure_examples` (not JSON).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    limits = dict(test_limits or {})
    runs: dict[tuple[str, str, str], tuple[dict[str, Any], list[dict[str, Any]]]] = {}
    for name in datasets:
        for split, limit in (("dev", dev_limit), ("test", limits.get(name))):
            for cname, checker in checkers.items():
                detail = out / f"tc.{cname}.{name}.{split}.jsonl"
                summary = detail.with_suffix(".result.json")
                if reuse and summary.is_file() and detail.is_file():
                    res, rows = _read_run(detail, summary)
                    if res.get("limit") == limit and res.get("checker_signature") == (
                        checker.signature
                    ):
                        runs[(cname, name, split)] = (res, rows)
                        continue
                started = time.perf_counter()
                res = run_bench(
                    name, checker, extractor, data_dir=data_dir, split=split, limit=limit,
                    seed=seed, detail_path=detail,
                )  # fmt: skip
                res["wall_seconds"] = round(time.perf_counter() - started, 1)
                summary.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
                runs[(cname, name, split)] = _read_run(detail, summary)
                if log is not None:
                    log(
                        f"{cname} {name} {split} n={res['n']}: raw "
                        f"{res['raw']['balanced_accuracy']} kg {res['kg']['balanced_accuracy']} "
                        f"({res['wall_seconds']} s)"
                    )
    thresholds: dict[str, dict[str, float]] = {}
    for cname in checkers:
        pooled = [r for name in datasets for r in runs[(cname, name, "dev")][1]]
        labels = [int(r["label"]) for r in pooled]
        dets = [Detection.from_dict(r) for r in pooled]
        thresholds[cname] = {
            mode: best_threshold(summary_scores(dets, mode), labels) for mode in SUMMARY_MODES
        }
    sets: dict[str, dict[str, Any]] = {}
    for name in datasets:
        sets[name] = {}
        for cname in checkers:
            res, rows = runs[(cname, name, "test")]
            entry = table2_entry(
                [int(r["label"]) for r in rows],
                [Detection.from_dict(r) for r in rows],
                thresholds[cname],
                bootstrap=bootstrap,
                seed=seed,
            )
            entry["summaries_per_s"] = round(len(rows) / max(res["wall_seconds"], 1e-9), 2)
            entry["triples"] = res["kg"]["triples"]
            entry["flagged_triples"] = res["kg"]["flagged_triples"]
            sets[name][cname] = entry
    keys = ("raw", "kg", "raw_at_dev_threshold", "kg_at_dev_threshold")
    mean = {
        cname: {k: round(float(np.mean([sets[n][cname][k] for n in datasets])), 3) for k in keys}
        for cname in checkers
    }
    return {"sets": sets, "mean": mean, "thresholds": thresholds, "runs": runs}


def _novel(summary: str, article: str) -> list[str]:
    """Words of the summary (not stop words, 3+ letters) that the article lacks."""
    low = article.lower()
    return sorted(
        {
            w
            for w in _WORD.findall(summary)
            if w.lower() not in STOP_WORDS and len(w) > 2 and w.lower() not in low
        }
    )


def failure_examples(
    rows: Sequence[Mapping[str, Any]], contexts: Mapping[str, str], k: int = 10
) -> tuple[list[str], list[str]]:
    """Up to ``k`` extraction misses and ``k`` checker errors among detail rows, as text lines.

    An extraction miss: an inconsistent summary predicted consistent whose words absent from
    the article are in no triple (nothing could flag them). A checker error: a flagged triple
    in a consistent summary (false alarm), or a triple holding an article-absent word judged
    supported (missed); half of ``k`` each when both occur. ``rows`` are :func:`run_bench`'s
    detail lines; ``contexts`` maps their ``uid`` to the article.

    Examples
    --------
    >>> row = {"uid": "0", "label": 0, "inconsistent": False, "answer": "Bob won in Oslo.",
    ...        "triples": [["Bob", "won", "prize"]], "probabilities": [0.1], "flagged": []}
    >>> failure_examples([row], {"0": "Bob won a prize."}, 2)[0][0][:20]
    "- 'Bob won in Oslo.'"
    """
    from ..kg import Triple

    misses, false_alarms, missed = [], [], []
    for r in rows:
        novel = _novel(r["answer"], contexts[r["uid"]])
        claims = [triple_claim(Triple.from_any(t)) for t in r["triples"]]
        covered = [w for w in novel if any(w.lower() in c.lower() for c in claims)]
        if r["label"] == 0 and not r["inconsistent"] and novel and not covered:
            misses.append(
                f"- {r['answer'][:220]!r}\n  article lacks {novel[:6]}; triples: "
                f"{claims[:4] or 'none'}"
            )
        if r["label"] == 1 and r["flagged"]:
            i = r["flagged"][0]
            false_alarms.append(
                f"- false alarm: {claims[i]!r} p={r['probabilities'][i]:.2f} (summary "
                f"consistent: {r['answer'][:140]!r})"
            )
        if r["label"] == 0 and novel:
            for c, p in zip(claims, r["probabilities"], strict=True):
                if p is not None and p <= 0.5 and any(w.lower() in c.lower() for w in novel):
                    missed.append(
                        f"- missed: {c!r} p={p:.2f}, article lacks "
                        f"{[w for w in novel if w.lower() in c.lower()]}"
                    )
                    break
    half = k // 2
    errors = false_alarms[:half] + missed[: k - min(half, len(false_alarms))]
    return misses[:k], errors[:k]
