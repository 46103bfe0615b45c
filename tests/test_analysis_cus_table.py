"""Tests of s3kg_core.analysis.cus_table: the CUS table against the library and against pandas."""

from __future__ import annotations

import numpy as np
import pytest
from store_helpers import build_store, special_store

from s3kg_core.analysis.cus_table import cus_report, cus_table
from s3kg_core.errors import ConfigError
from s3kg_core.kg import Triple
from s3kg_core.scoring.cus import dataset_cus, score_cus_many
from s3kg_core.scoring.s3kg import KGScorer, S3KGConfig
from s3kg_core.stages.score import score_store
from s3kg_core.stats import NORMAL_FROM, mean_interval, normal_interval
from s3kg_core.store.records import KGRecord

TABLE_COLUMNS = [
    "dataset", "model", "temperature", "extractor", "run_id", "n", "unscored", "gold_sim",
    "ctx_sim", "cus", "cus_low", "cus_high",
]  # fmt: skip

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.mark.parametrize("mode", ["paper", "kgx"])
def test_cus_table_equals_a_manual_computation(tmp_path, minilm, mode):
    store = special_store(tmp_path / "db.duckdb")
    config = S3KGConfig(mode=mode, alpha=0.35)
    report = score_store(store, encoder=minilm, config=config)
    table = cus_table(store)
    assert list(table.columns) == TABLE_COLUMNS
    with store.connect() as con:
        kgs = store.load_kgs(con)
    scorer = KGScorer(minilm, config)  # its own cache: nothing shared with the store
    for run, model in ((1, "model-a"), (2, "model-b")):

        def triples(item: int, source: str, run: int = run) -> tuple[Triple, ...]:
            return kgs[(run, item, source)].triples

        results = score_cus_many(
            [
                (triples(i, "answer"), triples(i, "gold"), triples(i, "context"))
                for i in range(1, 5)
            ],
            scorer,
        )
        row = table[table["model"] == model].iloc[0]
        assert (row["dataset"], row["temperature"], row["extractor"]) == ("toy", 0.0, "test")
        for alpha, got in ((None, row), (0.8, cus_table(store, alpha=0.8).iloc[run - 1])):
            want = dataset_cus(results, alpha=alpha)
            assert got["n"] == want.n == 4
            assert got["gold_sim"] == pytest.approx(want.gold_sim, abs=1e-6)
            assert got["ctx_sim"] == pytest.approx(want.ctx_sim, abs=1e-6)
            assert got["cus"] == pytest.approx(want.cus, abs=1e-6)
    assert report.signature.startswith(f"mode:{mode}|")


def test_cus_table_drops_answers_with_an_empty_kg_only_when_asked(tmp_path, minilm):
    """Issue 19: `--empty drop` leaves answers with an empty KG out of the means (the authors'
    QA scripts score them None); the default counts them as 0."""
    store = build_store(tmp_path / "db.duckdb", models=("model-a",), n_items=4)
    with store.transaction() as con:
        store.put_kgs(con, [KGRecord(1, 1, "answer", (), status="empty")])
    score_store(store, encoder=minilm)
    zero = cus_table(store).iloc[0]
    drop = cus_table(store, empty="drop").iloc[0]
    assert (zero["n"], drop["n"]) == (4, 3)
    # the empty answer scored 0: dropping it multiplies each mean by 4 / 3
    for column in ("gold_sim", "ctx_sim", "cus"):
        assert drop[column] == pytest.approx(zero[column] * 4 / 3, abs=1e-9)
        assert drop[column] > zero[column]
    assert cus_table(store, empty="zero").equals(cus_table(store))
    with pytest.raises(ConfigError, match="empty must be one of zero, drop"):
        cus_table(store, empty="none")  # type: ignore[arg-type]


def test_two_runs_that_share_a_display_name_stay_two_rows_of_the_cus_table(tmp_path, minilm):
    # Regression: the table grouped by the display name (``coalesce(name, model)``), so two
    # runs named alike (two model folders called ``m``, one temperature) merged into one row.
    store = build_store(tmp_path / "db.duckdb", models=("org1/m", "org2/m"), n_items=2)
    score_store(store, encoder=minilm)
    table = cus_table(store)
    assert table["model"].tolist() == ["m", "m"]
    assert table["run_id"].tolist() == [1, 2] and table["n"].tolist() == [2, 2]


@pytest.fixture(scope="module")
def answers_2000(tmp_path_factory):
    """2,000 answers with components inserted directly (leaderboard_helpers.build_scored_store):
    ``(store, signature)``; tests only read it."""
    from leaderboard_helpers import build_scored_store

    return build_scored_store(tmp_path_factory.mktemp("cus2000") / "big.duckdb", seed=3)


def test_scores_stored_with_several_alphas_need_one_to_be_named_issue_58(answers_2000):
    """Issue 58: the table's signature names its alpha; scores stored with several (written
    directly here: ``s3kg score --alpha`` re-blends a signature's scores all at once) have no
    one alpha to name, so the table asks for one instead of printing a signature without it."""
    store, _ = answers_2000
    with pytest.raises(ConfigError, match=r"stored with alphas 0\.3, 0\.5, 0\.7: pass --alpha"):
        cus_report(store)
    assert cus_report(store, alpha=0.4).full_signature.endswith("|alpha:0.4")


@pytest.mark.parametrize("empty", ["zero", "drop"])
@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0])
def test_the_cus_table_is_the_pandas_means_of_every_reblended_answer(answers_2000, alpha, empty):
    """cus_report reads each run's means from the one SQL implementation
    (leaderboard_queries.run_summaries); they are what the pandas groupby of reblend found
    before, to 1e-12, with ``--empty drop`` leaving out the answers whose KG is empty."""
    from leaderboard_helpers import RUN_SIZES

    from s3kg_core.stages.scored import reblend
    from s3kg_core.store import queries

    store, signature = answers_2000
    with store.connect() as con:
        frame = reblend(queries.scored_components(con, signature), alpha)
    if empty == "drop":
        frame = frame[(frame["gold_status"] == "ok") & (frame["ctx_status"] == "ok")]
    keys = ["dataset", "model", "temperature", "extractor", "run_id"]
    want = frame.groupby(keys, sort=True).agg(
        n=("item_id", "size"), gold_sim=("gold_sim", "mean"), ctx_sim=("ctx_sim", "mean"),
        cus=("cus", "mean"),
    ).reset_index()  # fmt: skip
    report = cus_report(store, alpha=alpha, empty=empty)  # type: ignore[arg-type]
    got = report.table
    assert list(got.columns) == TABLE_COLUMNS and len(got) == len(RUN_SIZES)
    assert got[[*keys, "n"]].values.tolist() == want[[*keys, "n"]].values.tolist()
    assert got["unscored"].tolist() == [0] * len(RUN_SIZES)
    for column in ("gold_sim", "ctx_sim", "cus"):
        assert (got[column] - want[column]).abs().max() <= 1e-12
    assert report.coverage.zero_kg == len(RUN_SIZES) - 1  # one empty KG per run of several
    # issue 58: the interval of the mean CUS, the leaderboard's (the bootstrap of its seed and
    # resamples below 1,000 answers, the normal approximation from there), of the kept answers
    for row in got.itertuples():
        values = frame.loc[frame["run_id"] == row.run_id].sort_values("item_id")["cus"]
        if row.n >= NORMAL_FROM:
            expected = normal_interval(values.mean(), values.std(ddof=1), len(values))
        else:
            expected = tuple(mean_interval(values.to_numpy(), seed=0)[1:])
        np.testing.assert_allclose((row.cus_low, row.cus_high), expected, rtol=0, atol=1e-12)
