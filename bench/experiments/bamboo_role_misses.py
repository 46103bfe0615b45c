"""Which of BAMBOO's role-confusion misses could any comparison of the two graphs get right?

What is measured
----------------
BAMBOO's role-confusion task (``s3kg_core.evaluation.bamboo``) pairs an original graph pair with
the same pair in which two roles of one graph (the source or the target) are swapped; a metric
is right when the original pair scores strictly higher. For every pair of pairs the default
scorer gets wrong, this script asks what the *other* graph (the one that is not swapped) holds
of the triples the swap changed, compared with lower-cased ``(head, relation, tail)`` keys:

``identical``
    The swapped and the original graph give the same triples once converted (two AMR variables
    of one concept are one node of the KG, so a swap between them vanishes): no KG metric can
    tell them apart.
``swap agrees``
    The other graph holds more of the swapped triples than of the original ones, exactly, or
    (on a tie) by their (head, tail) and (head, relation) halves: the swap is closer to the
    other graph than the original is, and a metric that prefers it is right about the graphs.
``original agrees``
    The other graph holds more of the original triples: a graph metric can get this one right.
``no evidence``
    The other graph holds as many of each (most often none): the swapped and the original
    triples are equally supported, so only the embeddings' noise decides; what would settle it
    is which reading is plausible (who can ``state`` what), not what the two graphs share.

The script prints the accuracy, the count of each kind per dataset and the accuracy a graph
metric would reach if it also got every ``original agrees`` miss right (the ceiling of a
comparison of the graphs, given this scorer's hits).

Usage::

    python -m bench.experiments.bamboo_role_misses [--datasets sts,sick,para] [--split dev]
        [--mode ot] [--encoder minilm] [--data-dir DIR] [--json OUT.json]

``--json`` writes the figures as an evidence file (with the command, machine and commit).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from bench._common import add_data_dir, text_table, write_evidence
from s3kg_core.evaluation.bamboo import (
    DATASETS,
    SPLITS,
    load_bamboo,
    role_confusion_accuracy_x100,
)
from s3kg_core.scoring.result import DEFAULT_MODE
from s3kg_core.scoring.s3kg import KGScorer, S3KGConfig

__all__ = ["KINDS", "main", "miss_kind"]

KINDS = ("identical", "swap agrees", "original agrees", "no evidence")
"""The kinds of a role-confusion miss, in the order they are reported."""

Key = tuple[str, str, str]


def _keys(triples: Iterable[Any]) -> set[Key]:
    out = set()
    for t in triples:
        head, relation, tail = (t.head, t.relation, t.tail) if hasattr(t, "head") else t
        out.add((str(head).lower(), str(relation).lower(), str(tail).lower()))
    return out


def _halves(keys: set[Key]) -> set[tuple[str, str, str]]:
    return {("ht", h, t) for h, _, t in keys} | {("hr", h, r) for h, r, _ in keys}


def miss_kind(swapped: Sequence[Any], original: Sequence[Any], other: Sequence[Any]) -> str:
    """What the other graph holds of the triples a role swap changed (one of :data:`KINDS`).

    Parameters
    ----------
    swapped, original
        The swapped graph's and the original graph's triples (``Triple`` or 3-tuples).
    other
        The graph both are compared with.

    Examples
    --------
    >>> a = [("move", "arg1", "this"), ("move", "arg2", "trend")]
    >>> b = [("move", "arg1", "trend"), ("move", "arg2", "this")]
    >>> miss_kind(b, a, [("move", "arg0", "this"), ("move", "arg1", "trend")])
    'swap agrees'
    >>> miss_kind(b, a, [("say", "arg0", "he")])
    'no evidence'
    >>> miss_kind(a, a, [("say", "arg0", "he")])
    'identical'
    """
    s, o, other_keys = _keys(swapped), _keys(original), _keys(other)
    if s == o:
        return "identical"
    s_only, o_only = s - o, o - s
    exact_s, exact_o = len(s_only & other_keys), len(o_only & other_keys)
    if exact_s == exact_o:
        halves = _halves(other_keys)
        exact_s, exact_o = len(_halves(s_only) & halves), len(_halves(o_only) & halves)
    if exact_s > exact_o:
        return "swap agrees"
    if exact_o > exact_s:
        return "original agrees"
    return "no evidence"


def _dataset(data: Any, dataset: str, scorer: KGScorer) -> dict[str, Any]:
    task = data.task(dataset, "role_confusion")
    results = scorer.score_pairs(list(zip(task.kg_1, task.kg_2, strict=True)))
    scores = [r.score for r in results]
    kinds = dict.fromkeys(KINDS, 0)
    missed: dict[str, list[str]] = {k: [] for k in KINDS}
    cases = len(scores) // 2
    for k in range(cases):
        if scores[2 * k] < scores[2 * k + 1]:
            continue
        src_swapped = _keys(task.kg_1[2 * k]) != _keys(task.kg_1[2 * k + 1])
        if src_swapped:
            kind = miss_kind(task.kg_1[2 * k], task.kg_1[2 * k + 1], task.kg_2[2 * k])
        else:
            kind = miss_kind(task.kg_2[2 * k], task.kg_2[2 * k + 1], task.kg_1[2 * k])
        kinds[kind] += 1
        missed[kind].append(task.ids[2 * k + 1])
    misses = sum(kinds.values())
    return {
        "cases": cases,
        "misses": misses,
        "accuracy": role_confusion_accuracy_x100(scores) if cases else None,
        "graph_ceiling": (
            100.0 * (cases - misses + kinds["original agrees"]) / cases if cases else None
        ),
        "kinds": kinds,
        "ids": missed,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated")
    ap.add_argument("--split", default="dev", choices=SPLITS)
    ap.add_argument("--mode", default=DEFAULT_MODE)
    ap.add_argument("--encoder", default="minilm")
    add_data_dir(ap, "bamboo/")
    ap.add_argument("--json", type=Path, help="write the figures as an evidence file")
    args = ap.parse_args(argv)
    data = load_bamboo(args.split, args.data_dir)
    scorer = KGScorer(args.encoder, S3KGConfig(mode=args.mode))
    figures = {d: _dataset(data, d, scorer) for d in args.datasets.split(",") if d}
    rows = [
        [
            d,
            str(f["cases"]),
            str(f["misses"]),
            f"{f['accuracy']:.1f}",
            *(str(f["kinds"][k]) for k in KINDS),
            f"{f['graph_ceiling']:.1f}",
        ]
        for d, f in figures.items()
    ]
    print(
        f"BAMBOO {args.split} role confusion, mode {args.mode}, encoder {args.encoder}: "
        "the misses by what the other graph holds"
    )
    print(
        text_table(
            ["dataset", "cases", "misses", "accuracy", *KINDS, "graph ceiling"],
            rows,
            right=set(range(1, 4 + len(KINDS) + 1)),
        )
    )
    if args.json:
        payload = {
            "split": args.split,
            "mode": args.mode,
            "encoder": args.encoder,
            "signature": scorer.signature,
            "kinds": list(KINDS),
            "datasets": figures,
        }
        write_evidence(
            args.json,
            payload,
            title=(
                "BAMBOO role confusion: the default's misses by what the other graph holds "
                "(python -m bench.experiments.bamboo_role_misses)"
            ),
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
