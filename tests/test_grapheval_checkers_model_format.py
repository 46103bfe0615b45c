"""s3kg_core.grapheval.checkers.model_format: windows, tokenised pairs, the manifest, the folder."""

from __future__ import annotations

import json

import pytest

from s3kg_core.errors import CheckerError
from s3kg_core.grapheval.checkers.model_format import (
    MANIFEST,
    MANIFEST_FORMAT,
    WINDOW_WORDS,
    read_manifest,
    text_windows,
    tokenize_pairs,
    trained_checker_dir,
)


def test_windows_are_consecutive_sentences_of_bounded_length():
    text = " ".join(f"Sentence number {i} is here." for i in range(7))
    windows = text_windows(text, size=3, stride=2)
    assert (
        windows[0]
        == "Sentence number 0 is here. Sentence number 1 is here. Sentence number 2 is here."
    )
    assert len(windows) == 3 and windows[-1].endswith("6 is here.")
    long = " ".join(["word"] * 300) + "."
    assert len(text_windows(long)[0].split()) == 110 == WINDOW_WORDS
    assert text_windows("") == []


def test_a_sentence_after_a_long_one_is_in_a_window():
    # regression: a window cut short by a long second sentence used to be followed by one
    # starting two sentences on, so the long sentence was in no window at all
    long = "Aspirin " + " ".join(["word"] * 105) + " relieves pain."
    text = f"Short one here. {long} Third sentence. Fourth sentence. Fifth sentence."
    windows = text_windows(text, size=3, stride=2)
    assert any("relieves pain." in w for w in windows)
    assert windows[0] == "Short one here."
    every = " ".join(windows)
    for needle in ("Short one", "relieves pain", "Third", "Fourth", "Fifth"):
        assert needle in every


def test_pairs_are_cut_from_the_longer_side_and_keep_both(minilm):
    from transformers import AutoTokenizer

    from s3kg_core.encoders.registry import resolve_encoder

    tokenizer = AutoTokenizer.from_pretrained(str(resolve_encoder("minilm")[1]))
    long_window = " ".join(["paris"] * 100)
    enc = tokenize_pairs(tokenizer, [long_window, "short."], ["eiffel tower", "a b"], 32)
    assert tuple(enc["input_ids"].shape) == (2, 32)  # padded to the longest, cut at 32
    statement = tokenizer("eiffel tower", add_special_tokens=False)["input_ids"]
    types = enc["token_type_ids"][0].tolist()
    assert types.count(1) == len(statement) + 1  # the statement and its [SEP] survive whole
    assert enc["attention_mask"][1].sum().item() < 32  # the short pair is padded


def test_the_manifest_is_read_and_checked(tmp_path, monkeypatch):
    with pytest.raises(CheckerError, match=r"no trained checker in .*train-checker"):
        read_manifest(tmp_path)
    (tmp_path / MANIFEST).write_text("{", encoding="utf-8")
    with pytest.raises(CheckerError, match="not JSON"):
        read_manifest(tmp_path)
    (tmp_path / MANIFEST).write_text(json.dumps({"format": "other"}), encoding="utf-8")
    with pytest.raises(CheckerError, match=f"not a {MANIFEST_FORMAT} manifest"):
        read_manifest(tmp_path)
    (tmp_path / MANIFEST).write_text(json.dumps({"format": MANIFEST_FORMAT, "seed": 3}))
    assert read_manifest(tmp_path)["seed"] == 3
    monkeypatch.setenv("S3KG_CACHE_DIR", str(tmp_path / "cache"))
    assert trained_checker_dir() == tmp_path / "cache" / "checkers" / "trained-minilm"
    with pytest.raises(CheckerError, match="trained-minilm"):
        read_manifest()  # the default folder
