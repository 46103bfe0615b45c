"""Paraphrase pairs for the trained checker: reworded positives and word-scrambled negatives.

The synthetic pairs of :mod:`s3kg_core.checker_training.synthetic` take every positive from the
window's own words, in the window's order, so a checker trained on them alone learns that a
reworded or reordered statement is a corrupted one, and flags consistent abstractive summaries.
Paraphrase corpora in the shared data folder supply what is missing, never test material:

=======  ==========================================  ==============================================
name     file                                        pairs used
=======  ==========================================  ==============================================
paws     ``paws_wiki/dev.tsv``                       all: label 1 the same facts in other words and
                                                     order, label 0 the same words with another
                                                     meaning (swapped roles, moved modifiers)
mrpc     ``mrpc/msr_paraphrase_train.txt``           label 1 only (its label 0 mixes "adds a fact"
                                                     with "says less", which a checker must accept)
=======  ==========================================  ==============================================

A label-1 pair whose hypothesis names a person, place or number its premise lacks
(:func:`adds_names`) is left out: MRPC calls many of those paraphrases, and a checker taught to
accept them would accept the extrinsic facts hallucinated summaries add.

A pair with a sentence in one of the S3KG release's pair sets (``s3kg_release/benchmarks``,
matched on letters and digits) is left out, so the S3KG benchmarks stay unseen as well.

Examples
--------
>>> ParaphrasePair("paws:1", "paws", "A met B in 1990.", "In 1990 B met A.", 1).label
1
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..config import default_data_dir
from ..text import detokenize

__all__ = ["PARAPHRASE_FILES", "ParaphrasePair", "adds_names", "paraphrase_pairs"]

PARAPHRASE_FILES: Mapping[str, Path] = {
    "paws": Path("paws_wiki") / "dev.tsv",
    "mrpc": Path("mrpc") / "msr_paraphrase_train.txt",
}
"""Corpus name -> file under the data folder."""

_RELEASE_SETS = Path("s3kg_release") / "benchmarks"


@dataclass(frozen=True)
class ParaphrasePair:
    """A premise and a hypothesis; ``label`` 1 when the hypothesis says what the premise says."""

    pair_id: str
    source: str
    premise: str
    hypothesis: str
    label: int


def _names(text: str) -> set[str]:
    """The lowercased capitalised words (bar the first) and numbers of a sentence."""
    words = re.findall(r"[A-Za-z][\w'-]*|\d[\d.,]*", text)[1:]
    return {w.lower().rstrip(".,") for w in words if w[0].isupper() or w[0].isdigit()}


def adds_names(premise: str, hypothesis: str) -> bool:
    """Whether the hypothesis has a name or number the premise lacks (an extrinsic fact).

    MRPC calls many such pairs paraphrases; a checker must not learn to accept them.

    Examples
    --------
    >>> adds_names("Two leaders were away.", "Two leaders were away during Columbia's flight.")
    True
    >>> adds_names("Smith said sales rose 5 %.", "Sales rose 5 %, Smith said.")
    False
    """
    premise_words = {w.lower().rstrip(".,") for w in re.findall(r"[\w'-]+|\d[\d.,]*", premise)}
    return bool(_names(hypothesis) - premise_words)


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _release_sentences(root: Path) -> set[str]:
    out: set[str] = set()
    folder = root / _RELEASE_SETS
    if folder.is_dir():
        for path in sorted(folder.glob("*.csv")):
            with path.open(encoding="utf-8", newline="") as fh:
                for row in csv.DictReader(fh):
                    out.update(_squash(row.get(k) or "") for k in ("paragraph_1", "paragraph_2"))
    out.discard("")
    return out


def _rows(path: Path, source: str) -> Iterator[tuple[str, str, str, int]]:
    """(id, premise, hypothesis, label) of each line of a PAWS or MRPC file (others skipped).

    PAWS lines are ``id, s1, s2, label``; MRPC lines ``label, id1, id2, s1, s2``.
    """
    for line in path.read_text(encoding="utf-8-sig").splitlines():
        cols = line.split("\t")
        if source == "paws" and len(cols) == 4 and cols[3].strip() in ("0", "1"):
            yield cols[0].strip(), cols[1], cols[2], int(cols[3])
        elif source == "mrpc" and len(cols) == 5 and cols[0].strip() in ("0", "1"):
            yield f"{cols[1].strip()}-{cols[2].strip()}", cols[3], cols[4], int(cols[0])


def paraphrase_pairs(data_dir: str | Path | None = None) -> list[ParaphrasePair]:
    """The usable paraphrase pairs of the data folder, in file order (missing files skipped).

    Parameters
    ----------
    data_dir
        The shared data folder (default: :func:`s3kg_core.config.default_data_dir`).

    Returns
    -------
    list of ParaphrasePair
        PAWS-Wiki dev pairs of both labels and MRPC train pairs of label 1, detokenised, without
        those that share a sentence with an S3KG release pair set; ``[]`` when neither file
        is there.

    Examples
    --------
    >>> paraphrase_pairs("/no/such/folder")
    []
    """
    root = Path(data_dir) if data_dir is not None else default_data_dir()
    release = _release_sentences(root)
    out: list[ParaphrasePair] = []
    for source, rel in PARAPHRASE_FILES.items():
        path = root / rel
        if not path.is_file():
            continue
        for pair_id, premise, hypothesis, label in _rows(path, source):
            if source == "mrpc" and label != 1:
                continue
            if _squash(premise) in release or _squash(hypothesis) in release:
                continue
            premise, hypothesis = detokenize(premise), detokenize(hypothesis)
            if label == 1 and adds_names(premise, hypothesis):
                continue
            if premise and hypothesis and _squash(premise) != _squash(hypothesis):
                pid = f"{source}:{pair_id}"
                out.append(ParaphrasePair(pid, source, premise, hypothesis, label))
    return out
