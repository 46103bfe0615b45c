"""bench/experiments/summarise_pairs.py: the table of a pair benchmark, and its evidence file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.experiments import summarise_pairs
from docsgen.evidence import read_evidence

REPO = Path(__file__).resolve().parents[1]


def test_the_committed_evidence_is_what_the_demo_file_gives(tmp_path, capsys):
    out = tmp_path / "pairs.json"
    demo = REPO / "data" / "demo" / "bench_results.json"
    assert summarise_pairs.main([str(demo), "--evidence", str(out)]) == 0
    assert "paws_wiki (n=300)" in capsys.readouterr().out
    written, committed = read_evidence(out), read_evidence(REPO / "evidence" / "pairs_minilm.json")
    assert written["figures"] == committed["figures"]
    prov = written["provenance"]
    assert prov["transcribed"]["from"] == "data/demo/bench_results.json"
    shipped = json.loads(demo.read_text())
    assert prov["command"] == shipped["command"]
    assert prov["date"] == shipped["created"]
    # 12 digits whatever the clone: git's %h grows with the repository (a CI clone wrote 7)
    assert len(prov["commit"]) == 12, prov["commit"]
    assert prov["commit"] == committed["provenance"]["commit"]


def _result(dataset, values):
    return {
        "dataset": dataset, "n": 10, "n_dev": 4, "encoder": "minilm", "mode": "hybrid",
        "triples": "released", "protocol": "dev-test", "split": "s",
        "methods": {
            m: {"f1": f1, "auroc": a, "alpha": 0.5, "threshold": 0.1, "f1_ci": [0, 1],
                "auroc_ci": [0, 1], "alpha_sweep": [{"alpha": 0.5}]}
            for m, (a, f1) in values.items()
        },
        "alpha_sweep": [],
    }  # fmt: skip


def test_a_bench_pairs_json_becomes_evidence_with_its_command(tmp_path):
    src = tmp_path / "bench.json"
    src.write_text(json.dumps([
        _result("mrpc_400", {"s3kg": (0.6, 0.7), "bleu": (0.5, 0.6)}),
        _result("semantic_kg_globi_400", {"s3kg": (0.9, 0.8), "bleu": (0.7, 0.6)}),
    ]))  # fmt: skip
    out = tmp_path / "ev.json"
    with pytest.raises(SystemExit, match="--command"):
        summarise_pairs.main([str(src), "--evidence", str(out)])
    assert not out.exists()
    cmd = "s3kg bench pairs --dataset all --json bench.json"
    assert summarise_pairs.main([str(src), "--evidence", str(out), "--command", cmd]) == 0
    ev = read_evidence(out)
    assert ev["provenance"]["command"] == cmd and ev["provenance"]["transcribed"] is None
    fig = ev["figures"]
    assert sorted(fig["sets"]) == ["mrpc", "sk_globi"]
    assert "alpha_sweep" not in fig["sets"]["mrpc"]["methods"]["s3kg"]  # no per-pair data
    assert fig["mean"]["s3kg"] == pytest.approx({"auroc": 0.75, "f1": 0.75})
    assert fig["mean"]["bleu"] == pytest.approx({"auroc": 0.6, "f1": 0.6})
