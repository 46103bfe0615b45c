"""bench/experiments/bench_variants.py: --json writes the analysis as an evidence file."""

from __future__ import annotations

import json

import numpy as np

from bench.experiments import bench_variants
from docsgen.evidence import read_evidence
from s3kg_core.evaluation.variants import COMPONENT_MODES, report


def test_json_is_evidence_the_docs_render(tmp_path, minilm, capsys):
    rng = np.random.default_rng(0)
    comps = {}
    for name in ("mrpc_400",):
        y = [1, 0] * 20
        rec = {"ids": [str(i) for i in range(40)], "labels": y}
        for m in COMPONENT_MODES:
            for part in ("wl", "sb"):
                rec[f"{m}_fwd_{part}"] = (np.array(y) * 0.5 + rng.random(40)).tolist()
        comps[name] = rec
    components = tmp_path / "components.json"
    components.write_text(json.dumps(comps))
    out = tmp_path / "variants.json"
    args = ["--no-score", "--components", str(components), "--json", str(out)]
    assert bench_variants.main(args) == 0
    ev = read_evidence(out)
    assert ev["provenance"]["signature"].startswith(f"mode:hybrid|enc:{minilm.name}|")
    assert ev["provenance"]["command"].startswith("python ")
    fig = ev["figures"]
    assert fig["encoder"] == "minilm" and fig["sets"] == ["mrpc_400"]
    assert report(fig) in capsys.readouterr().out  # what it printed is what the docs show
