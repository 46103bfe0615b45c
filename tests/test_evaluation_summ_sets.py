"""s3kg_core.evaluation.summ_sets: the GraphEval benchmark loaders, on the declared split."""

from __future__ import annotations

from pathlib import Path

import pytest

from s3kg_core.errors import InputFormatError
from s3kg_core.evaluation.summ_sets import DATASETS, load_summ_set, read_summ_csv


def _write(path: Path, header: str, rows: list[str]) -> Path:
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def test_reads_a_summeval_like_file_and_keeps_articles_on_one_side(tmp_path):
    rows = [f'{i},art{i // 4},"Article {i // 4} text.","summary {i}",{i % 2}' for i in range(40)]
    s = read_summ_csv(_write(tmp_path / "s.csv", ",id,grounding,generated_text,label", rows))
    assert len(s) == 40 and s.examples[3].article_key == "art0" and s.examples[3].label == 1
    by_article: dict[str, set[str]] = {}
    for e in s.examples:
        by_article.setdefault(e.article_key, set()).add(e.split)
    assert all(len(v) == 1 for v in by_article.values())
    # art0..art9, four summaries each: art0, art2 and art3 are dev (the pinned split)
    assert [e.article_key for e in s.select("dev").examples][::4] == ["art0", "art2", "art3"]
    assert len(s.select("test")) == 28


def test_qags_like_file_uses_the_article_text_as_key(tmp_path):
    s = read_summ_csv(_write(tmp_path / "q.csv", ",grounding,generated_text,label", ["0,A b.,c,1"]))
    assert s.examples[0].article_key == "A b." and s.examples[0].split == "test"


def test_unknown_columns_name_what_was_found(tmp_path):
    path = _write(tmp_path / "bad.csv", "article,summary,label", ["a,b,1"])
    with pytest.raises(InputFormatError, match=r"missing column\(s\) grounding.*'article'"):
        read_summ_csv(path)


def test_bad_label_and_missing_file(tmp_path):
    path = _write(tmp_path / "l.csv", "grounding,generated_text,label", ["a,b,maybe"])
    with pytest.raises(InputFormatError, match="labels must be 0 or 1"):
        read_summ_csv(path)
    with pytest.raises(InputFormatError, match="not found"):
        read_summ_csv(tmp_path / "none.csv")
    with pytest.raises(InputFormatError, match="not found"):
        load_summ_set("summeval", data_dir=tmp_path)
    with pytest.raises(InputFormatError, match="split"):
        load_summ_set("summeval", data_dir=tmp_path, split="train")


@pytest.mark.shared_data
@pytest.mark.parametrize(
    ("name", "n", "n_pos", "n_dev", "n_dev_pos"),
    [
        ("summeval", 1600, 1306, 432, 354),
        ("qags_c", 235, 113, 71, 36),
        ("qags_x", 239, 116, 67, 34),
    ],
)
def test_shared_benchmarks(shared_data, name, n, n_pos, n_dev, n_dev_pos):
    assert (shared_data / DATASETS[name]).is_file()
    s = load_summ_set(name, data_dir=shared_data)
    assert len(s) == n and sum(s.labels()) == n_pos
    # The published split of the real sets (the README's n is the test side): pinned.
    dev = s.select("dev")
    assert (len(dev), sum(dev.labels())) == (n_dev, n_dev_pos)
    assert len(s.select("test")) == n - n_dev


def test_bytes_that_are_not_utf8_are_replaced_and_their_rows_kept(tmp_path):
    # Regression: one Latin-1 byte made the whole benchmark file unreadable.
    path = tmp_path / "s.csv"
    path.write_bytes(
        b"\xef\xbb\xbf,grounding,generated_text,label\n"
        b"u0,Paris is in France.,Paris is in France.,1\n"
        b"u1,Caf\xe9 au lait.,Tea.,0\n"
    )
    s = read_summ_csv(path)
    assert [e.uid for e in s.examples] == ["u0", "u1"]  # the BOM no longer hides the id column
    assert s.examples[1].context == "Caf\ufffd au lait."
    assert s.replaced_rows == (2,)
    assert s.select("dev").replaced_rows == s.select("test").replaced_rows == (2,)
