"""End to end against a real model: SmolLM2-135M served by `transformers serve` (slow).

Collects answers for three of the demo questions, extracts their KGs with the joint prompt, and
scores them, all through the `s3kg` command line. SmolLM2 is weak: its extraction output often
does not parse, and that is recorded per KG rather than stopping the run.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from serve_helpers import serve_unavailable_reason, transformers_serve
from store_helpers import REPO

from s3kg_core.cli import cli
from s3kg_core.store.store import Store

pytestmark = pytest.mark.slow


def test_collect_extract_and_score_with_smollm2(tmp_path, monkeypatch):
    reason = serve_unavailable_reason()
    if reason:
        pytest.skip(reason)
    from s3kg_core.llm.local_models import smollm2_model_dir

    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "S3KG_MODEL"):
        monkeypatch.delenv(var, raising=False)
    model_dir = smollm2_model_dir()
    db = tmp_path / "e2e.duckdb"
    runner = CliRunner()
    questions = REPO / "data" / "demo" / "questions.jsonl"
    mapping = "id=id,question=question,context=context,gold=gold_answer"
    imported = runner.invoke(
        cli, ["import", "csv", str(questions), "--db", str(db), "--map", mapping]
    )
    assert imported.exit_code == 0, imported.output
    with transformers_serve(model_dir) as url:
        endpoint = ["--base-url", url, "--model", str(model_dir), "--timeout", "300"]
        collected = runner.invoke(
            cli, ["collect", "--db", str(db), "--limit", "3", "--max-tokens", "60", *endpoint]
        )
        assert collected.exit_code == 0, collected.output
        assert "3 asked (ok 3" in collected.output
        extracted = runner.invoke(
            cli,
            ["extract", "--db", str(db), "--extractor", "llm", "--max-tokens", "200", *endpoint],
        )
        assert extracted.exit_code == 0, extracted.output
        assert "3 items extracted" in extracted.output
        again = runner.invoke(
            cli, ["collect", "--db", str(db), "--limit", "3", "--max-tokens", "60", *endpoint]
        )
        assert "3 already answered" in again.output
    with Store(db).connect() as con:
        answers = con.execute(
            "SELECT answer, status, latency_s, prompt_tokens, completion_tokens FROM answers"
        ).fetchall()
        kgs = con.execute("SELECT source, status FROM kgs").fetchall()
    assert len(answers) == 3
    assert all(
        a and s == "ok" and lat > 0 and pt > 50 and 0 < ct <= 60 for a, s, lat, pt, ct in answers
    )
    assert len(kgs) == 9  # every KG is stored: triples, or the reason it failed
    assert all(status in ("ok", "empty") or status.startswith("failed: ") for _, status in kgs)
    scored = runner.invoke(cli, ["score", "--db", str(db)])
    assert scored.exit_code == 0, scored.output
