"""Tests of s3kg_core.limits: the input cap, one function for every input file (issue 59)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import s3kg_core.limits as limits
from s3kg_core.errors import ConfigError, InputFormatError, InputTooLargeError
from s3kg_core.limits import (
    MAX_IMPORT_BYTES,
    MAX_INPUT_ENV,
    check_file_size,
    max_input_bytes,
    open_input,
)


@pytest.fixture(autouse=True)
def _no_cap_from_the_shell(monkeypatch):
    monkeypatch.delenv(MAX_INPUT_ENV, raising=False)


def test_the_cap_is_64_mb_unless_the_variable_sets_it(monkeypatch):
    assert max_input_bytes() == MAX_IMPORT_BYTES == 64_000_000
    monkeypatch.setenv(MAX_INPUT_ENV, "200")
    assert max_input_bytes() == 200_000_000
    monkeypatch.setenv(MAX_INPUT_ENV, " 0.5 ")
    assert max_input_bytes() == 500_000


@pytest.mark.parametrize("value", ["0", "-3", "nan", "inf", "lots", "64MB"])
def test_a_cap_that_is_not_a_positive_number_is_refused_in_words(monkeypatch, value):
    monkeypatch.setenv(MAX_INPUT_ENV, value)
    with pytest.raises(ConfigError, match=rf"^{MAX_INPUT_ENV}=.* is not a number of megabytes"):
        max_input_bytes()


def test_a_file_past_the_cap_is_one_line_naming_it_its_size_the_cap_and_the_way_up(
    tmp_path, monkeypatch
):
    path = tmp_path / "big.csv"
    path.write_bytes(b"x" * 3_000_000)
    monkeypatch.setenv(MAX_INPUT_ENV, "2")
    with pytest.raises(InputTooLargeError) as info:
        check_file_size(path, "a CSV file", "split it into files of whole rows")
    assert str(info.value) == (
        "big.csv holds 3 MB; a CSV file takes at most 2 MB: split it into files of whole rows, "
        "or raise the cap with S3KG_MAX_INPUT_MB=<megabytes>"
    )
    assert isinstance(info.value, InputFormatError)  # the CLI's one line, exit status 1
    monkeypatch.setenv(MAX_INPUT_ENV, "3")
    assert check_file_size(path) == 3_000_000  # at the cap: taken


def test_a_missing_file_cannot_be_read(tmp_path):
    with pytest.raises(InputFormatError, match=r"^cannot read .*nope\.csv: No such file"):
        check_file_size(tmp_path / "nope.csv")
    with pytest.raises(InputFormatError, match=r"^cannot read .*nope\.csv: No such file"):
        open_input(tmp_path / "nope.csv")


def test_open_input_refuses_before_reading_and_reads_what_is_within(tmp_path, monkeypatch):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\n' * 10)
    monkeypatch.setattr(limits, "MAX_IMPORT_BYTES", 89)
    with pytest.raises(InputTooLargeError, match=r"^t\.jsonl holds 0 MB; an input file takes"):
        open_input(path)
    monkeypatch.setattr(limits, "MAX_IMPORT_BYTES", 90)
    with open_input(path) as fh:
        assert fh.read() == b'{"a": 1}\n' * 10


def test_a_stream_with_no_size_is_stopped_at_the_cap(monkeypatch):
    """/dev/zero has size 0 and no end: it is read up to the cap, then refused."""
    monkeypatch.setattr(limits, "MAX_IMPORT_BYTES", 3_000_000)
    with open_input(Path("/dev/zero")) as fh:
        assert len(fh.read(2_000_000)) == 2_000_000
        with pytest.raises(InputTooLargeError, match=r"^zero holds more than 3 MB; an input file"):
            while fh.read(1 << 16):
                pass


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a FIFO")
def test_a_fifo_is_refused_once_more_than_the_cap_comes_through_it(tmp_path, monkeypatch):
    from fifo_helpers import flooded_fifo

    monkeypatch.setattr(limits, "MAX_IMPORT_BYTES", 1_000_000)
    fifo = tmp_path / "pipe.jsonl"
    with (
        flooded_fifo(fifo, b'{"a": 1}\n' * 10_000) as wrote,
        pytest.raises(InputTooLargeError, match="more than 1 MB"),
        open_input(fifo) as fh,
    ):
        for _ in fh:
            pass
    assert len(wrote) < 40  # the reader stopped before the writer was done


def test_the_message_tells_a_size_from_the_cap(tmp_path, monkeypatch):
    """64.3 MB against 64 MB is not '64 MB; at most 64 MB'."""
    path = tmp_path / "near.csv"
    path.write_bytes(b"x" * 2_300_000)
    monkeypatch.setenv(MAX_INPUT_ENV, "2")
    with pytest.raises(InputTooLargeError, match=r"^near\.csv holds 2\.3 MB; .* at most 2\.0 MB"):
        check_file_size(path)
    path.write_bytes(b"x" * 2_000_001)
    with pytest.raises(InputTooLargeError, match=r"holds 2\.000 MB; .* at most 2\.000 MB"):
        check_file_size(path)


def _compressible_parquet(path: Path, rows: int = 2_000) -> Path:
    """A Parquet file a few kB on disk whose columns hold about 2 MB once decompressed."""
    import pandas as pd

    pd.DataFrame({"head": [f"{'a' * 1_000}{i}" for i in range(rows)]}).to_parquet(
        path, compression="zstd"
    )
    return path


def test_a_parquet_file_is_capped_by_its_columns_decompressed_not_only_its_size(
    tmp_path, monkeypatch
):
    """Issue 59: a small compressed Parquet file was read whole whatever it held once
    decompressed (the cap saw only the file's size)."""
    from s3kg_core.limits import check_parquet_size

    path = _compressible_parquet(tmp_path / "kg.parquet")
    assert path.stat().st_size < 200_000  # far under the cap on disk
    monkeypatch.setenv(MAX_INPUT_ENV, "1")
    check_file_size(path)  # the file's own size passes
    with pytest.raises(InputTooLargeError) as caught:
        check_parquet_size(path, "a KG file", "split it")
    message = str(caught.value)
    assert message.startswith(
        "kg.parquet holds 2 MB once decompressed; a KG file takes at most 1 MB"
    )
    assert "\n" not in message and "S3KG_MAX_INPUT_MB" in message
    monkeypatch.setenv(MAX_INPUT_ENV, "3")
    assert 1_900_000 < check_parquet_size(path) < 3_000_000


def test_a_file_that_is_no_parquet_is_one_format_error(tmp_path):
    from s3kg_core.limits import check_parquet_size

    path = tmp_path / "fake.parquet"
    path.write_text("head,relation,tail\na,r,b\n", encoding="utf-8")
    with pytest.raises(
        InputFormatError, match=r"cannot read .*fake\.parquet as Parquet: "
    ) as caught:
        check_parquet_size(path)
    assert not isinstance(caught.value, InputTooLargeError)
    with pytest.raises(InputFormatError, match="cannot read"):
        check_parquet_size(tmp_path / "missing.parquet")
