"""Tests of s3kg_core.extract.recorded: KGs recorded once, served again, stale files refused."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from s3kg_core.errors import InputFormatError
from s3kg_core.extract.base import ItemTexts, TextKG
from s3kg_core.extract.recorded import (
    RECORD_FORMAT,
    RecordedExtractor,
    fingerprint,
    load_recorded,
    record_kgs,
    text_key,
)
from s3kg_core.kg import Triple


class Words:
    """A toy extractor: one triple per word, counting its calls."""

    name = "words-v1"

    def __init__(self) -> None:
        self.calls = 0

    def extract(self, items):  # type: ignore[no-untyped-def]
        self.calls += 1
        return [
            {
                s: TextKG(tuple(Triple(w, "in", "text") for w in t.split()))
                for s, t in item.given().items()
            }
            for item in items
        ]


def test_a_recorded_file_serves_what_the_extractor_gave(tmp_path: Path) -> None:
    path = tmp_path / "kgs.jsonl"
    assert record_kgs(Words(), ["a b", "", "a b", "c"], path) == 3  # repeats once
    header = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert header["format"] == RECORD_FORMAT and header["extractor"] == "words-v1"
    assert header["fingerprint"] == fingerprint(Words())
    live = Words()
    served = RecordedExtractor(load_recorded(path, live), fallback=lambda: live)
    out = served.extract([ItemTexts(gold="a b", answer="", context="c")])
    assert out == Words().extract([ItemTexts(gold="a b", answer="", context="c")])
    assert out[0]["answer"].status == "empty"
    assert (served.name, served.served, served.extracted, live.calls) == ("words-v1", 3, 0, 0)


def test_a_text_not_recorded_goes_to_the_live_extractor(tmp_path: Path) -> None:
    path = tmp_path / "kgs.jsonl"
    record_kgs(Words(), ["a b"], path)
    live = Words()
    served = RecordedExtractor(load_recorded(path), fallback=lambda: live)
    out = served.extract([ItemTexts(gold="a b"), ItemTexts(gold="a b", answer="new")])
    assert [t.head for t in out[1]["answer"].triples] == ["new"]
    assert (served.served, served.extracted, live.calls) == (1, 2, 1)
    with pytest.raises(InputFormatError, match="not in"):
        RecordedExtractor(load_recorded(path)).extract([ItemTexts(gold="unseen")])


def test_a_file_of_another_extractor_or_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "kgs.jsonl"
    record_kgs(Words(), ["a"], path)

    class Renamed(Words):
        name = "words-v2"

    with pytest.raises(InputFormatError, match="record it again"):
        load_recorded(path, Renamed())


def test_the_fingerprint_follows_the_extractor_code(tmp_path: Path, monkeypatch) -> None:
    # The same class name and extractor name, but the module's code edited: another fingerprint.
    monkeypatch.syspath_prepend(str(tmp_path))
    prints = []
    for body in ("RULE = 1", "RULE = 2"):
        (tmp_path / "toy_extractor.py").write_text(
            textwrap.dedent(f"""
                {body}
                class Toy:
                    name = "toy"
            """),
            encoding="utf-8",
        )
        sys.modules.pop("toy_extractor", None)
        import toy_extractor

        prints.append(fingerprint(toy_extractor.Toy()))
    sys.modules.pop("toy_extractor", None)
    assert prints[0].startswith("toy|code:") and prints[0] != prints[1]


def test_the_offline_fingerprint_names_spacy() -> None:
    from s3kg_core.extract.factory import make_extractor

    assert "|spacy:" in fingerprint(make_extractor("offline"))


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "header format"),
        ('{"format": "other"}\n', "header format"),
        ("not json\n", "not JSON"),
        (json.dumps({"format": RECORD_FORMAT}) + '\n{"sha256": "x"}\n', "malformed"),
    ],
)
def test_malformed_files_are_named(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "kgs.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputFormatError, match=message):
        load_recorded(path)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputFormatError, match="no recorded KGs"):
        load_recorded(tmp_path / "nope.jsonl")


def test_text_keys_are_sha256_of_utf8() -> None:
    assert text_key("é") != text_key("e") and len(text_key("x")) == 64
