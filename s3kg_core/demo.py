"""The embedded demo database: the project's own demo set, answered, extracted, scored.

``data/demo/questions.jsonl`` holds questions with a context paragraph and a long gold answer,
written for this project; ``data/demo/answers.jsonl`` holds a real model's answers to them
(SmolLM2-135M-Instruct at two temperatures, generated once by ``scripts/make_demo_answers.py``
with the project's own ``collect``; each line names the model and its settings).
:func:`build_demo` turns them into a database: import, offline KG extraction, scoring with the
packaged MiniLM and TAU (the chain of :func:`~s3kg_core.stages.run.run_pipeline`), then GraphEval
hallucination detection with the offline
:class:`~s3kg_core.grapheval.checkers.support.SupportChecker` (so the dashboard's Hallucinations
page has content). It writes a temporary file and renames it into place, so an interrupted
build never leaves a half-built database behind.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import InputFormatError
from .progress import StageProgress

if TYPE_CHECKING:
    from .stages.importing import ImportReport
    from .store.store import Store

__all__ = ["DEMO_DIR", "DemoReport", "build_demo"]

DEMO_DIR = Path(__file__).resolve().parents[1] / "data" / "demo"
_QUESTION_MAP = {"id": "id", "question": "question", "context": "context", "gold": "gold_answer"}
_ANSWER_KEYS = ("id", "model", "temperature", "answer")


@dataclass
class DemoReport:
    """What the demo build produced."""

    path: Path
    items: int
    runs: int
    answers: int
    scored: int
    tau: int
    seconds: float
    grapheval: int = 0
    inconsistent: int = 0
    factuality: int = 0


def _read_answers(path: Path) -> list[dict[str, Any]]:
    rows = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputFormatError(f"{path}:{n}: not JSON ({exc})") from exc
            missing = [k for k in _ANSWER_KEYS if k not in row]
            if missing:
                raise InputFormatError(
                    f"{path}:{n}: missing {missing}; expected keys {list(_ANSWER_KEYS)}, "
                    f"found {sorted(row)}"
                )
            rows.append(row)
    return rows


def _import_demo(
    store: Store,
    questions: Path,
    answers_file: Path,
    runs: dict[tuple[str, float], list[dict[str, Any]]],
) -> list[ImportReport]:
    """Import the questions, then the stored answers as one run per model x temperature."""
    from .stages.collect import UNEXTRACTED
    from .stages.importing import ImportReport, import_table
    from .store import queries
    from .store.records import AnswerRecord

    imported = import_table(store, questions, _QUESTION_MAP, dataset="demo")
    reports = [imported]
    with store.transaction() as con:
        ids = queries.dataset_item_ids(con, "demo")
        unknown = sorted({str(r["id"]) for rows in runs.values() for r in rows} - set(ids))
        if unknown:
            raise InputFormatError(f"{answers_file}: answers to unknown question ids {unknown[:5]}")
        dataset_id = queries.dataset_id(con, "demo")
        if dataset_id is None:
            raise InputFormatError(f"{questions}: no demo dataset was imported")
        for (model, temperature), rows in runs.items():
            settings = {
                k: v
                for k, v in rows[0].items()
                if k
                not in (
                    "id",
                    "answer",
                    "status",
                    "error",
                    "latency_s",
                    "prompt_tokens",
                    "completion_tokens",
                    "truncated",
                    "temperature",
                )
            }
            run = store.ensure_run(
                con,
                dataset_id,
                model,
                temperature,
                UNEXTRACTED,
                source=f"demo/{answers_file.name}",
                settings=settings,
            )
            written = store.put_answers(
                con,
                run,
                [
                    AnswerRecord(
                        ids[str(r["id"])],
                        r["answer"],
                        seed=r.get("seed"),
                        latency_s=r.get("latency_s"),
                        prompt_tokens=r.get("prompt_tokens"),
                        completion_tokens=r.get("completion_tokens"),
                        error=r.get("error"),
                        status=r.get("status"),
                        truncated=bool(r.get("truncated", False)),
                    )
                    for r in rows
                ],
            )
            reports.append(
                ImportReport(
                    source=answers_file.name,
                    dataset="demo",
                    model=model,
                    run_id=run,
                    answers=written,
                )
            )
    return reports


def build_demo(
    path: str | Path,
    demo_dir: str | Path = DEMO_DIR,
    *,
    encoder: Any = "minilm",
    progress: StageProgress | None = None,
) -> DemoReport:
    """Build the demo database at ``path`` from ``demo_dir`` (replacing any file there).

    Parameters
    ----------
    path
        The database file to create.
    demo_dir
        A folder with ``questions.jsonl`` and ``answers.jsonl``, and optionally
        ``factuality_eval.json`` (factuality judge evaluations, stored as they are).
    encoder
        The sentence encoder for scoring (name, path or encoder object).
    progress
        ``progress(stage, done, total)`` for the extraction, scoring and detection stages.

    Returns
    -------
    DemoReport
        Counts and the build time; ``grapheval`` answers checked by the offline support
        checker, ``inconsistent`` of them flagged.

    Raises
    ------
    InputFormatError
        If a demo file is missing or malformed.

    Examples
    --------
    >>> build_demo("/tmp/demo.duckdb").answers  # doctest: +SKIP
    60
    """
    from .bench.demo_results import BENCH_FILE, store_demo_bench
    from .encoders.registry import load_encoder
    from .extract.factory import make_extractor
    from .factuality.results import read_evaluations, save_evaluation
    from .grapheval.checkers.support import SupportChecker
    from .grapheval.results import detect_store
    from .stages.run import TauSettings, run_pipeline
    from .store import queries
    from .store.store import Store

    started = time.perf_counter()
    path, demo_dir = Path(path), Path(demo_dir)
    questions, answers_file = demo_dir / "questions.jsonl", demo_dir / "answers.jsonl"
    for needed in (questions, answers_file):
        if not needed.is_file():
            raise InputFormatError(f"the demo needs {needed}, which does not exist")
    answers = _read_answers(answers_file)
    runs: dict[tuple[str, float], list[dict[str, Any]]] = {}
    for row in answers:
        runs.setdefault((str(row["model"]), float(row["temperature"])), []).append(row)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".building")
    os.close(fd)
    os.unlink(tmp_name)  # DuckDB creates the file itself
    tmp = Path(tmp_name)
    try:
        store = Store(tmp)
        chain = run_pipeline(
            store,
            imports=[
                partial(_import_demo, questions=questions, answers_file=answers_file, runs=runs)
            ],
            extractor=make_extractor("offline"),
            encoder=encoder,
            tau=TauSettings(fraction=0.05),
            progress=progress,
        )
        checker = SupportChecker(load_encoder(encoder) if isinstance(encoder, str) else encoder)
        with store.connect() as con:
            run_ids = queries.run_ids(con)
        detections = [detect_store(store, run_id, checker, progress=progress) for run_id in run_ids]
        evaluations = demo_dir / "factuality_eval.json"
        factuality = read_evaluations(evaluations) if evaluations.exists() else []
        for evaluation in reversed(factuality):  # the file's first is saved last: newest,
            save_evaluation(store, evaluation)  # so the Factuality page opens on it
        store_demo_bench(store, demo_dir / BENCH_FILE.name)  # the project's benchmark figures
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        Path(f"{tmp}.wal").unlink(missing_ok=True)
        raise
    return DemoReport(
        path=path,
        items=chain.imports[0].items,
        runs=len(runs),
        answers=len(answers),
        scored=chain.score.scored,
        tau=chain.tau.analysed if chain.tau is not None else 0,
        seconds=time.perf_counter() - started,
        grapheval=sum(d.written for d in detections),
        inconsistent=sum(d.inconsistent for d in detections),
        factuality=len(factuality),
    )
