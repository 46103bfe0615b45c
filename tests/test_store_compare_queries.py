"""The Run comparison's SQL (s3kg_core.store.compare_queries): DuckDB finds what pandas finds.

A real file (store_helpers.build_store, scored with MiniLM) of three runs; the third lacks
scores of some questions, so the pairs share different numbers. The reference is the pandas
path the page took before (``reblend`` of every component, ``dashboard.compare``).
"""

from __future__ import annotations

import pandas as pd
import pytest
from compare_helpers import comparable_pairs as pandas_pairs
from compare_helpers import question_choices

from s3kg_core.analysis.compare import DELTA_COLUMNS, question_deltas
from s3kg_core.errors import ComparisonError, ConfigError
from s3kg_core.stages.scored import scored_frame
from s3kg_core.store import queries
from s3kg_core.store.compare_queries import (
    PAIR_COLUMNS,
    comparable_pairs,
    pair_deltas,
    pair_means_grid,
    pair_questions,
)

PAIRS = [(1, 2), (2, 1), (1, 3), (3, 2)]


@pytest.fixture(scope="module")
def scored(tmp_path_factory, scored_stores):
    store, signature = scored_stores.copy(
        tmp_path_factory.mktemp("compare") / "c.duckdb",
        models=("model-a", "model-b", "model-c"),
        n_items=12,
        seed=5,
    )
    with store.transaction() as con:  # run 3 keeps its scores of q0-q7 only
        con.execute(
            "DELETE FROM scores WHERE run_id = 3 AND item_id IN "
            "(SELECT item_id FROM items WHERE ext_id IN ('q8', 'q9', 'q10', 'q11'))"
        )
    return store, signature


def expected_deltas(scored, run_a: int, run_b: int, alpha: float | None) -> pd.DataFrame:
    store, signature = scored
    with store.connect() as con:
        texts = queries.item_texts(con)
    return question_deltas(scored_frame(store, signature, alpha), run_a, run_b, texts)


def test_the_pairs_are_those_the_blended_frame_gives(scored):
    store, signature = scored
    with store.connect() as con:
        pairs = comparable_pairs(con, signature)
        assert comparable_pairs(con, "another signature") == {}
    expected = pandas_pairs(scored_frame(store, signature))
    assert pairs == expected and list(pairs) == list(expected)  # the same order: by A, then B
    assert pairs[(1, 2)] == 12 and pairs[(1, 3)] == pairs[(3, 2)] == 8


@pytest.mark.parametrize("alpha", [None, 0.0, 0.3, 0.5, 1.0])
@pytest.mark.parametrize(("run_a", "run_b"), PAIRS)
def test_pair_deltas_are_question_deltas_of_the_reblended_frame_bit_for_bit(
    scored, run_a, run_b, alpha
):
    store, signature = scored
    with store.connect() as con:
        got = pair_deltas(con, signature, run_a, run_b, alpha)
    expected = expected_deltas(scored, run_a, run_b, alpha)
    assert PAIR_COLUMNS == DELTA_COLUMNS
    assert len(got) == len(expected) > 0 and got["d_cus"].nunique() > 1
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


@pytest.mark.parametrize("text", ["", "QUESTION 1", "q1", "question 3?", "%", "q_", "x"])
@pytest.mark.parametrize("size", [1, 3, 5, 50])
def test_the_picker_pages_searches_and_keeps_as_the_pandas_picker(scored, text, size):
    """Every page (and one before the first, two past the last), with and without a kept
    question (the first, a middle and the last shared one; one not shared): what
    ``question_choices`` gives."""
    store, signature = scored
    deltas = expected_deltas(scored, 1, 2, 0.3)
    keeps = [None, 999_999, *(int(deltas["item_id"].iloc[i]) for i in (0, 5, -1))]
    listed = []
    with store.connect() as con:
        for page in range(-1, -(-len(deltas) // size) + 2):
            for keep in keeps:
                got = pair_questions(
                    con, signature, 1, 2, 0.3, text, page=page, size=size, keep=keep
                )
                rows, total, chosen = question_choices(deltas, text, page, size, keep=keep)
                pd.testing.assert_frame_equal(got[0], rows.reset_index(drop=True), check_exact=True)
                assert got[1:] == (total, chosen)
                if keep is None and page == chosen:
                    listed += got[0]["item_id"].tolist()
    assert len(listed) == len(set(listed)) == total  # each match once, over the pages


def test_a_kept_question_one_run_did_not_answer_keeps_the_page_asked_for(scored):
    store, signature = scored
    with store.connect() as con:
        (missing,) = con.execute("SELECT item_id FROM items WHERE ext_id = 'q9'").fetchone()
        rows, total, page = pair_questions(con, signature, 1, 3, 0.5, page=2, size=3, keep=missing)
        assert (total, page) == (8, 2) and missing not in rows["item_id"].tolist()
        rows, _, page = pair_questions(con, signature, 1, 2, 0.5, page=0, size=3, keep=missing)
        assert missing in rows["item_id"].tolist()


@pytest.mark.parametrize(("run_a", "run_b"), PAIRS)
def test_the_grid_is_pair_deltas_summed_at_each_alpha(scored, run_a, run_b):
    """Issue 60: the Run comparison's figures at every stop of the slider, in one scan."""
    store, signature = scored
    alphas = [round(0.1 * k, 1) for k in range(11)]
    with store.connect() as con:
        grid = pair_means_grid(con, signature, run_a, run_b, alphas).set_index("alpha")
        for alpha in alphas:
            d = pair_deltas(con, signature, run_a, run_b, alpha)
            row = grid.loc[alpha]
            assert row["shared"] == len(d) > 0
            assert (row["worse"], row["better"]) == ((d["d_cus"] < 0).sum(), (d["d_cus"] > 0).sum())
            for column in ("cus_a", "cus_b", "d_cus"):
                assert row[column] == pytest.approx(d[column].mean(), rel=0, abs=1e-12)
        with pytest.raises(ComparisonError, match="one run"):
            pair_means_grid(con, signature, 2, 2, alphas)
        with pytest.raises(ConfigError):
            pair_means_grid(con, signature, 1, 2, [])
    assert grid["d_cus"].nunique() > 1  # alpha moves the comparison in this store


def test_one_run_twice_or_an_alpha_out_of_range_is_refused(scored):
    store, signature = scored
    with store.connect() as con:
        with pytest.raises(ComparisonError, match="one run"):
            pair_deltas(con, signature, 2, 2, 0.5)
        with pytest.raises(ConfigError, match="alpha"):
            pair_questions(con, signature, 1, 2, 1.5)
        with pytest.raises(ConfigError, match="at least one"):
            pair_questions(con, signature, 1, 2, 0.5, size=0)
