"""A tiny BAMBOO folder in the benchmark's layout, and a scorer whose scores a test can predict."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from s3kg_core.scoring.result import ScoreResult
from s3kg_core.scoring.s3kg import S3KGConfig

__all__ = ["HUMAN", "QUANT", "ROLE_QUANT", "QuantScorer", "write_fake_bamboo"]

HUMAN = {
    "sts": [0.0, 0.25, 0.5, 1.0],
    "sick": [0.1, 0.9, 0.4, 0.6],
    "para": [0.0, 1.0, 1.0, 0.0],
}
"""The human scores of the four pairs of each dataset."""

QUANT = [0.1, 0.2, 0.3, 0.4]
"""The ``:quant`` of each pair's target graph (main, reify, syno), read by :class:`QuantScorer`."""

ROLE_QUANT = [0.2, 0.9, 0.6, 0.6]
"""The ``:quant`` of the four role-confusion source graphs: pair of pairs 1 right, 2 a tie."""

_PLACEHOLDER_HEAD = '(xv0 / sentence :mod (xv1 / string-entity :value "A") :quant 1000)'
_PLACEHOLDER_TAIL = "(xv0 / line :ARG1-of (xv1 / empty-02) :quant -1000)"
_SENTENCES = ["A man is dancing.", "A man dances.", "A woman sings.", "A dog runs."]
_SOURCES = [
    "(xv0 / dance-01 :ARG0 (xv1 / man))",
    "(xv0 / dance-01 :ARG0 (xv1 / man))",
    "(xv0 / sing-01 :ARG0 (xv1 / woman))",
    "(xv0 / run-02 :ARG0 (xv1 / dog))",
]
_TARGETS = [
    "(xv0 / dance-01 :ARG0 (xv1 / man) :quant {q})",
    "(xv0 / dance-01 :ARG0 (xv1 / man :mod (xv2 / old)) :quant {q})",
    "(xv0 / play-01 :ARG0 (xv1 / woman) :ARG1 (xv2 / guitar) :quant {q})",
    "(xv0 / sleep-01 :ARG0 (xv1 / cat) :quant {q})",
]
_ROLE_SOURCES = [
    "(xv0 / feed-01 :ARG0 (xv1 / mouse) :ARG1 (xv2 / man) :quant {q})",
    "(xv0 / feed-01 :ARG0 (xv2 / man) :ARG1 (xv1 / mouse) :quant {q})",
    "(xv0 / chase-01 :ARG0 (xv1 / mouse) :ARG1 (xv2 / cat) :quant {q})",
    "(xv0 / chase-01 :ARG0 (xv2 / cat) :ARG1 (xv1 / mouse) :quant {q})",
]
_ROLE_TARGETS = [
    "(xv0 / feed-01 :ARG0 (xv2 / man) :ARG1 (xv1 / mouse))",
    "(xv0 / feed-01 :ARG0 (xv2 / man) :ARG1 (xv1 / mouse))",
    "(xv0 / chase-01 :ARG0 (xv2 / cat) :ARG1 (xv1 / mouse))",
    "(xv0 / chase-01 :ARG0 (xv2 / cat) :ARG1 (xv1 / mouse))",
]


def _blocks(graphs: list[str], sentences: list[str]) -> str:
    return "\n\n".join(
        f"# ::id {i}\n# ::snt {s}\n{g}"
        for i, (g, s) in enumerate(zip(graphs, sentences, strict=True))
    )


def write_fake_bamboo(data_dir: Path, split: str = "dev", *, missing: tuple[str, ...] = ()) -> Path:
    """Write ``data_dir/bamboo`` with four pairs per dataset and two pairs of pairs per role task.

    As in the real files, SICK and PARA open with a header row (and a placeholder graph and
    ``.y`` value for it), and every AMR file ends with one more placeholder graph; their
    ``:quant`` (1000, -1000) would wreck every figure if they were scored. ``missing`` names
    tasks (``"para/reify"``) whose files are left out.
    """
    root = data_dir / "bamboo"
    for dataset, human in HUMAN.items():
        header = 0 if dataset == "sts" else 1
        folder = root / dataset
        folder.mkdir(parents=True, exist_ok=True)
        rows = [f"row{i}\t{s}\t{s}" for i, s in enumerate(_SENTENCES)]
        (folder / f"orig.{split}.txt").write_text(
            "\n".join((["header\trow"] if header else []) + rows) + "\n", encoding="utf-8"
        )
        values = [0.5] * header + human + [0.51]
        (folder / f"{split}.y").write_text("\n".join(map(str, values)), encoding="utf-8")
        for task in ("main", "reify", "syno", "role_confusion"):
            if f"{dataset}/{task}" in missing:
                continue
            (folder / task).mkdir(exist_ok=True)
            if task == "role_confusion":
                src = [g.format(q=q) for g, q in zip(_ROLE_SOURCES, ROLE_QUANT, strict=True)]
                tgt = list(_ROLE_TARGETS)
                snt = ["NA"] * 4
            else:
                src = [_PLACEHOLDER_HEAD] * header + _SOURCES + [_PLACEHOLDER_TAIL]
                tgt = [g.format(q=q) for g, q in zip(_TARGETS, QUANT, strict=True)]
                tgt = [_PLACEHOLDER_HEAD] * header + tgt + [_PLACEHOLDER_TAIL]
                snt = ["sentence_A"] * header + _SENTENCES + ["Empty line"]
            for side, graphs in (("src", src), ("tgt", tgt)):
                (folder / task / f"{side}.{split}.amr").write_text(
                    _blocks(graphs, snt), encoding="utf-8"
                )
    return root


@dataclass
class _Name:
    name: str = "stub"


STUB_SIGNATURE = "mode:stub|enc:quant@0|tau:0.65|K:5|align:yes|norm:lemma|version:3"
"""A well-formed signature for the stub scorer (Signature.blended parses it)."""


class QuantScorer:
    """A stand-in for ``KGScorer``: S_WL is the ``quant`` of the pair's graphs, S_SBERT its square.

    The quant is the first ``quant`` triple's tail of KG 1, else of KG 2.
    """

    needs_texts = False

    def __init__(self, alpha: float = 0.5) -> None:
        self.config = S3KGConfig(alpha=alpha)
        self.encoder = _Name()
        self.signature = STUB_SIGNATURE
        self.calls = 0

    def score_pairs(self, pairs: Any, *, texts: Any = None, progress: Any = None) -> list[Any]:
        self.calls += 1
        out = []
        for t1, t2 in pairs:
            q = next(float(t.tail) for t in (*t1, *t2) if t.relation == "quant")
            out.append(ScoreResult(q, q * q, alpha=self.config.alpha, mode=self.config.mode))
        return out
