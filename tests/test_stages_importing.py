"""Tests of the importers (s3kg_core.stages.importing): released QA runs, PubMedQA, mapped
tables."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonish_helpers import KG_CELLS, STRINGS, VALUES, to_json, utf8_clean
from store_helpers import count, kg_cell, release_rows, write_release_csv

from s3kg_core.errors import ConfigError, InputFormatError, MappingError, S3KGError
from s3kg_core.kg import Triple
from s3kg_core.stages.importing import (
    RELEASE_LAYOUTS,
    ImportReport,
    import_pubmedqa,
    import_s3kg_release,
    import_table,
    parse_mapping,
)
from s3kg_core.store.records import KGRecord, ScoreRecord
from s3kg_core.store.store import Store

LAYOUTS = sorted(RELEASE_LAYOUTS)


def _query(store: Store, sql: str, params=()) -> list[tuple]:
    with store.connect() as con:
        return con.execute(sql, list(params)).fetchall()


def _counts(store: Store) -> dict[str, int]:
    return {t: count(store, t) for t in ("datasets", "items", "runs", "answers", "kgs", "triples")}


# -- released QA runs ----------------------------------------------------------------------------


def test_both_release_layouts_are_named_as_the_released_files_name_them():
    assert LAYOUTS == ["released", "released-small"]
    assert RELEASE_LAYOUTS["released"]["kg_answer"] == "kg_llm"
    assert RELEASE_LAYOUTS["released-small"]["id"] == "row_id"
    assert RELEASE_LAYOUTS["released-small"]["kg_context"] == "context_kg"


@pytest.mark.parametrize("layout", LAYOUTS)
def test_release_import_reads_either_layout(tmp_path, layout):
    folder = tmp_path / "qa"
    write_release_csv(folder / "mesaqa_gemma-7b-it.csv", layout, release_rows(3))
    write_release_csv(
        folder / "pubmedqa_llama-2-7b-chat.csv", layout, release_rows(2), reverse_columns=True
    )
    store = Store(tmp_path / "db.duckdb")
    reports = import_s3kg_release(store, folder)
    assert [(r.source, r.dataset, r.model) for r in reports] == [
        ("mesaqa_gemma-7b-it.csv", "mesaqa", "gemma-7b-it"),
        ("pubmedqa_llama-2-7b-chat.csv", "pubmedqa", "llama-2-7b-chat"),
    ]
    assert [(r.items, r.answers, r.kgs, r.problems) for r in reports] == [
        (3, 3, 9, []),
        (2, 2, 6, []),
    ]
    assert (
        reports[0].summary()
        == "mesaqa_gemma-7b-it.csv: mesaqa / gemma-7b-it: 3 items, 3 answers, 9 KGs"
    )
    runs = _query(
        store,
        "SELECT d.name, r.model, r.temperature, r.extractor, r.source FROM runs r "
        "JOIN datasets d USING (dataset_id) ORDER BY d.name",
    )
    assert runs == [
        ("mesaqa", "gemma-7b-it", 0.0, layout, "s3kg_release/mesaqa_gemma-7b-it.csv"),
        ("pubmedqa", "llama-2-7b-chat", 0.0, layout, "s3kg_release/pubmedqa_llama-2-7b-chat.csv"),
    ]
    item = _query(
        store,
        "SELECT i.ext_id, i.question, i.context, i.gold_answer, a.answer FROM items i "
        "JOIN answers a USING (item_id) JOIN datasets d USING (dataset_id) "
        "WHERE d.name = 'mesaqa' AND i.ext_id = '1'",
    )
    assert item == [
        (
            "1",
            "What does aspirin do 1?",
            "Aspirin reduces fever and treats headache 1.",
            "Aspirin reduces fever 1.",
            "Aspirin treats headache 1.",
        )
    ]
    with store.connect() as con:
        kgs = store.load_kgs(con, [reports[0].run_id])
    item_id = _query(store, "SELECT item_id FROM items WHERE ext_id = '1' AND dataset_id = 1")[0][0]
    assert kgs[(reports[0].run_id, item_id, "answer")].triples == (
        Triple("aspirin", "treats", "headache"),
    )
    assert kgs[(reports[0].run_id, item_id, "context")].triples == (
        Triple("aspirin", "reduces", "fever"),
        Triple("aspirin", "treats", "headache"),
    )
    assert {k.status for k in kgs.values()} == {"ok"}


def test_unparseable_and_malformed_kg_cells_are_counted_by_row(tmp_path):
    rows = release_rows(4)
    rows[1]["kg_answer"] = '[["aspirin", "treats", "headache"]]137'
    rows[2]["kg_context"] = "aspirin treats headache"
    rows[2]["kg_gold"] = "{'a': 1}"
    rows[3]["kg_gold"] = str([["a", "r", "b"], ["only", "two"], ["a", "r", "b", "c"]])
    write_release_csv(tmp_path / "qa" / "toy_m.csv", "released", rows)
    store = Store(tmp_path / "db.duckdb")
    (report,) = import_s3kg_release(store, tmp_path / "qa")
    assert report.kgs == 12
    assert len(report.problems) == 4
    assert report.problems[0].startswith("row 1: answer KG unparseable (")
    assert report.problems[1].startswith("row 2: gold KG unparseable (")
    assert report.problems[2].startswith("row 2: context KG unparseable (")
    assert report.problems[3] == "row 3: gold KG: 2 malformed triples dropped"
    assert report.summary().endswith("; 4 problems")
    status = {
        (ext, source): (st, n, dropped)
        for ext, source, st, n, dropped in _query(
            store,
            "SELECT i.ext_id, k.source, k.status, k.n_triples, k.n_dropped FROM kgs k "
            "JOIN items i USING (item_id)",
        )
    }
    assert status[("1", "answer")] == ("unparseable", 0, 0)
    assert status[("2", "gold")] == ("unparseable", 0, 0)
    assert status[("2", "context")] == ("unparseable", 0, 0)
    assert status[("3", "gold")] == ("ok", 1, 2)
    assert status[("0", "answer")] == ("ok", 1, 0)


def test_release_kg_cell_with_an_integer_past_the_digit_limit_drops_that_triple(tmp_path):
    # Regression (issue 17, D1): the ValueError of json.loads escaped and aborted the import.
    rows = release_rows(2)
    rows[0]["kg_gold"] = f'[[{"9" * 5000}, "reduces", "fever"], ["aspirin", "reduces", "fever"]]'
    write_release_csv(tmp_path / "qa" / "toy_m.csv", "released", rows)
    store = Store(tmp_path / "db.duckdb")
    (report,) = import_s3kg_release(store, tmp_path / "qa")
    assert report.problems == ["row 0: gold KG: 1 malformed triples dropped"]
    assert (report.items, report.kgs) == (2, 6)


def test_empty_texts_and_kgs_are_stored_with_status_empty(tmp_path):
    rows = release_rows(3)
    rows[0].update(answer="", kg_answer="")
    rows[1].update(kg_gold="[]", kg_context="   ", question="", context="")
    rows[2]["kg_answer"] = str([["only", "two"]])  # nothing left after dropping: empty
    write_release_csv(tmp_path / "qa" / "toy_m.csv", "released-small", rows)
    store = Store(tmp_path / "db.duckdb")
    (report,) = import_s3kg_release(store, tmp_path / "qa")
    assert report.problems == ["row 2: answer KG: 1 malformed triples dropped"]
    status = {
        (ext, source): (st, n)
        for ext, source, st, n in _query(
            store,
            "SELECT i.ext_id, k.source, k.status, k.n_triples FROM kgs k "
            "JOIN items i USING (item_id)",
        )
    }
    assert status[("0", "answer")] == ("empty", 0)
    assert status[("1", "gold")] == ("empty", 0)
    assert status[("1", "context")] == ("empty", 0)
    assert status[("2", "answer")] == ("empty", 0)
    assert status[("0", "gold")] == ("ok", 1)
    assert _query(
        store, "SELECT answer FROM answers a JOIN items i USING (item_id) WHERE ext_id = '0'"
    ) == [("",)]


def test_reimport_is_idempotent_and_replaces_what_changed(tmp_path):
    folder = tmp_path / "qa"
    rows = release_rows(3)
    write_release_csv(folder / "toy_m.csv", "released", rows)
    store = Store(tmp_path / "db.duckdb")
    first = import_s3kg_release(store, folder)
    counts = _counts(store)
    assert counts["triples"] == 3 * (1 + 1 + 2)
    second = import_s3kg_release(store, folder)
    assert [(r.run_id, r.items, r.answers, r.kgs) for r in second] == [
        (r.run_id, r.items, r.answers, r.kgs) for r in first
    ]
    assert _counts(store) == counts
    rows[0]["kg_context"] = kg_cell(("aspirin", "reduces", "fever"))
    rows[0]["answer"] = "changed"
    write_release_csv(folder / "toy_m.csv", "released", rows)
    import_s3kg_release(store, folder)
    assert _counts(store) == {**counts, "triples": counts["triples"] - 1}
    assert ("changed",) in _query(store, "SELECT answer FROM answers")


def test_reimporting_corrected_kgs_drops_only_their_stale_scores_d3(tmp_path):
    """Issue 17 (D3): a release file re-imported with a corrected KG (same file name) kept the
    old score of that answer, so ``score`` skipped it and ``cus`` reported the stale 0."""
    folder = tmp_path / "qa"
    rows = release_rows(3)
    rows[1]["kg_answer"] = "not a list"
    write_release_csv(folder / "toy_m.csv", "released", rows)
    store = Store(tmp_path / "db.duckdb")
    [report] = import_s3kg_release(store, folder)
    with store.transaction() as con:
        store.put_scores(
            con,
            [
                ScoreRecord(report.run_id, item, "sig", "paper", 0.5, 0, 0, "ok", 0, 0, "ok")
                for (item,) in con.execute("SELECT item_id FROM answers").fetchall()
            ],
        )
    rows[1]["kg_answer"] = kg_cell(("aspirin", "treats", "headache"))
    write_release_csv(folder / "toy_m.csv", "released", rows)
    [again] = import_s3kg_release(store, folder)
    assert again.run_id == report.run_id and again.problems == []
    scored = _query(store, "SELECT i.ext_id FROM scores s JOIN items i USING (item_id) ORDER BY 1")
    assert scored == [("0",), ("2",)]  # row 1's KG changed: its score must be computed again


def test_unknown_layout_names_expected_and_found_columns_and_writes_nothing(tmp_path):
    folder = tmp_path / "qa"
    folder.mkdir()
    (folder / "toy_m.csv").write_text("id,question,answer,kg\n1,q,a,[]\n", encoding="utf-8")
    db = tmp_path / "db.duckdb"
    with pytest.raises(InputFormatError) as info:
        import_s3kg_release(Store(db), folder)
    message = str(info.value)
    assert message.startswith("toy_m.csv: not a released QA run; expected columns (")
    for layout in RELEASE_LAYOUTS.values():
        assert "(" + ", ".join(layout.values()) + ")" in message
    assert message.endswith("found id, question, answer, kg")
    assert not db.exists()


def test_a_file_missing_one_column_is_refused(tmp_path):
    write_release_csv(tmp_path / "qa" / "toy_m.csv", "released", release_rows(1))
    path = tmp_path / "qa" / "toy_m.csv"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text(lines[0].replace("kg_context", "kg_ctx") + "\n" + lines[1] + "\n")
    with pytest.raises(InputFormatError, match=r"found .*kg_ctx"):
        import_s3kg_release(Store(tmp_path / "db.duckdb"), tmp_path / "qa")
    assert not (tmp_path / "db.duckdb").exists()


@pytest.mark.parametrize("name", ["mesaqa.csv", "_gemma.csv", "mesaqa_.csv"])
def test_file_name_must_be_dataset_model(tmp_path, name):
    write_release_csv(tmp_path / "qa" / name, "released", release_rows(1))
    with pytest.raises(InputFormatError, match=r"file name must be DATASET_MODEL\.csv") as info:
        import_s3kg_release(Store(tmp_path / "db.duckdb"), tmp_path / "qa")
    assert str(info.value).startswith(name)


def test_a_folder_without_csv_files_is_an_error(tmp_path):
    (tmp_path / "qa").mkdir()
    with pytest.raises(InputFormatError, match=r"no \*\.csv files"):
        import_s3kg_release(Store(tmp_path / "db.duckdb"), tmp_path / "qa")
    with pytest.raises(InputFormatError, match=r"no \*\.csv files"):
        import_s3kg_release(Store(tmp_path / "db.duckdb"), tmp_path / "nowhere")


def test_a_repeated_id_in_a_release_file_keeps_the_last_row_and_reports_it(tmp_path):
    rows = release_rows(3)
    rows[2]["id"] = "0"
    rows[2]["kg_answer"] = kg_cell(("aspirin", "reduces", "fever"), ("aspirin", "is", "drug"))
    write_release_csv(tmp_path / "qa" / "toy_m.csv", "released", rows)
    store = Store(tmp_path / "db.duckdb")
    (report,) = import_s3kg_release(store, tmp_path / "qa")
    assert report.problems == ["1 rows repeat an id; the last row of each id is kept"]
    assert (report.items, report.answers, report.kgs) == (2, 2, 6)
    assert _query(
        store,
        "SELECT i.question, a.answer, k.n_triples FROM items i JOIN answers a USING (item_id) "
        "JOIN kgs k USING (run_id, item_id) WHERE i.ext_id = '0' AND k.source = 'answer'",
    ) == [("What does aspirin do 2?", "Aspirin treats headache 2.", 2)]
    assert count(store, "triples") == (1 + 1 + 2) + (1 + 2 + 2)


# -- PubMedQA ------------------------------------------------------------------------------------


def _pqal(path, records):
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


PQAL = {
    "21645374": {
        "QUESTION": "Do mitochondria play a role in remodelling lace plant leaves?",
        "CONTEXTS": ["Programmed cell death occurs.", "Mitochondria were observed."],
        "LABELS": ["BACKGROUND", "RESULTS"],
        "LONG_ANSWER": "Results depict mitochondria as playing a role.",
        "final_decision": "yes",
    },
    "16418930": {
        "QUESTION": "Is a short course enough?",
        "CONTEXTS": ["One context only."],
        "LONG_ANSWER": "Yes, it is.",
    },
}


def test_pubmedqa_import_joins_contexts_and_keys_items_by_pmid(tmp_path):
    store = Store(tmp_path / "db.duckdb")
    report = import_pubmedqa(store, _pqal(tmp_path / "ori_pqal.json", PQAL))
    assert (report.dataset, report.items, report.answers, report.kgs) == ("pubmedqa_pqal", 2, 0, 0)
    assert report.summary() == "ori_pqal.json: pubmedqa_pqal: 2 items, 0 answers, 0 KGs"
    rows = _query(
        store,
        "SELECT d.name, i.ext_id, i.question, i.context, i.gold_answer FROM items i "
        "JOIN datasets d USING (dataset_id) ORDER BY i.ext_id",
    )
    assert rows == [
        (
            "pubmedqa_pqal",
            "16418930",
            "Is a short course enough?",
            "One context only.",
            "Yes, it is.",
        ),
        (
            "pubmedqa_pqal",
            "21645374",
            "Do mitochondria play a role in remodelling lace plant leaves?",
            "Programmed cell death occurs. Mitochondria were observed.",
            "Results depict mitochondria as playing a role.",
        ),
    ]
    assert count(store, "runs") == 0
    import_pubmedqa(store, tmp_path / "ori_pqal.json")
    import_pubmedqa(store, tmp_path / "ori_pqal.json", dataset="pqa_copy")
    assert count(store, "items") == 4 and count(store, "datasets") == 2


def test_pubmedqa_limit_imports_the_first_records_in_file_order_issue_58(tmp_path):
    """Issue 58: `import pubmedqa` took all 1,000 questions; --limit takes the first N, and a
    malformed record past them is not read."""
    records = {
        f"{pmid}": {"QUESTION": f"Q{pmid}?", "CONTEXTS": [f"C{pmid}."], "LONG_ANSWER": f"A{pmid}."}
        for pmid in (30, 10, 20)
    }
    path = _pqal(tmp_path / "ori_pqal.json", {**records, "99": {"QUESTION": "no context"}})
    store = Store(tmp_path / "db.duckdb")
    assert import_pubmedqa(store, path, limit=2).items == 2
    assert _query(store, "SELECT ext_id FROM items ORDER BY item_id") == [("30",), ("10",)]
    with pytest.raises(ConfigError, match="limit must be 1 or more; got 0"):
        import_pubmedqa(store, path, limit=0)
    with pytest.raises(InputFormatError, match="record 99 lacks CONTEXTS, LONG_ANSWER"):
        import_pubmedqa(store, path, limit=4)
    assert count(store, "items") == 2


def test_pubmedqa_record_missing_keys_names_them_and_writes_nothing(tmp_path):
    bad = {**PQAL, "999": {"QUESTION": "q", "CONTEXTS": ["c"], "final_decision": "no"}}
    db = tmp_path / "db.duckdb"
    with pytest.raises(InputFormatError) as info:
        import_pubmedqa(Store(db), _pqal(tmp_path / "ori_pqal.json", bad))
    assert str(info.value) == (
        "ori_pqal.json: record 999 lacks LONG_ANSWER; expected QUESTION, CONTEXTS, LONG_ANSWER, "
        "found CONTEXTS, QUESTION, final_decision"
    )
    assert not db.exists()


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("{not json", "cannot read .* as JSON"),
        ("[1, 2]", "expected an object of PMID -> record"),
        ('{"1": "just text"}', "record 1 lacks QUESTION, CONTEXTS, LONG_ANSWER.*found str"),
    ],
)
def test_pubmedqa_file_that_is_not_pqal_json(tmp_path, text, match):
    path = tmp_path / "x.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputFormatError, match=match):
        import_pubmedqa(Store(tmp_path / "db.duckdb"), path)


def test_pubmedqa_integer_past_the_digit_limit_is_stored_as_its_digits(tmp_path):
    # Regression (issue 17, D1): json.loads raised ValueError past 4300 digits, uncaught.
    big = "9" * 5000
    path = tmp_path / "ori_pqal.json"
    path.write_text(
        f'{{"1": {{"QUESTION": "q?", "CONTEXTS": ["a.", {big}], "LONG_ANSWER": {big}}}}}',
        encoding="utf-8",
    )
    store = Store(tmp_path / "db.duckdb")
    assert import_pubmedqa(store, path).items == 1
    assert _query(store, "SELECT context, gold_answer FROM items") == [(f"a. {big}", big)]


# -- mapped CSV / JSONL --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("question=q,context=c,gold=g", {"question": "q", "context": "c", "gold": "g"}),
        (
            " question = Q col , context=C,gold=G, answer=A, id=key ,",
            {"question": "Q col", "context": "C", "gold": "G", "answer": "A", "id": "key"},
        ),
        ("question=q,context=c,gold=g,gold=g2", {"question": "q", "context": "c", "gold": "g2"}),
    ],
)
def test_parse_mapping(spec, expected):
    assert parse_mapping(spec) == expected


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        (
            "question=q,context=c,gold=g,label=l",
            "unknown field 'label' in mapping; fields are id, ",
        ),
        ("question=q,context=c", "mapping must name the gold column"),
        ("context=c,gold=g", "mapping must name the question column"),
        ("question=q,context,gold=g", "mapping entry 'context' must be FIELD=COLUMN"),
        ("question=q,context=,gold=g", "mapping entry 'context=' must be FIELD=COLUMN"),
        ("", "mapping must name the question column"),
    ],
)
def test_parse_mapping_errors(spec, match):
    with pytest.raises(MappingError, match=match):
        parse_mapping(spec)


def _table_csv(path):
    path.write_text(
        "key,q,ctx,long,model_answer,extra\n"
        "a,Why?,Because.,So.,It is so.,x\n"
        'b,"Who, then?",Him.,He did.,,y\n',
        encoding="utf-8",
    )
    return path


def _table_jsonl(path):
    lines = [
        {"key": "a", "q": "Why?", "ctx": "Because.", "long": "So.", "model_answer": "It is so."},
        {"key": "b", "q": "Who, then?", "ctx": "Him.", "long": "He did.", "model_answer": None},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("maker", [_table_csv, _table_jsonl], ids=["csv", "jsonl"])
def test_import_table_with_answers(tmp_path, maker):
    suffix = ".csv" if maker is _table_csv else ".jsonl"
    path = maker(tmp_path / f"my_set{suffix}")
    store = Store(tmp_path / "db.duckdb")
    mapping = parse_mapping("id=key,question=q,context=ctx,gold=long,answer=model_answer")
    report = import_table(store, path, mapping, model="smol", temperature=0.7)
    assert (report.dataset, report.model, report.items, report.answers) == ("my_set", "smol", 2, 2)
    assert report.problems == []
    assert _query(store, "SELECT model, temperature, extractor FROM runs") == [
        ("smol", 0.7, "none")
    ]
    rows = _query(
        store,
        "SELECT i.ext_id, i.question, i.context, i.gold_answer, a.answer FROM items i "
        "JOIN answers a USING (item_id) ORDER BY i.ext_id",
    )
    empty = "" if maker is _table_csv else None
    assert rows == [
        ("a", "Why?", "Because.", "So.", "It is so."),
        ("b", "Who, then?", "Him.", "He did.", empty),
    ]
    again = import_table(store, path, mapping, model="smol", temperature=0.7)
    assert again.run_id == report.run_id
    assert (count(store, "items"), count(store, "answers"), count(store, "runs")) == (2, 2, 1)


def test_reimporting_an_extracted_table_keeps_its_run_and_changed_answers_lose_their_kgs(
    tmp_path,
):
    """Issue 17: re-importing a table after its run was extracted made a second run with
    extractor ``none``, whose extraction then collided with the first (ConstraintException)."""
    path = _table_csv(tmp_path / "t.csv")
    store = Store(tmp_path / "db.duckdb")
    mapping = parse_mapping("id=key,question=q,context=ctx,gold=long,answer=model_answer")
    first = import_table(store, path, mapping, model="smol")
    with store.transaction() as con:
        con.execute("UPDATE runs SET extractor = 'offline:x'")
        items = [r[0] for r in con.execute("SELECT item_id FROM items ORDER BY 1").fetchall()]
        store.put_kgs(con, [KGRecord(first.run_id, i, "answer", ()) for i in items])
    again = import_table(store, path, mapping, model="smol")
    assert again.run_id == first.run_id and count(store, "runs") == 1
    assert count(store, "kgs") == 2  # the same answers keep their KGs
    path.write_text(path.read_text(encoding="utf-8").replace("It is so.", "It is not."))
    import_table(store, path, mapping, model="smol")
    assert _query(store, "SELECT i.ext_id FROM kgs JOIN items i USING (item_id)") == [("b",)]
    assert _query(store, "SELECT extractor FROM runs") == [("offline:x",)]


def test_import_table_without_answers_numbers_rows_and_names_the_dataset(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(
        '{"q": "one?", "c": 1, "g": true}\n{"q": "two?", "c": [1, 2], "g": "yes"}\n',
        encoding="utf-8",
    )
    store = Store(tmp_path / "db.duckdb")
    report = import_table(store, path, parse_mapping("question=q,context=c,gold=g"), dataset="mine")
    assert (report.dataset, report.model, report.items, report.answers) == ("mine", None, 2, 0)
    assert _query(store, "SELECT ext_id, question, context, gold_answer FROM items ORDER BY 1") == [
        ("1", "one?", "1", "True"),
        ("2", "two?", "[1, 2]", "yes"),
    ]
    assert count(store, "runs") == 0


def _extras(store: Store) -> list[tuple]:
    return _query(
        store,
        "SELECT e.run_id, i.ext_id, e.name, e.pos, e.value FROM extra_columns e "
        "JOIN items i USING (item_id) ORDER BY e.run_id, i.ext_id, e.pos",
    )


def test_unmapped_columns_are_kept_per_answer_under_their_own_names(tmp_path):
    # Issue 32: an `answer_kind` column of the user's file was dropped at import
    path = tmp_path / "t.csv"
    path.write_text(
        "id,answer_kind,q,c,g,a,topic,answer_kind\n"
        "0001,short,q1,c1,g1,a1,pain,dup\n0002,,q2,c2,g2,a2,,dup\n",
        encoding="utf-8",
    )
    store = Store(tmp_path / "db.duckdb")
    mapping = parse_mapping("id=id,question=q,context=c,gold=g,answer=a")
    report = import_table(store, path, mapping, model="m")
    # the first of two columns of one name is the place; the csv reader keeps the last's cells
    assert _extras(store) == [
        (report.run_id, "0001", "answer_kind", 1, "dup"),
        (report.run_id, "0001", "topic", 6, "pain"),
        (report.run_id, "0002", "answer_kind", 1, "dup"),
        (report.run_id, "0002", "topic", 6, ""),
    ]
    path.write_text("id,q,c,g,a,topic\n0001,q1,c1,g1,a1,fever\n", encoding="utf-8")
    import_table(store, path, mapping, model="m")  # a column the file lost is gone
    assert [r[2:] for r in _extras(store)] == [
        ("topic", 5, "fever"),
        ("answer_kind", 1, "dup"),  # 0002 is not in the file: it keeps what it had
        ("topic", 6, ""),
    ]


def test_unmapped_values_of_a_questions_only_jsonl_file_are_kept_per_item(tmp_path):
    big = "9" * 5000
    path = tmp_path / "rows.jsonl"
    path.write_text(
        '{"q": "one?", "c": "c", "g": "g", "n": 3, "tags": ["a", "é"], "ok": true}\n'
        f'{{"q": "two?", "c": "c", "g": "g", "n": {big}, "deep": [{{"x": {big}}}]}}\n',
        encoding="utf-8",
    )
    store = Store(tmp_path / "db.duckdb")
    report = import_table(store, path, parse_mapping("question=q,context=c,gold=g"))
    assert report.problems == []
    rows = _extras(store)
    assert {r[0] for r in rows} == {0}  # no run: the item's
    values = {(r[1], r[2]): r[4] for r in rows}
    deep = f'[{{"x": "{big}"}}]'  # a long integer inside: its digits, as a JSON string
    assert values == {
        ("1", "n"): "3", ("1", "tags"): '["a", "é"]', ("1", "ok"): "true", ("1", "deep"): None,
        ("2", "n"): big, ("2", "tags"): None, ("2", "ok"): None, ("2", "deep"): deep,
    }  # fmt: skip


def test_import_table_mapped_column_absent_lists_found_columns(tmp_path):
    path = _table_csv(tmp_path / "t.csv")
    db = tmp_path / "db.duckdb"
    with pytest.raises(MappingError) as info:
        import_table(Store(db), path, parse_mapping("question=q,context=context,gold=gold"))
    assert str(info.value) == (
        "t.csv: mapped column(s) not found: context=context, gold=gold; "
        "columns in the file: key, q, ctx, long, model_answer, extra"
    )
    assert not db.exists()


def test_import_table_answer_column_needs_a_model(tmp_path):
    path = _table_csv(tmp_path / "t.csv")
    db = tmp_path / "db.duckdb"
    with pytest.raises(MappingError, match="name its model with --model NAME"):
        import_table(
            Store(db), path, parse_mapping("question=q,context=ctx,gold=long,answer=model_answer")
        )
    assert not db.exists()


def test_import_table_bad_jsonl_line_is_named(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"q": 1}\nnot json\n', encoding="utf-8")
    with pytest.raises(InputFormatError, match=r"t\.jsonl: line 2 is not JSON"):
        import_table(
            Store(tmp_path / "db.duckdb"), path, parse_mapping("question=q,context=q,gold=q")
        )
    path.write_text('{"q": 1}\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(InputFormatError, match="line 2 is not a JSON object"):
        import_table(
            Store(tmp_path / "db.duckdb"), path, parse_mapping("question=q,context=q,gold=q")
        )


def test_import_table_jsonl_integer_past_the_digit_limit_is_stored_as_its_digits(tmp_path):
    # Regression (issue 17, D1): `import csv` of a JSONL file with a 5,000-digit number ended in
    # a ValueError traceback ("Exceeds the limit (4300 digits) for integer string conversion").
    big = "9" * 5000
    path = tmp_path / "t.jsonl"
    path.write_text(f'{{"id": {big}, "q": "why?", "c": -{big}, "g": {big}}}\n', encoding="utf-8")
    store = Store(tmp_path / "db.duckdb")
    report = import_table(store, path, parse_mapping("id=id,question=q,context=c,gold=g"))
    assert (report.items, report.problems) == (1, [])
    assert _query(store, "SELECT ext_id, question, context, gold_answer FROM items") == [
        (big, "why?", f"-{big}", big)
    ]


def test_import_table_repeated_id_keeps_the_last_row_for_item_and_answer(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("id,q,c,g,a\n1,q1,c1,g1,a1\n1,q2,c2,g2,a2\n", encoding="utf-8")
    store = Store(tmp_path / "db.duckdb")
    report = import_table(
        store, path, parse_mapping("id=id,question=q,context=c,gold=g,answer=a"), model="m"
    )
    assert report.problems == ["1 rows repeat an id; the last row of each id is kept"]
    rows = _query(store, "SELECT i.question, a.answer FROM items i JOIN answers a USING (item_id)")
    assert rows == [("q2", "a2")]
    assert report.answers == 1


def test_a_bad_file_in_the_folder_stops_the_import_before_anything_is_written(tmp_path):
    # Regression: a good file sorting before a bad one used to be written before the error.
    write_release_csv(tmp_path / "qa" / "aaa_good.csv", "released", release_rows(2))
    (tmp_path / "qa" / "zzz_bad.csv").write_text("x,y\n1,2\n", encoding="utf-8")
    store = Store(tmp_path / "db.duckdb")
    with pytest.raises(InputFormatError, match=r"zzz_bad\.csv"):
        import_s3kg_release(store, tmp_path / "qa")
    assert not store.path.exists() or _counts(store)["items"] == 0


def test_short_rows_of_a_release_file_are_reported(tmp_path):
    # Regression: a row too short to reach the KG columns was imported silently as empty KGs.
    path = write_release_csv(tmp_path / "qa" / "toy_m.csv", "released", release_rows(2))
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([*lines, "7,only the gold answer"]) + "\n", encoding="utf-8")
    (report,) = import_s3kg_release(Store(tmp_path / "db.duckdb"), tmp_path / "qa")
    assert any(p.startswith("row 7: too few fields") for p in report.problems)
    assert report.items == 3


# -- bytes that are not UTF-8 -------------------------------------------------------------------


def test_release_file_with_a_latin1_byte_reports_its_row(tmp_path):
    # Regression: the importers replaced bytes that are not UTF-8 silently.
    path = write_release_csv(tmp_path / "qa" / "toy_m.csv", "released", release_rows(3))
    path.write_bytes(path.read_bytes().replace(b"headache 1.", b"mal de t\xeate 1."))
    store = Store(tmp_path / "db.duckdb")
    (report,) = import_s3kg_release(store, tmp_path / "qa")
    assert report.problems == ["row 1 (data row 2): non-UTF-8 text replaced with U+FFFD"]
    assert report.items == 3
    answers = _query(
        store, "SELECT a.answer FROM answers a JOIN items i USING (item_id) WHERE ext_id = '1'"
    )
    assert answers == [("Aspirin treats mal de t\ufffdte 1.",)]


def test_mapped_csv_with_a_latin1_byte_reports_its_row(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b"key,q,c,g\na,Why?,Because.,So.\nb,Caf\xe9?,Him.,He did.\n")
    store = Store(tmp_path / "db.duckdb")
    report = import_table(store, path, parse_mapping("id=key,question=q,context=c,gold=g"))
    assert report.problems == ["row b (data row 2): non-UTF-8 text replaced with U+FFFD"]
    assert _query(store, "SELECT question FROM items ORDER BY ext_id") == [
        ("Why?",),
        ("Caf\ufffd?",),
    ]


def test_jsonl_with_a_latin1_byte_reports_its_line(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"q": "one?"}\n\n{"q": "caf\xe9?"}\n')
    report = import_table(
        Store(tmp_path / "db.duckdb"), path, parse_mapping("question=q,context=q,gold=q")
    )
    # rows without an id are numbered by object (2), the report also names the file's line (3)
    assert report.problems == ["row 2 (line 3): non-UTF-8 text replaced with U+FFFD"]
    assert report.items == 2


def test_a_header_with_undecodable_bytes_is_reported(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b"q,c,g,caf\xe9\nWhy?,Because.,So.,x\n")
    report = import_table(
        Store(tmp_path / "db.duckdb"), path, parse_mapping("question=q,context=c,gold=g")
    )
    assert report.problems == ["header: non-UTF-8 text replaced with U+FFFD"]


# -- lone surrogates (issue 17, D2) -----------------------------------------------------------


def test_release_kg_cell_with_a_lone_surrogate_is_replaced_and_reported(tmp_path):
    # Regression (issue 17, D2): the triple "\ud800" reached DuckDB, which cannot encode it.
    rows = release_rows(2)
    rows[1]["kg_answer"] = r'[["\ud800", "treats", "headache"]]'
    write_release_csv(tmp_path / "qa" / "toy_m.csv", "released", rows)
    store = Store(tmp_path / "db.duckdb")
    (report,) = import_s3kg_release(store, tmp_path / "qa")
    assert report.problems == ["row 1: answer KG: non-UTF-8 text replaced with U+FFFD"]
    assert (report.items, report.kgs) == (2, 6)
    assert ("\ufffd",) in _query(store, "SELECT head FROM triples")


def test_import_table_jsonl_lone_surrogate_is_replaced_and_reported(tmp_path):
    # Regression (issue 17, D2): `import csv` of {"q": "Is \ud800 ok?"} died on the encoding.
    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"q": "fine?", "c": "c", "g": "g"}\n' r'{"q": "Is \ud800 ok?", "c": "c", "g": "g"}' "\n",
        encoding="utf-8",
    )
    store = Store(tmp_path / "db.duckdb")
    report = import_table(store, path, parse_mapping("question=q,context=c,gold=g"))
    assert report.problems == ["row 2 (line 2): non-UTF-8 text replaced with U+FFFD"]
    assert _query(store, "SELECT question FROM items ORDER BY ext_id") == [
        ("fine?",),
        ("Is \ufffd ok?",),
    ]


def test_pubmedqa_lone_surrogate_is_replaced_and_reported(tmp_path):
    path = tmp_path / "ori_pqal.json"
    path.write_text(
        r'{"1": {"QUESTION": "q\ud800?", "CONTEXTS": ["\udfff"], "LONG_ANSWER": "a"},'
        r' "2": {"QUESTION": "q?", "CONTEXTS": [], "LONG_ANSWER": "a"}}',
        encoding="utf-8",
    )
    store = Store(tmp_path / "db.duckdb")
    report = import_pubmedqa(store, path)
    assert report.problems == ["record 1: non-UTF-8 text replaced with U+FFFD"]
    assert _query(store, "SELECT question, context FROM items ORDER BY ext_id") == [
        ("q\ufffd?", "\ufffd"),
        ("q?", ""),
    ]


# -- property tests: hostile rows give a report, or a named error for the file (issue 17) -------

HOSTILE = settings(
    max_examples=20,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TEXT_COLUMNS = ("question", "context", "gold_answer")


def _write_rows(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    # a lone surrogate cannot be UTF-8: "surrogatepass" writes its three (invalid) bytes
    with path.open("w", newline="", encoding="utf-8", errors="surrogatepass") as fh:
        csv.writer(fh).writerows([header, *rows])
    return path


def _check_report(report: ImportReport, store: Store) -> None:
    """Every message printable, every stored text valid UTF-8 (DuckDB could not hold else)."""
    assert utf8_clean(report.summary()) and all(utf8_clean(p) for p in report.problems)
    with store.connect() as con:
        texts = con.execute(f"SELECT ext_id, {', '.join(TEXT_COLUMNS)} FROM items").fetchall()
        labels = con.execute("SELECT head, relation, tail FROM triples").fetchall()
    assert all(t is None or utf8_clean(t) for row in texts + labels for t in row)


@pytest.fixture(scope="module")
def hostile_store(tmp_path_factory) -> Store:
    return Store(tmp_path_factory.mktemp("hostile") / "db.duckdb")


@HOSTILE
@given(rows=st.lists(st.lists(STRINGS, min_size=4, max_size=4), min_size=1, max_size=4))
def test_import_table_csv_takes_any_cells(hostile_store, tmp_path_factory, rows):
    path = _write_rows(tmp_path_factory.mktemp("csv") / "t.csv", ["id", "q", "c", "g"], rows)
    mapping = parse_mapping("id=id,question=q,context=c,gold=g")
    try:
        report = import_table(hostile_store, path, mapping)
    except S3KGError as exc:  # a whole-file problem, if any
        assert isinstance(exc, InputFormatError) and utf8_clean(str(exc))
        return
    assert 1 <= report.items <= len(rows)
    _check_report(report, hostile_store)


JSONL_RECORDS = st.dictionaries(
    st.one_of(st.sampled_from(["id", "q", "c", "g"]), STRINGS), VALUES, max_size=6
).map(lambda record: {"id": "x", "q": "why?", "c": "ctx", "g": "gold", **record})


JSONL_LINES = st.one_of(JSONL_RECORDS.map(to_json), VALUES.map(to_json))  # objects, or not


@HOSTILE
@given(lines=st.lists(JSONL_LINES, min_size=1, max_size=4))
def test_import_table_jsonl_takes_any_values(hostile_store, tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("jsonl") / "t.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")  # JSON escapes: ASCII text
    mapping = parse_mapping("id=id,question=q,context=c,gold=g")
    try:
        report = import_table(hostile_store, path, mapping)
    except S3KGError as exc:  # a line not an object or too deep to read, no mapped column
        assert isinstance(exc, InputFormatError) and utf8_clean(str(exc))
        return
    assert 1 <= report.items <= len(lines)
    _check_report(report, hostile_store)


RELEASE_ROWS = st.tuples(
    st.lists(STRINGS, min_size=5, max_size=5), st.lists(KG_CELLS, min_size=3, max_size=3)
).map(lambda texts_kgs: texts_kgs[0] + texts_kgs[1])


@HOSTILE
@given(rows=st.lists(RELEASE_ROWS, min_size=1, max_size=3))
def test_import_s3kg_release_takes_any_cells(hostile_store, tmp_path_factory, rows):
    folder = tmp_path_factory.mktemp("qa")
    columns = RELEASE_LAYOUTS["released"]
    header = [columns[f] for f in ("id", "question", "gold", "answer", "context")]
    header += [columns[f] for f in ("kg_gold", "kg_answer", "kg_context")]
    _write_rows(folder / "toy_m.csv", header, rows)
    try:
        (report,) = import_s3kg_release(hostile_store, folder)
    except S3KGError as exc:
        assert isinstance(exc, InputFormatError) and utf8_clean(str(exc))
        return
    assert report.kgs == 3 * report.items == 3 * report.answers
    _check_report(report, hostile_store)
    statuses = _query(
        hostile_store, "SELECT DISTINCT status FROM kgs WHERE run_id = ?", [report.run_id]
    )
    assert {s for (s,) in statuses} <= {"ok", "empty", "unparseable"}  # a status per KG


PQAL_RECORDS = st.dictionaries(
    STRINGS,
    st.fixed_dictionaries({"QUESTION": VALUES, "CONTEXTS": VALUES, "LONG_ANSWER": VALUES}),
    min_size=1,
    max_size=3,
)


@HOSTILE
@given(records=PQAL_RECORDS)
def test_import_pubmedqa_takes_any_values(hostile_store, tmp_path_factory, records):
    path = tmp_path_factory.mktemp("pqal") / "ori_pqal.json"
    path.write_text(to_json(records), encoding="utf-8")
    try:
        report = import_pubmedqa(hostile_store, path)
    except S3KGError as exc:  # nested too deeply to read
        assert isinstance(exc, InputFormatError) and utf8_clean(str(exc))
        return
    assert 1 <= report.items <= len(records)
    _check_report(report, hostile_store)


def test_release_kgs_are_parsed_before_the_write_transactions_which_stay_short(
    tmp_path, monkeypatch
):
    """Regression (issue 28, item 6): a 6,000-row release file held the write lock for 52.8 s,
    because its KG cells were parsed inside the one transaction."""
    import contextlib

    import s3kg_core.stages.importing as importing

    folder = tmp_path / "qa"
    write_release_csv(folder / "mesaqa_gemma-7b-it.csv", "released", release_rows(5))
    store = Store(tmp_path / "db.duckdb")
    inside = {"now": False, "parsed_inside": 0, "transactions": 0}
    real_transaction, real_parse = Store.transaction, importing.parse_kg_cell

    @contextlib.contextmanager
    def watched(self):
        with real_transaction(self) as con:
            inside["now"], inside["transactions"] = True, inside["transactions"] + 1
            try:
                yield con
            finally:
                inside["now"] = False

    def parse(cell):
        inside["parsed_inside"] += inside["now"]
        return real_parse(cell)

    monkeypatch.setattr(Store, "transaction", watched)
    monkeypatch.setattr(importing, "parse_kg_cell", parse)
    (report,) = import_s3kg_release(store, folder, batch_rows=2)
    assert inside["parsed_inside"] == 0
    assert inside["transactions"] == 3  # rows 1-2, 3-4, 5
    assert (report.items, report.answers, report.kgs) == (5, 5, 15)
    assert _counts(store)["triples"] == 20  # 1 gold, 1 answer, 2 context triples a row
    (again,) = import_s3kg_release(store, folder)  # one batch: the same rows, nothing doubled
    assert (again.items, again.kgs) == (5, 15) and _counts(store)["triples"] == 20


def test_an_import_stopped_between_batches_is_completed_by_importing_again(tmp_path):
    """Short transactions (issue 28, item 6): a stop after the first batch keeps it; the same
    import again completes the file without doubling anything."""
    folder = tmp_path / "qa"
    write_release_csv(folder / "mesaqa_gemma-7b-it.csv", "released", release_rows(5))
    store = Store(tmp_path / "db.duckdb")
    real = Store.put_kgs
    calls = {"n": 0}

    def stop_in_the_second_batch(con, kgs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt  # as a kill: the batch's transaction is rolled back
        return real(con, kgs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Store, "put_kgs", staticmethod(stop_in_the_second_batch))
        with pytest.raises(KeyboardInterrupt):
            import_s3kg_release(store, folder, batch_rows=2)
    assert _counts(store)["items"] == 2 and _counts(store)["kgs"] == 6  # the first batch
    (report,) = import_s3kg_release(store, folder, batch_rows=2)
    assert (report.items, report.answers, report.kgs) == (5, 5, 15)
    assert _counts(store) == {
        "datasets": 1, "items": 5, "runs": 1, "answers": 5, "kgs": 15, "triples": 20,
    }  # fmt: skip
