"""s3kg_core.checker_training.paraphrase: the paraphrase pairs the checker may learn from."""

from __future__ import annotations

import csv
import re

from s3kg_core.checker_training.paraphrase import PARAPHRASE_FILES, adds_names, paraphrase_pairs

PAWS_LINES = [
    "1\tThe band toured Japan in 1990 , then France .\t"
    "In 1990 , the band toured Japan , then France .\t1",
    "2\tFlights from Paris to Rome left at noon .\tFlights from Rome to Paris left at noon .\t0",
    "3\tShe sang in Oslo .\tShe sang in Oslo during the Bergen festival .\t1",
    "4\tAn identical pair .\tAn identical pair .\t1",
    "not a pair line",
]
MRPC_LINES = [
    "\ufeff1\t11\t12\tSmith said sales rose 5 % in May.\tSales rose 5 % in May, Smith said.",
    "0\t13\t14\tThe firm hired staff.\tThe firm hired staff and sold a plant.",
    "1\t15\t16\tA benchmark sentence the release uses.\tThe release uses this benchmark sentence.",
]


def _folder(tmp_path, release: bool = True):
    for name, lines in (("paws", PAWS_LINES), ("mrpc", MRPC_LINES)):
        path = tmp_path / PARAPHRASE_FILES[name]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if release:
        bench = tmp_path / "s3kg_release" / "benchmarks"
        bench.mkdir(parents=True)
        with (bench / "mrpc_400.csv").open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, ["id", "paragraph_1", "paragraph_2", "label"])
            writer.writeheader()
            writer.writerow(
                {
                    "id": 0,
                    "paragraph_1": "A benchmark sentence the release uses .",
                    "paragraph_2": "x",
                    "label": 1,
                }
            )
    return tmp_path


def test_pairs_are_read_detokenised_with_their_labels(tmp_path):
    pairs = paraphrase_pairs(_folder(tmp_path))
    by_id = {p.pair_id: p for p in pairs}
    assert by_id["paws:1"].premise == "The band toured Japan in 1990, then France."
    assert by_id["paws:1"].hypothesis == "In 1990, the band toured Japan, then France."
    assert by_id["paws:1"].label == 1 and by_id["paws:2"].label == 0
    assert by_id["mrpc:11-12"].source == "mrpc" and by_id["mrpc:11-12"].label == 1


def test_unusable_pairs_are_left_out(tmp_path):
    ids = {p.pair_id for p in paraphrase_pairs(_folder(tmp_path))}
    assert "paws:3" not in ids  # the "paraphrase" adds a place: an extrinsic fact
    assert "paws:4" not in ids  # no rewording at all
    assert "mrpc:13-14" not in ids  # MRPC label 0 is not a usable negative
    assert "mrpc:15-16" not in ids  # shares a sentence with an S3KG release pair set
    assert ids == {"paws:1", "paws:2", "mrpc:11-12"}


def test_without_the_release_folder_its_pairs_stay(tmp_path):
    ids = {p.pair_id for p in paraphrase_pairs(_folder(tmp_path, release=False))}
    assert "mrpc:15-16" in ids


def test_a_folder_without_the_files_gives_no_pairs(tmp_path):
    assert paraphrase_pairs(tmp_path) == []


def test_new_names_and_numbers_are_extrinsic():
    assert adds_names("Sales rose 5 %.", "Sales rose 7 %.")
    assert adds_names("The team won.", "The team won in Leeds.")
    assert not adds_names("Smith said sales rose.", "Sales rose, Smith said.")
    assert not adds_names("the vote passed.", "The vote passed.")  # the first word is not a name


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def test_the_shared_corpora_give_both_labels_and_no_release_sentence(shared_data):
    pairs = paraphrase_pairs(shared_data)
    kinds = {(p.source, p.label) for p in pairs}
    assert kinds == {("paws", 0), ("paws", 1), ("mrpc", 1)}
    release = set()
    for path in (shared_data / "s3kg_release" / "benchmarks").glob("*.csv"):
        with path.open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh):
                release.update({_squash(row["paragraph_1"]), _squash(row["paragraph_2"])})
    assert not {_squash(p.premise) for p in pairs} & release
    assert not {_squash(p.hypothesis) for p in pairs} & release
    assert not any(adds_names(p.premise, p.hypothesis) for p in pairs if p.label == 1)
