"""s3kg_core.evaluation.variants: candidates, the dev-test protocol on every set, the tables."""

from __future__ import annotations

import numpy as np
import pytest

from s3kg_core.evaluation.metrics import DEFAULT_ALPHAS, auroc, max_f1
from s3kg_core.evaluation.pair_sets import PairSet
from s3kg_core.evaluation.splits import PAIR_SPLIT, dev_mask
from s3kg_core.evaluation.variants import (
    COMPONENT_MODES,
    analyse,
    candidates,
    report,
    score_components,
    short_name,
)


def _components(name: str, n: int, seed: int, reverse: bool = True) -> dict[str, list]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    y[:4] = [0, 1, 0, 1]
    rec: dict[str, list] = {"ids": [f"{name}-{i}" for i in range(n)], "labels": y.tolist()}
    for direction in ("fwd", "rev") if reverse else ("fwd",):
        for mode in COMPONENT_MODES:
            for part, noise in (("wl", 0.8), ("sb", 0.5)):
                values = np.clip(0.5 * y + rng.normal(scale=noise, size=n) * 0.3 + 0.3, 0, 1)
                rec[f"{mode}_{direction}_{part}"] = values.tolist()
    return rec


@pytest.fixture(scope="module")
def comps():
    return {"set_a_400": _components("a", 120, 0), "semantic_kg_b_400": _components("b", 90, 1)}


@pytest.fixture(scope="module")
def analysed(comps):
    return analyse(comps)


def _old_protocol(comps):
    """The loop bench_variants.py ran before it called the library: alpha by dev AUROC."""
    alphas = [float(a) for a in DEFAULT_ALPHAS]
    out = {}
    for ds, rec in comps.items():
        y, dev = np.asarray(rec["labels"]), dev_mask(ds, rec["ids"])
        for n, fn in candidates(rec).items():
            dev_auc = np.array([auroc(fn(a)[dev], y[dev]) for a in alphas])
            best = int(np.argmax(dev_auc))
            scores = fn(alphas[best])
            out[(n, ds)] = {
                "alpha": alphas[best],
                "dev_auroc": float(dev_auc[best]),
                "test_auroc": auroc(scores[~dev], y[~dev]),
                "test_f1": max_f1(scores[~dev], y[~dev]).f1,
            }
    return out


def test_the_protocol_is_the_old_loop_on_every_candidate_and_set(comps, analysed):
    result = analysed
    assert result["split"] == PAIR_SPLIT and result["sets"] == list(comps)
    old = _old_protocol(comps)
    for (n, ds), expected in old.items():
        assert result["per_set"][n][ds] == pytest.approx(expected, abs=1e-12), (n, ds)
    for n, s in result["summary"].items():
        assert s["mean_dev_auroc"] == pytest.approx(
            np.mean([old[(n, d)]["dev_auroc"] for d in comps]), abs=1e-12
        )
        assert s["global_alpha"] in DEFAULT_ALPHAS and 0 <= s["global_mean_test_auroc"] <= 1


def test_candidates_blend_by_each_modes_convention(comps):
    rec = comps["set_a_400"]
    c = candidates(rec)
    assert set(c) == {"paper", "kgx", "hybrid", "struct", "paper_bi", "kgx_bi", "hybrid_bi",
                      "paper_min"}  # fmt: skip
    wl, sb = np.asarray(rec["paper_fwd_wl"]), np.asarray(rec["paper_fwd_sb"])
    assert c["paper"](0.3) == pytest.approx(0.7 * wl + 0.3 * sb)
    kwl, ksb = np.asarray(rec["kgx_fwd_wl"]), np.asarray(rec["kgx_fwd_sb"])
    assert c["kgx"](0.3) == pytest.approx(0.3 * kwl + 0.7 * ksb)
    assert (c["paper_min"](0.5) <= c["paper_bi"](0.5) + 1e-12).all()
    assert set(candidates(_components("x", 10, 2, reverse=False))) == {
        "paper", "kgx", "hybrid", "struct"}  # fmt: skip


def test_report_orders_by_dev_auroc_and_names_sets_shortly(analysed):
    text = report(analysed)
    lines = text.splitlines()
    assert lines[0] == f"split {PAIR_SPLIT}; alpha per set chosen by dev AUROC"
    dev = [float(line.split()[1]) for line in lines[3:11]]
    assert dev == sorted(dev, reverse=True)
    assert "sk_b" in text and short_name("pubmedqa_ranked_faithfulness_400") == "pubmedqa"


def test_components_are_scored_once_per_set_and_saved_for_resuming(minilm, tmp_path):
    rows = [
        {"id": str(i), "paragraph_1": "", "paragraph_2": "", "label": str(i % 2),
         "kg_1": '[["Paris", "capital of", "France"]]',
         "kg_2": '[["Paris", "capital of", "France"]]' if i % 2 else '[["Rome", "in", "Italy"]]'}
        for i in range(6)
    ]  # fmt: skip
    ps = PairSet.from_rows("toy", rows)
    save = tmp_path / "c.json"
    lines: list[str] = []
    comps = score_components([ps], minilm, reverse=False, save=save, log=lines.append)
    rec = comps["toy"]
    assert rec["labels"] == [0, 1, 0, 1, 0, 1] and rec["paper_fwd_wl"][1] == pytest.approx(1.0)
    assert "hybrid_rev_wl" not in rec and len(lines) == 1 and save.is_file()
    again = score_components([ps], minilm, done=comps, log=lines.append)
    assert again == comps and len(lines) == 1  # nothing scored again
