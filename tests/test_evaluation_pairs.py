"""s3kg_core.evaluation.pairs: the pair benchmark runner and its protocol, on sets tests build."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from s3kg_core.errors import ConfigError, InputFormatError
from s3kg_core.evaluation.metrics import DEFAULT_ALPHAS, alpha_sweep, best_alpha
from s3kg_core.evaluation.pair_sets import PairSet
from s3kg_core.evaluation.pairs import (
    BenchResult,
    available_methods,
    default_methods,
    load_bench_results,
    run_pair_benchmark,
    store_bench_result,
    with_extracted_triples,
    with_offline_triples,
)
from s3kg_core.evaluation.splits import dev_mask
from s3kg_core.store.store import Store

HAS_BASELINES = importlib.util.find_spec("s3kg_core.evaluation.baselines") is not None

POSITIVE_KGS = [
    [["Marie_Curie", "won", "Nobel_Prize"], ["Marie_Curie", "born_in", "Warsaw"]],
    [["Aspirin", "reduces", "fever"], ["Aspirin", "is_a", "drug"]],
    [["Paris", "capital_of", "France"]],
    [["Einstein", "developed", "relativity"], ["Einstein", "born_in", "Ulm"]],
]
NEGATIVE_KGS = [
    [["volcano", "erupted_in", "Iceland"]],
    [["penguin", "lives_in", "Antarctica"], ["penguin", "eats", "krill"]],
    [["guitar", "has", "strings"]],
    [["river", "flows_into", "sea"], ["river", "carries", "sediment"]],
]


def _cell(kg: list[list[str]]) -> str:
    return json.dumps(kg)


def separable_rows() -> list[dict[str, str]]:
    """Positives compare a KG (and text) with itself; negatives with unrelated ones."""
    rows = []
    for i, kg in enumerate(POSITIVE_KGS):
        text = " ".join(" ".join(t) for t in kg)
        rows.append(
            {
                "id": f"p{i}",
                "paragraph_1": text,
                "kg_1": _cell(kg),
                "paragraph_2": text,
                "kg_2": _cell(kg),
                "label": "1",
            }
        )
    for i, (kg, other) in enumerate(zip(POSITIVE_KGS, NEGATIVE_KGS, strict=True)):
        rows.append(
            {
                "id": f"n{i}",
                "paragraph_1": " ".join(" ".join(t) for t in kg),
                "kg_1": _cell(kg),
                "paragraph_2": " ".join(" ".join(t) for t in other),
                "kg_2": _cell(other),
                "label": "0",
            }
        )
    return rows


@pytest.fixture(scope="module")
def separable() -> PairSet:
    return PairSet.from_rows("separable", separable_rows())


@pytest.fixture(scope="module")
def paper_result(separable: PairSet, minilm: object) -> BenchResult:
    return run_pair_benchmark(  # type: ignore[arg-type]
        separable, encoder=minilm, mode="paper", methods=["s3kg"], bootstrap=50, protocol="same"
    )


def test_perfect_separation_gives_f1_and_auroc_of_one(paper_result):
    s3kg = paper_result.methods["s3kg"]
    assert s3kg.f1 == pytest.approx(1.0)
    assert s3kg.auroc == pytest.approx(1.0)
    assert s3kg.f1_ci == pytest.approx((1.0, 1.0))
    assert s3kg.auroc_ci == pytest.approx((1.0, 1.0))
    assert s3kg.alpha in DEFAULT_ALPHAS
    assert 0.0 < s3kg.threshold <= 1.0
    assert s3kg.signature.startswith("mode:paper|")


def test_alpha_sweep_covers_the_grid_and_best_alpha_is_the_first_best(paper_result):
    sweep = paper_result.alpha_sweep
    assert [p.alpha for p in sweep] == list(DEFAULT_ALPHAS)
    best_f1 = max(p.f1 for p in sweep)
    best = [p for p in sweep if p.f1 == best_f1]
    top_auroc = max(p.auroc for p in best)
    assert paper_result.methods["s3kg"].alpha == next(p.alpha for p in best if p.auroc == top_auroc)


def test_json_has_the_documented_shape_and_round_trips(paper_result):
    data = json.loads(json.dumps(paper_result.to_json()))
    assert list(data) == [
        "dataset", "n", "methods", "encoder", "mode", "triples", "protocol", "alpha_sweep",
    ]  # fmt: skip
    assert data["protocol"] == "same"
    assert data["dataset"] == "separable"
    assert data["n"] == 8
    assert data["mode"] == "paper"
    assert data["triples"] == "released"
    s3kg = data["methods"]["s3kg"]
    assert {"f1", "auroc", "alpha", "threshold", "f1_ci", "auroc_ci"} <= set(s3kg)
    assert len(s3kg["f1_ci"]) == len(s3kg["auroc_ci"]) == 2
    assert len(data["alpha_sweep"]) == 11
    assert set(data["alpha_sweep"][0]) == {"alpha", "f1", "auroc", "threshold"}
    assert BenchResult.from_json(data).to_json() == data


def test_kgx_mode_also_separates(separable, minilm):
    result = run_pair_benchmark(
        separable, encoder=minilm, mode="kgx", methods=["s3kg"], bootstrap=5, protocol="same"
    )
    assert result.mode == "kgx"
    assert result.methods["s3kg"].auroc == pytest.approx(1.0)
    assert result.methods["s3kg"].signature.startswith("mode:kgx|")


def test_reversed_labels_give_auroc_zero(separable, minilm):
    flipped = PairSet.from_rows(
        "flipped", [{**r, "label": "0" if r["label"] == "1" else "1"} for r in separable_rows()]
    )
    result = run_pair_benchmark(
        flipped, encoder=minilm, methods=["s3kg"], bootstrap=5, protocol="same"
    )
    assert result.methods["s3kg"].auroc == pytest.approx(0.0)


def test_the_same_seed_gives_the_same_intervals(separable, minilm):
    rows = separable_rows()
    rows[0] = {**rows[0], "label": "0"}  # not separable: intervals are wide
    noisy = PairSet.from_rows("noisy", rows)
    one = run_pair_benchmark(
        noisy, encoder=minilm, methods=["s3kg"], bootstrap=40, seed=3, protocol="same"
    )
    two = run_pair_benchmark(
        noisy, encoder=minilm, methods=["s3kg"], bootstrap=40, seed=3, protocol="same"
    )
    assert one.to_json() == two.to_json()
    m = one.methods["s3kg"]
    assert m.f1_ci.low <= m.f1 <= 1.0
    assert m.auroc_ci.low <= m.auroc_ci.high


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"methods": ["nope"]}, "unknown method"),
        ({"methods": []}, "no methods"),
        ({"mode": "both"}, "mode must be"),
        ({"triples": "llm"}, "needs an LLM extractor"),
        ({"protocol": "oracle"}, "protocol must be"),
        ({"triples": "guess"}, "triples must be"),
        ({"bootstrap": 0}, "bootstrap must be"),
    ],
)
def test_bad_options_raise_config_errors(separable, kwargs, message):
    with pytest.raises(ConfigError, match=message):
        run_pair_benchmark(separable, **{"protocol": "same", **kwargs})


def test_a_single_class_set_is_refused_before_scoring():
    rows = [r for r in separable_rows() if r["label"] == "1"]
    with pytest.raises(InputFormatError, match="both classes"):
        run_pair_benchmark(
            PairSet.from_rows("ones", rows), encoder="no-such-encoder", protocol="same"
        )


def test_available_methods_start_with_s3kg_and_its_variants():
    methods = available_methods()
    assert methods[:4] == ["s3kg", "s3kg@paper", "s3kg@kgx", "s3kg@hybrid"]
    assert "s3kg_kgx" not in default_methods()
    if HAS_BASELINES:
        assert "rouge1" in methods


@pytest.mark.skipif(not HAS_BASELINES, reason="s3kg_core.evaluation.baselines is not there yet")
def test_a_text_baseline_is_measured_beside_s3kg(separable, minilm):
    result = run_pair_benchmark(
        separable, encoder=minilm, methods=["s3kg", "rouge1"], bootstrap=10, protocol="same"
    )
    assert list(result.methods) == ["s3kg", "rouge1"]
    rouge = result.methods["rouge1"]
    assert rouge.alpha is None
    assert rouge.f1 == pytest.approx(1.0)  # identical texts vs unrelated texts
    assert rouge.signature.startswith("rouge1|")
    assert "alpha" not in result.to_json()["methods"]["rouge1"]


def test_store_round_trip_is_idempotent(paper_result, tmp_path):
    store = Store(tmp_path / "bench.duckdb")
    assert store_bench_result(store, paper_result) == 1
    assert store_bench_result(store, paper_result) == 1
    rows = load_bench_results(store)
    assert len(rows) == 1
    row = rows[0]
    s3kg = paper_result.methods["s3kg"]
    assert (row["dataset"], row["n"], row["mode"], row["triples"], row["method"]) == (
        "separable", 8, "paper", "released", "s3kg",
    )  # fmt: skip
    assert row["f1"] == pytest.approx(s3kg.f1)
    assert row["auroc"] == pytest.approx(s3kg.auroc)
    assert row["alpha"] == pytest.approx(s3kg.alpha)
    assert (row["f1_lo"], row["f1_hi"]) == pytest.approx(tuple(s3kg.f1_ci))
    assert len(row["detail"]["alpha_sweep"]) == 11
    assert row["detail"]["signature"] == s3kg.signature
    # per-pair scores, for ROC curves and drill-downs
    assert row["detail"]["scores"] == pytest.approx(list(s3kg.scores))
    assert len(row["detail"]["ids"]) == len(row["detail"]["labels"]) == 8
    assert load_bench_results(store, "other") == []


def test_offline_triples_replace_both_kgs():
    rows = [
        {"id": "a", "paragraph_1": "Aspirin reduces fever.", "kg_1": "[]",
         "paragraph_2": "Aspirin reduces pain.", "kg_2": "[]", "label": "1"},
        {"id": "b", "paragraph_1": "Curie won the prize.", "kg_1": "[]",
         "paragraph_2": "", "kg_2": "[]", "label": "0"},
    ]  # fmt: skip
    out = with_offline_triples(PairSet.from_rows("t", rows))
    assert out.status_1 == ("ok", "ok")
    assert out.status_2 == ("ok", "empty")
    assert out.kg_1[0] and out.kg_2[1] == ()
    assert np.array_equal(out.labels, [1, 0])


def _bigger_rows(n: int = 40) -> list[dict[str, str]]:
    """``n`` pairs cycling through the separable ones, with distinct ids (so the split splits)."""
    base = separable_rows()
    return [{**base[i % len(base)], "id": f"x{i}"} for i in range(n)]


@pytest.fixture(scope="module")
def dev_test_result(minilm: object) -> tuple[PairSet, BenchResult]:
    ps = PairSet.from_rows("bigger", _bigger_rows())
    result = run_pair_benchmark(  # type: ignore[arg-type]
        ps, encoder=minilm, methods=["s3kg", "s3kg@paper", "s3kg@kgx"], bootstrap=10
    )
    return ps, result


def test_dev_test_reports_on_test_pairs_with_alpha_chosen_on_dev(dev_test_result):
    ps, result = dev_test_result
    dev = dev_mask("bigger", ps.ids)
    assert result.protocol == "dev-test"
    assert (result.n, result.n_dev) == (int((~dev).sum()), int(dev.sum()))
    assert 0 < result.n_dev < result.n
    assert result.ids == tuple(i for i, d in zip(ps.ids, dev, strict=True) if not d)
    for name in ("s3kg", "s3kg@paper", "s3kg@kgx"):
        m = result.methods[name]
        assert len(m.scores) == result.n
        assert len(m.dev_sweep) == len(m.sweep) == 11
        assert m.alpha == best_alpha(m.dev_sweep, by="auroc").alpha
    data = result.to_json()
    assert (data["n_dev"], data["split"]) == (result.n_dev, "sha256-name-id-30pct-v1")
    assert "alpha_sweep_dev" in data["methods"]["s3kg@kgx"]
    assert BenchResult.from_json(data).to_json() == data


def test_s3kg_is_the_variant_of_the_primary_mode(dev_test_result):
    _, result = dev_test_result
    assert result.mode == "ot"
    assert result.methods["s3kg"].signature.startswith("mode:ot|")
    assert result.methods["s3kg@paper"].signature.startswith("mode:paper|")
    assert result.methods["s3kg@kgx"].signature.startswith("mode:kgx|")
    assert result.alpha_sweep == result.methods["s3kg"].sweep


def test_dev_test_refuses_a_set_too_small_to_split():
    rows = separable_rows()
    tiny = PairSet.from_rows("tiny", [rows[0], rows[4], rows[1]])
    with pytest.raises(InputFormatError, match="protocol 'same'"):  # before any model loads
        run_pair_benchmark(tiny, encoder="no-such-encoder")


class _EchoExtractor:
    """Extracts one triple per text: (first word, "says", last word)."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def extract_texts(self, texts):
        from s3kg_core.extract.base import TextKG
        from s3kg_core.kg import Triple

        self.texts += texts
        out = []
        for text in texts:
            words = text.split()
            kg = (Triple(words[0], "says", words[-1]),) if words else ()
            out.append(TextKG(triples=kg, status="ok" if words else "empty"))
        return out


def test_llm_triples_come_from_the_extractor(separable, minilm):
    extractor = _EchoExtractor()
    result = run_pair_benchmark(  # type: ignore[arg-type]
        separable, encoder=minilm, methods=["s3kg"], bootstrap=5, protocol="same",
        triples="llm", extractor=extractor,
    )  # fmt: skip
    assert result.triples == "llm"
    assert sorted(extractor.texts) == sorted([*separable.text_1, *separable.text_2])
    extracted = with_extracted_triples(separable, _EchoExtractor())
    assert all(len(kg) == 1 and kg[0].relation == "says" for kg in extracted.kg_1)


def test_choose_alpha_on_dev_reports_on_test_and_on_all_under_same():
    from s3kg_core.evaluation.pairs import choose_alpha

    rng = np.random.default_rng(4)
    y = np.array([1, 0] * 30)
    wl, sb = rng.random(60), y + rng.normal(scale=0.6, size=60)
    dev = dev_mask("toy", [str(i) for i in range(60)])
    choice = choose_alpha(lambda a: (1 - a) * wl + a * sb, y, dev)
    dev_points = alpha_sweep(wl[dev], sb[dev], y[dev], "paper")
    assert choice.dev_sweep == tuple(dev_points)
    assert choice.alpha == best_alpha(dev_points, by="auroc").alpha
    assert choice.sweep == tuple(alpha_sweep(wl[~dev], sb[~dev], y[~dev], "paper"))
    assert choice.scores.tolist() == ((1 - choice.alpha) * wl + choice.alpha * sb)[~dev].tolist()
    assert choice.dev_auroc == best_alpha(dev_points, by="auroc").auroc
    same = choose_alpha(lambda a: (1 - a) * wl + a * sb, y, None)
    assert same.alpha == best_alpha(alpha_sweep(wl, sb, y, "paper")).alpha
    assert len(same.scores) == 60 and same.dev_sweep == () and np.isnan(same.dev_auroc)
