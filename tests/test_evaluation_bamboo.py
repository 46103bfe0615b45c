"""Tests of s3kg_core.evaluation.bamboo: the BAMBOO protocol, the loader and the runner."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from bamboo_helpers import HUMAN, QUANT, STUB_SIGNATURE, QuantScorer, write_fake_bamboo

from s3kg_core.errors import ConfigError, InputFormatError, PenmanFormatError
from s3kg_core.evaluation.bamboo import (
    COMPONENTS,
    FIGURES,
    BambooResult,
    bamboo_mean,
    load_bamboo,
    pearson_x100,
    role_confusion_accuracy_x100,
    run_bamboo,
    task_figure,
)
from s3kg_core.kg import Triple
from s3kg_core.scoring.result import MODES
from s3kg_core.scoring.s3kg import KGScorer, S3KGConfig

# -- the protocol, on hand-computed examples -------------------------------------------------------


def test_pearson_x100_by_hand():
    # centred: x = (-1.5, -0.5, 0.5, 1.5), y = (-1.5, 0.5, -0.5, 1.5): cov 4, var 5 and 5
    assert pearson_x100([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(80.0)
    assert pearson_x100([4, 3, 2, 1], [1, 3, 2, 4]) == pytest.approx(-80.0)
    # the human scores' scale does not matter (the benchmark min-max scales them)
    assert pearson_x100([1, 2, 3, 4], [0, 2 / 3, 1 / 3, 1]) == pytest.approx(80.0)
    assert pearson_x100([0.3, 0.3, 0.3], [1, 2, 3]) is None
    assert pearson_x100([0.1], [1]) is None
    with pytest.raises(InputFormatError, match="3 scores for 2 human scores"):
        pearson_x100([1, 2, 3], [1, 2])
    with pytest.raises(InputFormatError, match="finite"):
        pearson_x100([1, float("nan")], [1, 2])


@pytest.mark.parametrize(
    ("scores", "accuracy"),
    [
        ([0.4, 0.9, 0.7, 0.6], 50.0),  # the original (odd position) must score higher
        ([0.1, 0.2, 0.3, 0.4], 100.0),
        ([0.9, 0.1, 0.8, 0.2], 0.0),
        ([0.5, 0.5, 0.2, 0.3], 50.0),  # a tie is wrong
    ],
)
def test_role_confusion_accuracy_by_hand(scores, accuracy):
    assert role_confusion_accuracy_x100(scores) == pytest.approx(accuracy)


@pytest.mark.parametrize("scores", [[], [0.1, 0.2, 0.3], [0.1, float("inf")]])
def test_role_confusion_needs_finite_pairs_of_pairs(scores):
    with pytest.raises(InputFormatError):
        role_confusion_accuracy_x100(scores)


def test_task_figure_and_the_mean_of_twelve():
    assert task_figure("reify", [1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(80.0)
    assert task_figure("role_confusion", [0.4, 0.9, 0.7, 0.6]) == 50.0
    with pytest.raises(ConfigError):
        task_figure("bogus", [1, 2], [1, 2])
    figures = [80.0, 60.0, 40.0] * 3 + [100.0, 90.0, 50.0]
    assert bamboo_mean(figures) == pytest.approx((180 * 3 + 240) / 12)
    assert bamboo_mean([*figures[:5], None, *figures[6:]]) == pytest.approx(
        (180 * 3 + 240 - 40) / 11
    )
    assert bamboo_mean([None, None]) is None


# -- loading ---------------------------------------------------------------------------------------


@pytest.fixture
def fake(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    write_fake_bamboo(data, missing=("para/reify",))
    return data


def test_load_skips_the_placeholders_and_reports_a_missing_task(fake):
    split = load_bamboo("dev", fake)
    assert [(t.dataset, t.task) for t in split.tasks] == list(FIGURES)
    for t in split.tasks:
        if t.name == "para/reify":
            assert not t.available and len(t) == 0
            assert t.missing == "para/reify/src.dev.amr, para/reify/tgt.dev.amr missing"
            continue
        assert t.available and len(t) == 4
        if t.task == "role_confusion":
            assert t.human == () and t.ids == ("0", "1", "2", "3")
            continue
        assert list(t.human) == HUMAN[t.dataset]
        first = 1 if t.dataset in ("sick", "para") else 0
        assert t.ids == tuple(str(i) for i in range(first, first + 4))
        assert t.kg_1[0] == (Triple("dance", "ARG0", "man"),)
        assert t.text_1[0] == "A man is dancing." and t.text_2[-1] == "A dog runs."
    assert split.pairs == 8 * 4 + 3 * 4
    assert split.task("sick", "syno").task == "syno"
    with pytest.raises(ConfigError):
        split.task("sick", "bogus")


def test_a_dataset_without_its_human_scores_loses_main_reify_syno_only(fake):
    (fake / "bamboo" / "sick" / "dev.y").unlink()
    split = load_bamboo("dev", fake)
    assert split.task("sick", "main").missing == "sick/dev.y missing"
    assert split.task("sick", "role_confusion").available


@pytest.mark.parametrize(
    ("break_it", "error", "message"),
    [
        (
            lambda root: (root / "sts/main/tgt.dev.amr").write_text("(a / b)\n", encoding="utf-8"),
            InputFormatError,
            "src.dev.amr has 5 graphs and tgt.dev.amr has 1",
        ),
        (
            lambda root: (root / "sick/syno/src.dev.amr").write_text(  # as many graphs as tgt
                "(a / b)\n\n(c / d :ARG0 (e / f)\n\n" + "(g / h)\n\n" * 4, encoding="utf-8"
            ),
            PenmanFormatError,
            "src.dev.amr, block 2 (line 3)",
        ),
        (
            lambda root: (root / "sts/dev.y").write_text("0.1\n0.2\n", encoding="utf-8"),
            InputFormatError,
            "sts/dev.y: 2 values, fewer than the 0 placeholder(s) and 4 rows",
        ),
        (
            lambda root: (root / "sts/dev.y").write_text("0.1\nhigh\n", encoding="utf-8"),
            InputFormatError,
            "sts/dev.y, line 2: not a number: 'high'",
        ),
        (  # issue 59, item 11: met by Pearson's r after the scoring, with no file or line
            lambda root: (root / "sick/dev.y").write_text("0.5\n0.1\nnan\n", encoding="utf-8"),
            InputFormatError,
            "sick/dev.y, line 3: not a finite number: 'nan'",
        ),
        (
            lambda root: (root / "para/dev.y").write_text("0.5\n-inf\n", encoding="utf-8"),
            InputFormatError,
            "para/dev.y, line 2: not a finite number: '-inf'",
        ),
        (
            lambda root: (root / "sts/orig.dev.txt").write_text("r\n" * 9, encoding="utf-8"),
            InputFormatError,
            "sts/main/src.dev.amr: 5 graphs, fewer than the 0 placeholder(s) and 9 rows",
        ),
        (
            lambda root: [
                (root / f"sts/role_confusion/{s}.dev.amr").write_text(
                    "(a / b)\n\n(c / d)\n\n(e / f)\n", encoding="utf-8"
                )
                for s in ("src", "tgt")
            ],
            InputFormatError,
            "3 graphs; role confusion needs pairs of pairs",
        ),
    ],
)
def test_bad_data_is_a_named_error(fake, break_it, error, message):
    break_it(fake / "bamboo")
    with pytest.raises(error) as info:
        load_bamboo("dev", fake)
    assert message in str(info.value)


def test_no_folder_and_an_unknown_split_are_named_errors(tmp_path):
    with pytest.raises(InputFormatError, match="no BAMBOO data at"):
        load_bamboo("dev", tmp_path)
    with pytest.raises(ConfigError, match="split must be one of train, dev, test"):
        load_bamboo("validation", tmp_path)


def test_the_data_folder_defaults_to_s3kg_data_dir(fake, monkeypatch):
    monkeypatch.setenv("S3KG_DATA_DIR", str(fake))
    assert load_bamboo().root == str(fake / "bamboo")


# -- the runner ------------------------------------------------------------------------------------


def _r(x, y) -> float:
    return float(np.corrcoef(x, y)[0, 1]) * 100


def test_run_applies_the_protocol_to_every_component(fake):
    scorer = QuantScorer(alpha=0.5)
    result = run_bamboo(scorer, data_dir=fake)  # type: ignore[arg-type]
    assert scorer.calls == 11  # one call per available task
    q = np.array(QUANT)
    expected = {"s_wl": q, "s_sbert": q**2, "s3kg": 0.5 * q + 0.5 * q**2}
    for component, values in expected.items():
        for dataset, task in FIGURES:
            fig = result.figure(dataset, task, component)
            if (dataset, task) == ("para", "reify"):
                assert fig.value is None and "missing" in fig.note
            elif task == "role_confusion":
                assert fig.value == 50.0 and fig.n == 4  # one right, one tie
            else:
                assert fig.value == pytest.approx(_r(values, HUMAN[dataset]), abs=1e-9)
                assert fig.n == 4
        available = [f.value for f in result.figures[component] if f.value is not None]
        assert len(available) == 11
        assert result.mean(component) == pytest.approx(sum(available) / 11)
    assert result.available == 11 and result.pairs == 44
    assert result.signature == f"{STUB_SIGNATURE}|alpha:0.5" and result.alpha == 0.5
    assert result.scores["sts/main"]["s_wl"] == pytest.approx(QUANT)


def test_alpha_moves_the_blend_only(fake):
    data = load_bamboo("dev", fake)
    low = run_bamboo(QuantScorer(alpha=0.0), data=data)  # type: ignore[arg-type]
    high = run_bamboo(QuantScorer(alpha=1.0), data=data)  # type: ignore[arg-type]
    assert low.figures["s3kg"] == low.figures["s_wl"]
    assert high.figures["s3kg"] == high.figures["s_sbert"]
    assert low.figures["s_wl"] == high.figures["s_wl"]


def test_constant_scores_are_an_undefined_figure_not_a_crash(fake):
    class Constant(QuantScorer):
        def score_pairs(self, pairs, *, texts=None, progress=None):
            return [r.__class__(0.5, 0.5) for r in super().score_pairs(pairs)]

    result = run_bamboo(Constant(), data_dir=fake)  # type: ignore[arg-type]
    fig = result.figure("sts", "main")
    assert fig.value is None and fig.note == "constant scores: Pearson's r is undefined"
    assert result.figure("sts", "role_confusion").value == 0.0  # every pair of pairs a tie
    assert result.mean() == 0.0


def test_a_scorer_and_an_encoder_are_not_both_given(fake, minilm):
    with pytest.raises(ConfigError, match="not both"):
        run_bamboo(KGScorer(minilm), encoder=minilm, data_dir=fake)


def test_the_result_round_trips_and_prints_a_table(fake):
    result = run_bamboo(QuantScorer(), data_dir=fake)  # type: ignore[arg-type]
    data = json.loads(json.dumps(result.to_dict()))
    assert data["figures"]["s3kg"]["para"]["reify"] is None
    assert data["notes"]["s3kg"]["para/reify"].endswith("missing")
    assert data["n"]["sts"]["main"] == 4 and data["available"] == 11
    assert set(data["mean"]) == set(COMPONENTS)
    assert BambooResult.from_dict(data) == result
    table = result.table()
    lines = table.splitlines()
    assert lines[0].startswith("BAMBOO dev: Pearson x100")
    assert lines[3].startswith("S3KG") and lines[4].startswith("S_WL")
    assert lines[5].startswith("S_SBERT")
    assert lines[3].split()[6] == "n/a"  # S3KG, STS SICK PARA main, STS SICK reify, PARA reify
    assert "mean of the 11 of 12 figures available" in table
    assert "para/reify: para/reify/src.dev.amr, para/reify/tgt.dev.amr missing" in table
    assert "44 graph pairs scored" in table and "pairs/s" in table


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_runs_with_one_encoding_per_string(fake, make_counting_minilm, mode):
    encoder = make_counting_minilm()
    result = run_bamboo(encoder=encoder, config=S3KGConfig(mode=mode), data_dir=fake)
    assert result.mode == mode and result.pairs == 44
    assert len(encoder.texts) == len(set(encoder.texts))  # every string encoded once in all
    for component in COMPONENTS:
        for fig in result.figures[component]:
            assert fig.value is None or -100.0 <= fig.value <= 100.0


def test_hybrid_ranks_the_original_above_its_role_swapped_version(fake, scorer_hybrid):
    result = run_bamboo(scorer_hybrid, data_dir=fake)
    # the original source graph is the target itself; the swapped one differs in two roles
    for dataset in ("sts", "sick", "para"):
        assert result.figure(dataset, "role_confusion", "s_wl").value == 100.0
        assert result.figure(dataset, "role_confusion").value == 100.0
    assert result.encoder == scorer_hybrid.encoder.name and result.mode == "hybrid"


@pytest.mark.shared_data
def test_the_shared_dev_split_has_the_published_counts(shared_data):
    if not (shared_data / "bamboo").is_dir():
        pytest.skip("no bamboo/ in the shared data folder")
    split = load_bamboo("dev", shared_data)
    counts = {t.name: len(t) for t in split.tasks}
    for task in ("main", "reify", "syno"):
        assert counts[f"sts/{task}"] == 1500
        assert counts[f"sick/{task}"] == 500
        assert counts[f"para/{task}"] == 500
    assert all(t.available for t in split.tasks)
    assert all(counts[f"{d}/role_confusion"] % 2 == 0 for d in ("sts", "sick", "para"))
    main = split.task("sts", "main")
    assert main.text_1[0] == "A man with a hard hat is dancing."
    assert main.text_1[-1] != "Empty line"  # the closing placeholder is not a pair
    assert split.task("sick", "main").text_1[0] != "sentence_A"  # nor the header's
