"""s3kg_core.store.queries: every SQL statement lives in s3kg_core/store/, and the queries work.

The scans read the source with ``ast``: a string constant (or the constant parts of an
f-string, joined) that starts like a SQL statement is SQL; outside ``s3kg_core/store/`` it fails
the test with its file and line. Streamlit caches are scanned the same way: only
the data layer (``dashboard/data/``, ``dashboard/*_data.py``) may hold them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from store_helpers import build_store

from s3kg_core.errors import InputFormatError, KGSourceError
from s3kg_core.store import factuality_queries, grapheval_queries, queries
from s3kg_core.store.records import AnswerRecord, KGRecord, ScoreRecord

REPO = Path(__file__).resolve().parents[1]
STORE_DIR = REPO / "s3kg_core" / "store"

_KEYWORD = re.compile(
    r"^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP|WITH|COPY|PRAGMA)\b", re.IGNORECASE
)
# A keyword in lower or mixed case counts only when the statement's grammar follows it, so
# prose that starts with "Update ...", "With --flag ..." or "drop" is not taken for SQL.
_GRAMMAR = re.compile(
    r"^\s*(select\b.*\bfrom\s+\w|insert\s+(or\s+\w+\s+)?into\s|update\s+\w+\s+set\s|"
    r"delete\s+from\s|create\s+(or\s+replace\s+)?(temp\w*\s+)?"
    r"(table|view|sequence|index|macro|schema)\s|alter\s+table\s|"
    r"drop\s+(table|view|sequence|index|macro|schema)\s|with\s+\w+\s+as\s*\(|"
    r"copy\s+\S+\s+(to|from)\s|pragma\s+\w)",
    re.IGNORECASE | re.DOTALL,
)


def looks_like_sql(text: str) -> bool:
    """Whether a string starts like a SQL statement."""
    match = _KEYWORD.match(text)
    if match is None:
        return False
    return match.group(1).isupper() or _GRAMMAR.match(text) is not None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("SELECT run_id FROM runs", True),
        ("  INSERT OR REPLACE INTO kgs SELECT * FROM _new_kgs", True),
        ("select run_id from runs", True),
        ("DELETE FROM ", True),  # an f-string's first constant part
        ("copy results to 'x.parquet'", True),
        ("with t as (select 1) select * from t", True),
        ("Insert or replace ``evaluation`` (by name) in one transaction.", False),
        ("With --local: subtract a content-free input's answer scores.", False),
        ("Select-box labels -> evaluation names.", False),
        ("drop", False),
        ("The SELECT in the middle does not count", False),
    ],
)
def test_looks_like_sql(text, expected):
    assert looks_like_sql(text) is expected


def _strings(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """``(line, text)`` of every string constant, and of every f-string's joined constants."""
    in_fstrings: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    in_fstrings.add(id(value))
                    parts.append(value.value)
                else:
                    parts.append("{}")
            yield node.lineno, "".join(parts)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in in_fstrings
        ):
            yield node.lineno, node.value


def _sources() -> list[Path]:
    files = [
        *sorted((REPO / "s3kg_core").rglob("*.py")),
        *sorted((REPO / "dashboard").rglob("*.py")),
        *sorted((REPO / "pages").rglob("*.py")),
        REPO / "app.py",
    ]
    return [f for f in files if ".venv" not in f.parts]


def sql_outside_store() -> list[str]:
    """``file:line: text`` of every SQL string outside ``s3kg_core/store/``."""
    found = []
    for path in _sources():
        if path.is_relative_to(STORE_DIR):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, text in _strings(tree):
            if looks_like_sql(text):
                found.append(f"{path.relative_to(REPO)}:{line}: {text.strip()[:60]!r}")
    return sorted(set(found))


def test_the_scan_sees_the_store_s_own_sql():
    """The scan would find SQL where it is: the store's modules are full of it."""
    hits = []
    for path in sorted(STORE_DIR.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        hits += [line for line, text in _strings(tree) if looks_like_sql(text)]
    assert len(hits) > 40


def test_no_sql_outside_the_store():
    found = sql_outside_store()
    assert not found, "SQL outside s3kg_core/store/ (move it into a query function):\n" + "\n".join(
        found
    )


_CACHES = ("cache_data", "cache_resource")


def _streamlit_caches(path: Path) -> list[int]:
    """Lines where ``path`` uses ``st.cache_data`` / ``st.cache_resource`` or imports them."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in _CACHES
    ]
    lines += [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and (node.module or "").startswith("streamlit")
        and any(a.name in _CACHES for a in node.names)
    ]
    return sorted(lines)


def test_only_the_dashboards_data_modules_hold_streamlit_caches():
    # the cached reads live in the data layer (dashboard/data/) and the pages' own data modules
    # (dashboard/*_data.py, e.g. annotate_data.py), keyed the same way (the database's stamp)
    data = REPO / "dashboard" / "data"
    assert _streamlit_caches(data / "reads.py"), "the scan should see dashboard/data/'s caches"
    found = [
        f"{path.relative_to(REPO)}:{line}"
        for path in sorted((REPO / "dashboard").rglob("*.py"))
        if data not in path.parents and not path.name.endswith("_data.py")
        for line in _streamlit_caches(path)
    ]
    found += [
        f"{path.relative_to(REPO)}:{line}"
        for path in [*sorted((REPO / "pages").glob("*.py")), REPO / "app.py"]
        for line in _streamlit_caches(path)
    ]
    assert not found, "Streamlit caches outside the data modules:\n" + "\n".join(found)


# -- the queries, on a real DuckDB file ------------------------------------------------------


@pytest.fixture
def store(tmp_path):
    """Two runs (model-a, model-b) of three items, each with gold, context and answer KGs."""
    return build_store(tmp_path / "q.duckdb", n_items=3, n_triples=2, seed=1)


def test_runs_datasets_and_items(store):
    with store.connect() as con:
        assert queries.run_ids(con) == [1, 2]
        assert [r[:5] for r in queries.run_rows(con)] == [
            (1, 1, "model-a", 0.0, "test"),
            (2, 1, "model-b", 0.0, "test"),
        ]
        assert queries.dataset_ids(con) == {"toy": 1}
        assert queries.dataset_id(con, "toy") == 1 and queries.dataset_id(con, "nope") is None
        ids = queries.dataset_item_ids(con, "toy")
        assert sorted(ids) == ["q0", "q1", "q2"]
        assert queries.dataset_items(con, 1, 2) == [
            (ids["q0"], "question 0?", "context 0."),
            (ids["q1"], "question 1?", "context 1."),
        ]
        assert len(queries.dataset_items(con, 1)) == 3
        assert queries.run_extractor(con, 2) == "test" and queries.run_extractor(con, 9) is None
        overview = queries.run_overview(con)
        assert list(overview.columns) == [
            "run_id",
            "dataset",
            "model",
            "temperature",
            "extractor",
            "source",
            "answers",
            "with_kgs",
            "scored",
            "model_id",
            "settings",
            "created_at",
        ]
        assert overview[["answers", "with_kgs", "scored"]].values.tolist() == [[3, 3, 0]] * 2
        assert overview["model_id"].tolist() == ["model-a", "model-b"]
        assert overview["settings"].tolist() == ["{}", "{}"]


def test_copying_a_run_s_answers_keeps_the_target_s_own(store):
    with store.transaction() as con:
        copy = store.ensure_run(con, 1, "model-a", 0.0, "llm")
        store.put_answers(con, copy, [AnswerRecord(1, "mine", error="boom")])
        queries.copy_answers(con, 1, copy)
        queries.set_run_settings(con, copy, '{"seed": 3}')
        assert queries.answered_item_ids(con, copy) == {2, 3}  # item 1's answer failed
        assert queries.run_rows(con)[-1][-1] == '{"seed": 3}'
        queries.set_run_extractor(con, [1, copy], "offline", current="llm")
        assert [r[4] for r in queries.run_rows(con)] == ["test", "test", "offline"]


def _score(run: int, item: int, signature: str = "sig") -> ScoreRecord:
    return ScoreRecord(run, item, signature, "paper", 0.5, 1.0, 0.5, "ok", 0.0, 0.5, "ok")


def test_scoring_candidates_count_only_ready_answers(store):
    with store.transaction() as con:
        store.put_scores(con, [_score(1, 1)])
        store.put_kgs(con, [KGRecord(2, 3, "context", (), "failed: timeout")])
        assert queries.scoring_candidates(con, "sig") == [
            (1, 1, True),
            (1, 2, False),
            (1, 3, False),
            (2, 1, False),
            (2, 2, False),
        ]
        assert queries.scoring_candidates(con, "other", [2]) == [(2, 1, False), (2, 2, False)]
        assert queries.scoring_candidates(con, "sig", []) == []
        assert (queries.count_answers(con), queries.count_answers(con, [2])) == (6, 3)
        assert queries.count_answers(con, []) == 0
        rows = queries.answers_for_extraction(con, 2)
        assert [(r[0], r[-1]) for r in rows] == [(1, 3), (2, 3), (3, 2)]


def test_status_counts_are_the_answer_statuses_counted(store):
    """The Overview's partial-run note reads counts (a few rows per run), not one row per
    answer: the same reasons and numbers as ``unscored_reasons`` of every answer."""
    from s3kg_core.stages.scored import unscored_reasons

    with store.transaction() as con:
        store.put_scores(con, [_score(1, 1), _score(2, 2), _score(2, 3, "other")])
        store.put_kgs(con, [KGRecord(2, 3, "context", (), "failed: timeout")])
        store.put_kgs(con, [KGRecord(1, 2, "gold", (), "failed: other message")])
        store.put_answers(con, 1, [AnswerRecord(3, None, error="HTTP 500")])
    for signature in ("sig", "other", None):
        with store.connect() as con:
            every = queries.answer_statuses(con, signature)
            counts = queries.status_counts(con, signature)
        want = every.assign(reason=unscored_reasons(every).fillna("scored"))
        want = want.groupby(["run_id", "reason"]).size().to_dict()
        got = counts.assign(reason=unscored_reasons(counts).fillna("scored"))
        got = got.groupby(["run_id", "reason"])["n"].sum().to_dict()
        assert got == want and sum(got.values()) == 6
    assert len(counts) < 6 and set(counts["gold_kg_status"].dropna()) <= {"ok", "failed"}


def test_scores_details_and_their_removal(store):
    with store.transaction() as con:
        detail = ScoreRecord(2, 1, "new", "kgx", 0.5, 0.2, 0.4, "ok", 0.1, 0.3, "ok", "{}", None)
        store.put_scores(con, [_score(1, 1), _score(1, 2), detail])
        assert queries.score_alphas(con, "sig") == [0.5] and queries.score_alphas(con, "no") == []
        queries.set_score_alpha(con, "sig", 0.25)
        assert queries.score_alphas(con, "sig") == [0.25]
        frame = queries.scored_components(con, "sig")
        assert frame["item_id"].tolist() == [1, 2] and set(frame["alpha"]) == {0.25}
        assert queries.latest_scored_signature(con) in ("sig", "new")
        assert sorted(queries.signatures_by_recency(con)) == ["new", "sig"]
        assert queries.score_details(con, 2, 1, "new") == ("{}", None)
        assert queries.score_details(con, 2, 1, "sig") is None
        queries.delete_item_results(con, [(1, 1), (2, 1)])
        assert queries.scored_components(con, "sig")["item_id"].tolist() == [2]
        assert queries.latest_scored_signature(con) == "sig"


def test_tau_results_are_replaced_per_signature_and_target(store):
    def row(item: int, target: str, result: str) -> list[object]:
        # queries.TAU_COLUMNS: the counts now include n_roles_swapped (migration 9)
        return [1, item, "sig", target, 0.05, 0.5, 0.1, 1, 0, 0, 0, 0, 0, result]

    with store.transaction() as con:
        queries.replace_tau_results(con, "sig", "gold_sim", [row(1, "gold_sim", '{"g": 1}')])
        queries.replace_tau_results(con, "sig", "cus", [row(1, "cus", '{"c": 1}')])
        assert queries.tau_result(con, 1, 1, "sig") == '{"c": 1}'  # "cus" sorts first
        queries.replace_tau_results(con, "sig", "cus", [row(2, "cus", '{"c": 2}')])
        assert queries.tau_result(con, 1, 1, "sig") == '{"g": 1}'
        assert queries.tau_result(con, 2, 1, "sig") is None


def test_embeddings_of_some_texts(store):
    with store.transaction() as con:
        store.put_embeddings(con, "enc", [("a", np.ones(3)), ("b", np.zeros(3))])
        store.put_embeddings(con, "other", [("a", np.zeros(3))])
        found = queries.embeddings_of(con, "enc", ["b", "a", "missing"])
        assert sorted(text for text, _ in found) == ["a", "b"]
        assert all(vec.dtype == np.float32 and vec.shape == (3,) for _, vec in found)
        assert queries.embeddings_of(con, "enc", []) == []


def test_embeddings_of_reads_each_text_once_of_that_encoder_only(store):
    # issue 42: Store.load_embeddings_of (the scorer's and TAU's) and this one (the dashboard's)
    # were two readers; this is the one, and a text asked for twice came back twice
    with store.transaction() as con:
        store.put_embeddings(con, "a", [("x", np.ones(3)), ("y", np.zeros(3))])
        store.put_embeddings(con, "b", [("x", np.full(3, 2.0))])
    with store.connect() as con:
        found = queries.embeddings_of(con, "a", ["x", "z", "x"])
        assert [(t, v.tolist()) for t, v in found] == [("x", [1.0, 1.0, 1.0])]
        assert queries.embeddings_of(con, "b", iter(["x"]))[0][1].tolist() == [2.0, 2.0, 2.0]
        assert queries.embeddings_of(con, "a", set()) == []


def test_texts_and_parquet_export(store, tmp_path):
    with store.connect() as con:
        assert queries.item_answer_texts(con, 1, 1) == (
            "q0",
            "question 0?",
            "context 0.",
            "gold 0.",
            "model-a says 0",
            "ok",
        )
        assert queries.item_answer_texts(con, 1, 9) is None
        assert list(queries.item_texts(con).columns) == [
            "item_id",
            "ext_id",
            "question",
            "context",
            "gold_answer",
        ]
        answers = queries.answer_texts(con)
    out = tmp_path / "it's here.parquet"  # a quote in the path
    mem = duckdb.connect()
    try:
        mem.register("results", answers)
        queries.copy_results_to_parquet(mem, out)
        back = mem.execute("SELECT count(*) FROM read_parquet(?)", [str(out)]).fetchall()
    finally:
        mem.close()
    assert back == [(6,)]


def test_parquet_parts_are_copied_in_their_order_into_row_groups(tmp_path):
    # an export's blocks (issue 33): the parts' rows, part after part, in row groups of about N
    mem = duckdb.connect()
    try:
        parts = []
        for i, values in enumerate(([5, 3], [9], [1, 7, 2])):
            parts.append(tmp_path / f"part {i}.parquet")
            mem.register("results", pd.DataFrame({"v": values, "s": [str(v) for v in values]}))
            queries.copy_results_to_parquet(mem, parts[-1])
            mem.unregister("results")
        out = tmp_path / "it's all.parquet"
        queries.copy_parquet_parts(mem, parts, out, row_group=2)
        back = mem.execute("SELECT v, s FROM read_parquet(?)", [str(out)]).fetchall()
        groups = mem.execute(
            "SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata(?)", [str(out)]
        ).fetchall()
    finally:
        mem.close()
    assert back == [(5, "5"), (3, "3"), (9, "9"), (1, "1"), (7, "7"), (2, "2")]
    assert len(groups) > 1 and sum(n for _, n in groups) == 6


def _detection(con, item: int, checker: str, inconsistent: bool | None) -> None:
    grapheval_queries.put_grapheval_result(
        con,
        run_id=1,
        item_id=item,
        checker=checker,
        extractor="test",
        inconsistent=inconsistent,
        raw_probability=0.7 if inconsistent else None,
        n_triples=2,
        n_flagged=int(bool(inconsistent)),
        detail='{"triples": []}',
        signature=f"checker:{checker}",
    )


def test_grapheval_results_rows_corrections_and_overview(store):
    with store.transaction() as con:
        _detection(con, 1, "support", True)
        _detection(con, 2, "support", False)
        _detection(con, 2, "nli", None)
        assert grapheval_queries.checked_item_ids(con, 1, "support", "test") == {1, 2}
        assert grapheval_queries.checked_item_ids(con, 1, "support", "offline") == set()
        # no verdict (the checker judged no triple): checked again on a rerun (issue 17, D11a)
        assert grapheval_queries.checked_item_ids(con, 1, "nli", "test") == set()
        grapheval_queries.set_grapheval_correction(
            con, 1, 1, "support", "test", "fixed", '{"method": "direct"}'
        )
        rows = grapheval_queries.grapheval_result_rows(con, 1)
        assert [(r["item_id"], r["checker"]) for r in rows] == [
            (1, "support"),
            (2, "nli"),
            (2, "support"),
        ]
        assert rows[0]["answer"] == "model-a says 0" and rows[0]["context"] == "context 0."
        assert rows[0]["corrected_answer"] == "fixed"
        flagged = grapheval_queries.grapheval_result_rows(con, 1, "support", inconsistent_only=True)
        assert [r["item_id"] for r in flagged] == [1]
        _detection(con, 1, "support", True)  # replacing a detection drops its correction
        assert grapheval_queries.grapheval_result_rows(con, 1, "support")[0]["correction"] is None
        overview = grapheval_queries.grapheval_overview(con)
        assert overview[["checker", "answers", "inconsistent", "unjudged"]].values.tolist() == [
            ["nli", 1, 0, 1],
            ["support", 2, 1, 0],
        ]
        assert [r[0] for r in grapheval_queries.answers_with_context(con, 2)] == [1, 2, 3]


def test_grapheval_bench_rows_are_replaced_by_key(store):
    with store.transaction() as con:
        for n in (10, 12):
            grapheval_queries.put_grapheval_bench(
                con,
                dataset="toy",
                n=n,
                checker="support",
                extractor="offline",
                raw_balanced_accuracy=None,
                kg_balanced_accuracy=0.6,
                flagged_triples=3,
                detail="{}",
            )
        [row] = grapheval_queries.grapheval_bench_rows(con, "toy")
        assert (row["n"], row["raw_balanced_accuracy"]) == (12, None)
        assert grapheval_queries.grapheval_bench_rows(con, "other") == []
        assert len(grapheval_queries.grapheval_bench_rows(con)) == 1


def test_factuality_evaluations_replace_by_name(store):
    with store.transaction() as con:
        factuality_queries.replace_factuality_eval(con, "b", "m", 1, 10, "{}", "{}")
        factuality_queries.replace_factuality_eval(con, "a", "m", 2, 20, "{}", "{}")
        factuality_queries.replace_factuality_eval(con, "b", "m2", 3, 30, '{"x": 1}', "{}")
        rows = factuality_queries.factuality_eval_rows(con)
    assert sorted(r[:4] for r in rows) == [("a", "m", 2, 20), ("b", "m2", 3, 30)]


def test_put_kgs_names_a_bad_source_with_a_named_error(store):
    with store.transaction() as con, pytest.raises(KGSourceError, match="source must be one of"):
        store.put_kgs(con, [KGRecord(1, 1, "question", ())])
    assert issubclass(KGSourceError, InputFormatError)


def test_item_questions_are_item_texts_without_context_and_gold(store):
    with store.connect() as con:
        texts = queries.item_texts(con)
        questions = queries.item_questions(con)
    assert list(questions.columns) == ["item_id", "ext_id", "question"]
    assert questions.sort_values("item_id").values.tolist() == (
        texts[["item_id", "ext_id", "question"]].sort_values("item_id").values.tolist()
    )
