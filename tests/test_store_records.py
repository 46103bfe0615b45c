"""Tests of s3kg_core.store.records: the frozen rows the stages write, and AnswerRecord's status."""

from __future__ import annotations

import dataclasses

import duckdb
import pytest

from s3kg_core import kg
from s3kg_core.kg import Triple
from s3kg_core.store.records import SOURCES, AnswerRecord, ItemRecord, KGRecord, ScoreRecord
from s3kg_core.store.schema import MIGRATIONS


def test_sources_are_the_kg_modules_sources():
    assert SOURCES is kg.SOURCES
    assert SOURCES == ("gold", "answer", "context")


@pytest.mark.parametrize(
    ("answer", "error", "status"),
    [
        ("Paris.", None, "ok"),
        ("  Paris  ", None, "ok"),
        (None, None, "empty"),
        ("", None, "empty"),
        (" \n\t", None, "empty"),
        ("Paris.", "HTTP 500", "error"),
        (None, "timeout", "error"),
    ],
)
def test_answer_status_is_derived_from_error_then_text(answer, error, status):
    assert AnswerRecord(1, answer, error=error).status == status


def test_an_explicit_answer_status_is_kept():
    record = AnswerRecord(1, None, error="policy", status="refused")
    assert record.status == "refused"
    assert AnswerRecord(1, "fine", status="error").status == "error"


def test_answer_defaults():
    record = AnswerRecord(7, "x")
    assert (record.item_id, record.seed, record.latency_s, record.truncated) == (
        7,
        None,
        None,
        False,
    )
    assert (record.prompt_tokens, record.completion_tokens, record.error) == (None, None, None)


def test_records_are_frozen_and_compare_by_value():
    for record in (
        ItemRecord("q1", "Q?", "ctx", "A"),
        AnswerRecord(1, "a"),
        KGRecord(1, 2, "gold", (Triple("a", "b", "c"),)),
        ScoreRecord(1, 2, "sig", "paper", 0.5, 1.0, 0.9, "ok", 0.8, 0.7, "ok"),
    ):
        field = dataclasses.fields(record)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(record, field, None)
        assert record == dataclasses.replace(record)
        assert hash(record) == hash(dataclasses.replace(record))


def test_replacing_fields_of_an_answer_keeps_its_derived_status():
    # replace() passes status on: an 'error' record stays 'error' even with the error cleared.
    record = AnswerRecord(1, None, error="boom")
    assert dataclasses.replace(record, error=None).status == "error"
    assert dataclasses.replace(record, error=None, status=None, answer="ok").status == "ok"


def test_item_and_kg_defaults():
    assert ItemRecord("q") == ItemRecord("q", None, None, None)
    triples = (Triple("a", "b", "c"), Triple("d", "e", "f"))
    record = KGRecord(3, 4, "answer", triples)
    assert (record.status, record.n_dropped, record.truncated) == ("ok", 0, False)
    assert record.triples == triples


def test_score_record_details_default_to_none():
    record = ScoreRecord(1, 2, "sig", "mean", 0.3, 0.1, 0.2, "ok", 0.3, 0.4, "empty")
    assert (record.gold_detail, record.ctx_detail) == (None, None)


# The store writes records by field name (astuple + fields), so every field must be a column.
@pytest.mark.parametrize(
    ("record", "table"),
    [(ItemRecord, "items"), (AnswerRecord, "answers"), (ScoreRecord, "scores")],
)
def test_every_field_is_a_column_of_its_table(tmp_path, record, table):
    con = duckdb.connect(str(tmp_path / "s.duckdb"))
    for version in sorted(MIGRATIONS):
        for statement in MIGRATIONS[version]:
            con.execute(statement)
    columns = {
        r[0]
        for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [table]
        ).fetchall()
    }
    con.close()
    assert {f.name for f in dataclasses.fields(record)} <= columns
