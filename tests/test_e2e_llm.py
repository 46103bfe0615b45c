"""End to end against a real model: SmolLM2-135M served by `s3kg llm serve` (slow).

The README's local-endpoint commands, as a user runs them: `s3kg llm serve` in one process, its
two export lines in the environment of the next, then `s3kg run` on 5 PubMedQA questions (the
demo questions when the shared data is absent): collect, LLM extraction, score and TAU. SmolLM2
is weak: its extraction output often does not parse, and that is recorded per KG rather than
stopping the run; collection must not fail.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from serve_helpers import serve_unavailable_reason
from store_helpers import REPO

from s3kg_core.store.store import Store

pytestmark = pytest.mark.slow

PUBMEDQA = REPO.parent / "shared" / "data" / "pubmedqa" / "ori_pqal.json"


def _serve(env: dict[str, str]) -> tuple[subprocess.Popen[str], dict[str, str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "s3kg_core", "llm", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    exports: dict[str, str] = {}
    deadline = time.monotonic() + 600
    assert proc.stdout is not None
    while time.monotonic() < deadline and len(exports) < 2:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith("export "):
            key, value = line.removeprefix("export ").strip().split("=", 1)
            exports[key] = value
    return proc, exports


def test_readme_local_commands_run_the_whole_chain_with_smollm2(tmp_path):
    reason = serve_unavailable_reason()
    if reason:
        pytest.skip(reason)
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY",)}
    env["PYTHONPATH"] = str(REPO)
    proc, exports = _serve(env)
    db = tmp_path / "local.duckdb"
    try:
        assert set(exports) == {"OPENAI_BASE_URL", "S3KG_MODEL"}
        if PUBMEDQA.is_file():
            source = ["--pubmedqa", str(PUBMEDQA)]
        else:
            questions = REPO / "data" / "demo" / "questions.jsonl"
            mapping = "id=id,question=question,context=context,gold=gold_answer"
            source = ["--table", str(questions), "--map", mapping]
        run = subprocess.run(
            [sys.executable, "-m", "s3kg_core", "run", "--db", str(db), *source, "--limit", "5",
             "--extractor", "llm", "--extract-max-tokens", "384"],
            capture_output=True, text=True, env={**env, **exports}, timeout=1800,
        )  # fmt: skip
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    # 3: some KGs did not parse; 1: none did (SmolLM2 often runs past the token limit)
    assert run.returncode in (0, 1, 3), run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("run: collect from endpoint http://127.0.0.1:")
    assert "($OPENAI_BASE_URL), model " in lines[0] and "($S3KG_MODEL)" in lines[0]
    assert lines[1].startswith("run: extractor llm (--extractor llm, prompt joint)")
    assert "collect: 1 run(s): 5 asked (ok 5; 0 from the cache)" in run.stdout
    with Store(db).connect() as con:
        answers = con.execute(
            "SELECT status, latency_s, prompt_tokens, completion_tokens, model_id FROM answers"
        ).fetchall()
        names = con.execute("SELECT DISTINCT name FROM runs").fetchall()
        kgs = con.execute("SELECT status FROM kgs").fetchall()
        scored = con.execute("SELECT count(*) FROM scores").fetchone()
        tau = con.execute("SELECT count(*) FROM tau_results").fetchone()
    assert len(answers) == 5
    assert all(
        s == "ok" and lat > 0 and pt > 20 and 0 < ct <= 512 and m for s, lat, pt, ct, m in answers
    )
    assert ("smollm2-135m-instruct",) in names
    assert len(kgs) == 15  # every KG is stored: triples, or the reason it failed
    assert all(s in ("ok", "empty") or s.startswith("failed: ") for (s,) in kgs)
    extracted = sum(not s.startswith("failed") for (s,) in kgs) // 3
    assert scored == (extracted,) and tau is not None
    assert (tau[0] >= 1) == (extracted > 0)


def test_docs_local_model_path_makes_kgs_of_at_least_4_of_5_questions(tmp_path):
    """Issue 43 item 1: docs/llm.md's commands one by one (`s3kg llm serve`, `import
    pubmedqa`, `collect --limit 5`, `extract --extractor llm --max-tokens 384`, `score`) failed
    15 of 15 KGs at the token limit. With the reply's JSON schema asked for and honoured by
    the server, at least 4 of the 5 questions get non-empty KGs, and every one is scored."""
    reason = serve_unavailable_reason()
    if reason:
        pytest.skip(reason)
    if not PUBMEDQA.is_file():
        pytest.skip(f"the shared PubMedQA file is absent: {PUBMEDQA}")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY",)}
    env["PYTHONPATH"] = str(REPO)
    proc, exports = _serve(env)
    db = str(tmp_path / "local.duckdb")

    def s3kg(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "s3kg_core", *args, "--db", db],
            capture_output=True, text=True, env={**env, **exports}, timeout=1800,
        )  # fmt: skip

    try:
        assert set(exports) == {"OPENAI_BASE_URL", "S3KG_MODEL"}
        steps = [
            ("import", "pubmedqa", str(PUBMEDQA)),
            ("collect", "--limit", "5"),
            ("extract", "--extractor", "llm", "--max-tokens", "384"),
            ("score",),
        ]
        results = [s3kg(*step) for step in steps]
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    for step, result in zip(steps, results, strict=True):
        assert result.returncode in (0, 3), (step, result.stdout, result.stderr)
    assert "stopped at the token limit" not in results[2].stdout + results[2].stderr
    with Store(db).connect() as con:
        kgs = con.execute(
            "SELECT item_id, source, status, n_triples FROM kgs ORDER BY item_id, source"
        ).fetchall()
        scored = con.execute("SELECT count(*) FROM scores").fetchone()
    items = {item for item, *_ in kgs}
    made = {
        item
        for item in items
        if all(s == "ok" and n > 0 for i, _, s, n in kgs if i == item)
        and sum(i == item for i, *_ in kgs) == 3
    }
    assert len(items) == 5 and len(made) >= 4, kgs
    assert scored is not None and scored[0] >= 4
