"""SCORING_VERSION moves exactly when a score moves: golden scores of fixed pairs in every mode.

``tests/golden/scores.json`` holds, under each scoring version, S_WL, S_SBERT and S3KG (alpha 0.5)
of the pairs below in the modes hybrid, paper, kgx and text, scored with the packaged MiniLM.
A change that moves any of them must bump :data:`s3kg_core.SCORING_VERSION` and add its scores:
``PYTHONPATH=. python tests/test_scoring_version.py --write`` (then commit the file). A bump
whose scores equal the previous version's fails too: the version would say a score changed when
none did.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from s3kg_core import MODES, SCORING_VERSION, KGScorer
from s3kg_core.encoders.base import Encoder

GOLDEN = Path(__file__).resolve().parent / "golden" / "scores.json"
TOLERANCE = 1e-5
"""Scores that differ by less are the same (BLAS summation order differs between CPUs)."""

PAIRS: dict[str, tuple[list[list[str]], list[list[str]], tuple[str, str]]] = {
    "identical": (
        [["Marie Curie", "discovered", "radium"], ["Marie Curie", "born in", "Warsaw"]],
        [["Marie Curie", "discovered", "radium"], ["Marie Curie", "born in", "Warsaw"]],
        ("Marie Curie discovered radium.", "Marie Curie discovered radium."),
    ),
    "lemmas_and_underscores": (
        [["Cats", "chase", "mice"], ["cats", "are_afraid_of", "dogs"]],
        [["cat", "chases", "mouse"], ["Cat", "is afraid of", "Dogs"]],
        ("Cats chase mice and fear dogs.", "A cat chases a mouse; it is afraid of dogs."),
    ),
    "relation_mismatch": (
        [["Paris", "capital of", "France"], ["France", "member of", "European Union"]],
        [["Paris", "largest city of", "France"], ["France", "founded", "European Union"]],
        ("Paris is the capital of France.", "Paris is the largest city of France."),
    ),
    "entity_mismatch_and_extras": (
        [["Alexander Fleming", "discovered", "penicillin"], ["penicillin", "kills", "bacteria"]],
        [
            ["Louis Pasteur", "discovered", "penicillin"],
            ["penicillin", "kills", "bacteria"],
            ["penicillin", "made from", "mould"],
            ["Pasteur", "worked in", "Paris"],
        ],
        ("Fleming discovered penicillin.", "Pasteur discovered penicillin in Paris."),
    ),
    "flipped_edge": (
        [["Earth", "orbits", "Sun"], ["Moon", "orbits", "Earth"]],
        [["Sun", "orbits", "Earth"], ["Moon", "orbits", "Earth"]],
        ("The Earth orbits the Sun.", "The Sun orbits the Earth."),
    ),
    "unrelated": (
        [["photosynthesis", "produces", "oxygen"]],
        [["Beethoven", "composed", "the Ninth Symphony"], ["Beethoven", "born in", "Bonn"]],
        ("Plants make oxygen.", "Beethoven wrote nine symphonies."),
    ),
    "chain": (
        [["A. Turing", "worked at", "Bletchley Park"], ["Bletchley Park", "located in", "England"]],
        [["Alan Turing", "worked at", "Bletchley Park"], ["Bletchley Park", "is in", "England"]],
        ("Turing worked at Bletchley Park in England.", "Alan Turing worked at Bletchley Park."),
    ),
    "numbered_roles": (
        [["chase", "ARG0", "cat"], ["chase", "ARG1", "mouse"], ["cat", "mod", "black"]],
        [["chase", "ARG0", "mouse"], ["chase", "ARG1", "cat"], ["cat", "mod", "black"]],
        ("The black cat chases the mouse.", "The mouse chases the black cat."),
    ),
    "empty_candidate": (
        [["water", "boils at", "100 degrees"]],
        [],
        ("Water boils at 100 degrees.", "Water boils at a hundred degrees Celsius."),
    ),
}


def current_scores(encoder: Encoder) -> dict[str, dict[str, list[float]]]:
    """``{mode: {pair: [s_wl, s_sbert, s3kg]}}`` of :data:`PAIRS`, rounded to 8 places."""
    names = list(PAIRS)
    out: dict[str, dict[str, list[float]]] = {}
    for mode in MODES:
        scorer = KGScorer(encoder, mode=mode)
        results = scorer.score_pairs(
            [(PAIRS[n][0], PAIRS[n][1]) for n in names], texts=[PAIRS[n][2] for n in names]
        )
        out[mode] = {
            name: [round(float(r.s_wl), 8), round(float(r.s_sbert), 8), round(float(r.score), 8)]
            for name, r in zip(names, results, strict=True)
        }
    return out


def moved(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """Where two score tables differ by more than :data:`TOLERANCE` (or in their keys)."""
    lines = []
    for mode in sorted(set(a) | set(b)):
        pa, pb = a.get(mode, {}), b.get(mode, {})
        for name in sorted(set(pa) | set(pb)):
            va, vb = pa.get(name), pb.get(name)
            if va is None or vb is None:
                lines.append(f"{mode}/{name}: only in one table")
            elif any(abs(x - y) > TOLERANCE for x, y in zip(va, vb, strict=True)):
                lines.append(f"{mode}/{name}: {va} -> {vb}")
    return lines


def golden() -> dict[str, Any]:
    return dict(json.loads(GOLDEN.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def scores(minilm: Encoder) -> dict[str, dict[str, list[float]]]:
    return current_scores(minilm)


def test_the_golden_file_covers_every_mode_and_pair() -> None:
    table = golden()
    assert SCORING_VERSION in table["versions"], (
        f"SCORING_VERSION is {SCORING_VERSION!r} but tests/golden/scores.json has no scores for "
        "it: run `PYTHONPATH=. python tests/test_scoring_version.py --write` and commit the file"
    )
    for version, modes in table["versions"].items():
        assert {"hybrid", "paper", "kgx", "text"} <= set(modes) <= set(MODES), version
        if version == SCORING_VERSION:  # a mode added since has this version's scores too
            assert set(modes) == set(MODES), version
        for mode, pairs in modes.items():
            assert set(pairs) == set(PAIRS), (version, mode)


def test_scores_match_the_golden_scores_of_this_scoring_version(
    scores: dict[str, dict[str, list[float]]],
) -> None:
    """A score that moved without a new SCORING_VERSION fails here (and says which)."""
    expected = golden()["versions"].get(SCORING_VERSION)
    if expected is None:
        pytest.fail(f"no golden scores for SCORING_VERSION {SCORING_VERSION!r} (see the docstring)")
    changes = moved(expected, scores)
    assert not changes, (
        f"scores moved under the same SCORING_VERSION {SCORING_VERSION!r}: bump it in "
        "s3kg_core/_version.py, write its golden scores and say so in CHANGELOG.md:\n"
        + "\n".join(changes)
    )


def test_each_scoring_version_changed_some_score() -> None:
    """A bump without a moved score fails: the version would claim a change that is not there."""
    versions = list(golden()["versions"].items())
    assert versions[-1][0] == SCORING_VERSION, "the newest golden scores are this version's"
    for (old, old_scores), (new, new_scores) in itertools.pairwise(versions):
        assert moved(old_scores, new_scores), f"scoring version {new} scores as {old} did"


def test_the_tables_tell_a_moved_score_apart() -> None:
    base = {"hybrid": {"p": [0.5, 0.5, 0.5]}}
    assert moved(base, {"hybrid": {"p": [0.5, 0.5, 0.5 + TOLERANCE / 2]}}) == []
    assert moved(base, {"hybrid": {"p": [0.5, 0.50002, 0.5]}}) == [
        "hybrid/p: [0.5, 0.5, 0.5] -> [0.5, 0.50002, 0.5]"
    ]
    assert moved(base, {"hybrid": {}}) == ["hybrid/p: only in one table"]


def _write() -> None:
    """Add (or replace) this scoring version's golden scores."""
    from s3kg_core import load_encoder

    table = golden() if GOLDEN.exists() else {"versions": {}}
    table["about"] = __doc__.splitlines()[0] if __doc__ else ""
    table["versions"][SCORING_VERSION] = current_scores(load_encoder("minilm"))
    GOLDEN.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    print(f"wrote the scores of scoring version {SCORING_VERSION} to {GOLDEN}")


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    _write()
