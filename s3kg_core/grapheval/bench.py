"""GraphEval's Table 2: balanced accuracy of a checker alone (raw) and with the KG.

For every summary of a benchmark (:mod:`s3kg_core.grapheval.datasets`, test split by default)
the raw checker judges the whole summary against the article, and GraphEval judges every triple
of the summary's KG; a summary is predicted inconsistent when the probability (raw) or any
triple's probability (KG) exceeds 0.5. Labels in the files are 1 = consistent; balanced
accuracy (scikit-learn) is computed with "consistent" as the positive class. Summaries whose KG
has no triple are predicted consistent (nothing flagged); summaries the checker could not judge
at all are predicted consistent too, and both are counted in the result.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import GraphEvalError
from ..extract.base import Extractor
from ..progress import Progress
from .checkers.base import Checker
from .datasets import SummSet, load_summ_set
from .detect import Detection, GraphEval

__all__ = ["balanced_accuracy", "run_bench", "stratified_limit"]


def balanced_accuracy(labels: Sequence[int], predicted: Sequence[int]) -> float:
    """Balanced accuracy of 0/1 predictions (scikit-learn), both classes needed.

    Raises
    ------
    GraphEvalError
        If the labels hold only one class (balanced accuracy is then undefined) or the
        lengths differ.

    Examples
    --------
    >>> balanced_accuracy([1, 1, 0, 0], [1, 0, 0, 0])
    0.75
    >>> balanced_accuracy([1, 1], [1, 0])
    Traceback (most recent call last):
    ...
    s3kg_core.errors.GraphEvalError: balanced accuracy needs both classes in the labels; got only 1
    """
    from sklearn.metrics import balanced_accuracy_score

    if len(labels) != len(predicted):
        raise GraphEvalError(f"{len(labels)} labels but {len(predicted)} predictions")
    classes = sorted(set(int(v) for v in labels))
    if len(classes) < 2:
        raise GraphEvalError(
            "balanced accuracy needs both classes in the labels; got only "
            f"{classes[0] if classes else 'none'}"
        )
    return round(float(balanced_accuracy_score(list(labels), list(predicted))), 6)


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
    ge = GraphEval(checker, extractor)
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
            "balanced_accuracy": balanced_accuracy(labels, kg_pred),
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
    if summ.replaced_rows:
        result["replaced_rows"] = list(summ.replaced_rows)
    if raw:
        raw_pred = [0 if d.raw_inconsistent else 1 for d in detections]
        result["raw"] = {
            "balanced_accuracy": balanced_accuracy(labels, raw_pred),
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
