"""The embedded demo database: the project's own demo set, answered, extracted, scored.

``data/demo/questions.jsonl`` holds questions with a context paragraph and a long gold answer,
written for this project; ``data/demo/answers.jsonl`` holds a real model's answers to them
(SmolLM2-135M-Instruct at two temperatures, generated once by ``scripts/make_demo_answers.py``
with the project's own ``collect``; each line names the model and its settings).
:func:`build_demo` turns them into a database: import, offline KG extraction, scoring with the
packaged MiniLM and TAU (the chain of :func:`~s3kg_core.stages.run.run_pipeline`), then GraphEval
hallucination detection with the offline
:class:`~s3kg_core.grapheval.checkers.support.SupportChecker` (so the dashboard's Hallucinations
page has content). It writes a temporary file and installs it under its name only if no file
has that name (a hard link, which never replaces anything), so an interrupted build never leaves
a half-built database behind, and two builds at once (two ``s3kg dashboard --demo`` on one cache
folder) never replace a database in use: the later one discards its own build and the file the
first installed stays, with any verdict saved into it meanwhile.

``data/demo/kgs.jsonl`` holds the offline extractor's KGs of every demo text, recorded by
``scripts/make_demo_kgs.py`` with the extractor's fingerprint (:mod:`s3kg_core.extract.recorded`).
While the fingerprint is the live extractor's, the build takes its KGs from there and loads no
spaCy; they are the KGs extraction gives (a test builds both ways and compares), and a stale
file is ignored (the build extracts).

The dashboard builds with ``grapheval=False`` so that its first page shows sooner; the database
records the step as pending (meta key :data:`PENDING_KEY`) and the Hallucinations page runs
:func:`finish_demo` on its first visit.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import InputFormatError
from .progress import StageProgress
from .resources import package_path

if TYPE_CHECKING:
    from .grapheval.results import DetectReport
    from .stages.importing import ImportReport
    from .store.store import Store

__all__ = [
    "DEMO_DIR",
    "KGS_FILE",
    "PENDING_KEY",
    "DemoReport",
    "build_demo",
    "demo_texts",
    "finish_demo",
    "pending_steps",
]

DEMO_DIR = package_path("s3kg_core", "demo_data")
"""The demo set: ``data/demo/`` of the repository, shipped in the package as ``demo_data``."""
KGS_FILE = "kgs.jsonl"
"""The recorded offline KGs of the demo's texts, in the demo folder."""
PENDING_KEY = "demo_pending"
"""Meta key: the build steps not done yet (comma-separated; absent or empty when none)."""
_QUESTION_MAP = {"id": "id", "question": "question", "context": "context", "gold": "gold_answer"}
_ANSWER_KEYS = ("id", "model", "temperature", "answer")


@dataclass
class DemoReport:
    """What the demo build produced.

    ``kgs`` says where the KGs came from: ``"recorded"`` (:data:`KGS_FILE`) or
    ``"extracted"``; ``pending`` names the steps left to :func:`finish_demo`.
    """

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
    kgs: str = "extracted"
    pending: tuple[str, ...] = ()
    installed: bool = True


def _install(tmp: Path, path: Path) -> bool:
    """Give the finished build ``tmp`` the name ``path`` unless a file has it; whether it did.

    A hard link fails when ``path`` exists, so a database another build installed (and a person
    wrote to) is never replaced. On a file system without hard links an exclusively created
    placeholder claims the name first. ``tmp`` is gone afterwards either way.
    """
    try:
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        except OSError:  # no hard links here: claim the name, then move the build onto the claim
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            except FileExistsError:
                return False
            os.replace(tmp, path)
        return True
    finally:
        tmp.unlink(missing_ok=True)
        Path(f"{tmp}.wal").unlink(missing_ok=True)


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


def _runs_of(answers: list[dict[str, Any]]) -> dict[tuple[str, float], list[dict[str, Any]]]:
    runs: dict[tuple[str, float], list[dict[str, Any]]] = {}
    for row in answers:
        runs.setdefault((str(row["model"]), float(row["temperature"])), []).append(row)
    return runs


def demo_texts(demo_dir: str | Path = DEMO_DIR) -> list[str]:
    """Every text the demo build extracts KGs from, exactly as the extraction stage reads it.

    The demo is imported into a scratch database and its gold answers, model answers and
    contexts are read back, so the texts are those the build hands to the extractor.

    Examples
    --------
    >>> len(demo_texts()) > 60
    True
    """
    from .store import queries
    from .store.store import Store

    demo_dir = Path(demo_dir)
    questions, answers_file = demo_dir / "questions.jsonl", demo_dir / "answers.jsonl"
    texts: list[str] = []
    with tempfile.TemporaryDirectory(prefix="s3kg_demo_texts_") as tmp:
        store = Store(Path(tmp) / "texts.duckdb")
        _import_demo(store, questions, answers_file, _runs_of(_read_answers(answers_file)))
        with store.connect() as con:
            for run in queries.run_ids(con):
                for _, answer, _, gold, context, _ in queries.answers_for_extraction(con, run):
                    texts += [gold or "", answer or "", context or ""]
    return list(dict.fromkeys(texts))


def _demo_extractor(demo_dir: Path, use_recorded: bool) -> tuple[Any, str]:
    """The recorded KGs when current (spaCy loads only for a text they lack), else spaCy."""
    from .extract.factory import make_extractor
    from .extract.recorded import RecordedExtractor, load_recorded

    live = make_extractor("offline")
    if use_recorded and (demo_dir / KGS_FILE).is_file():
        try:
            recorded = load_recorded(demo_dir / KGS_FILE, live)
        except InputFormatError:
            pass  # stale or malformed: extract, as a build without the file does
        else:
            return RecordedExtractor(recorded, fallback=lambda: live), "recorded"
    return live, "extracted"


class _Steps:
    """Says each step as it starts; the chain's finished stages name the next one."""

    def __init__(self, on_step: Callable[[str], None] | None, nxt: dict[str, str]) -> None:
        self.on_step = on_step
        self.next = nxt

    def say(self, text: str) -> None:
        if self.on_step is not None:
            self.on_step(text)

    def stage_done(self, line: str) -> None:
        stage = line.split(":", 1)[0].split(" (", 1)[0]
        if stage in self.next:
            self.say(self.next.pop(stage))


def build_demo(
    path: str | Path,
    demo_dir: str | Path = DEMO_DIR,
    *,
    encoder: Any = "minilm",
    progress: StageProgress | None = None,
    on_step: Callable[[str], None] | None = None,
    use_recorded_kgs: bool = True,
    grapheval: bool = True,
) -> DemoReport:
    """Build the demo database at ``path`` from ``demo_dir``; never replaces a file there.

    The build is written to a temporary file beside ``path`` and installed under ``path`` only
    if no file has that name by then; otherwise (another build finished first) the file there
    is kept, with whatever was saved into it, this build is discarded and the report says
    ``installed=False``.

    Parameters
    ----------
    path
        The database file to create.
    demo_dir
        A folder with ``questions.jsonl`` and ``answers.jsonl``, and optionally
        ``factuality_eval.json`` (factuality judge evaluations, stored as they are) and
        :data:`KGS_FILE` (recorded KGs).
    encoder
        The sentence encoder for scoring (name, path or encoder object).
    progress
        ``progress(stage, done, total)`` for the extraction, scoring and detection stages.
    on_step
        Called with a one-line description of each step as it starts (the dashboard's first
        start shows them).
    use_recorded_kgs
        Take the KGs from :data:`KGS_FILE` when it is current (the KGs the offline extractor
        gives); ``False`` extracts every text with spaCy.
    grapheval
        Run GraphEval detection now; ``False`` leaves it to :func:`finish_demo` (recorded as
        pending in the database).

    Returns
    -------
    DemoReport
        Counts and the build time; ``grapheval`` answers checked by the offline support
        checker, ``inconsistent`` of them flagged; ``installed`` is ``False`` when a file was
        already at ``path`` (kept; this build discarded).

    Raises
    ------
    InputFormatError
        If a demo file is missing or malformed.

    Examples
    --------
    >>> build_demo("/tmp/demo.duckdb").answers  # doctest: +SKIP
    60
    """
    from .evaluation.demo_results import BENCH_FILE, store_demo_bench
    from .factuality.results import read_evaluations, save_evaluation
    from .stages.run import TauSettings, run_pipeline
    from .store.store import Store

    started = time.perf_counter()
    path, demo_dir = Path(path), Path(demo_dir)
    questions, answers_file = demo_dir / "questions.jsonl", demo_dir / "answers.jsonl"
    for needed in (questions, answers_file):
        if not needed.is_file():
            raise InputFormatError(f"the demo needs {needed}, which does not exist")
    answers = _read_answers(answers_file)
    runs = _runs_of(answers)
    n_items = len({str(r["id"]) for r in answers})
    extractor, kgs_from = _demo_extractor(demo_dir, use_recorded_kgs)
    encoder_name = encoder if isinstance(encoder, str) else getattr(encoder, "name", "the encoder")
    steps = _Steps(
        on_step,
        {
            "import": (
                f"KGs: the offline extractor's, recorded in {KGS_FILE}"
                if kgs_from == "recorded"
                else "Extracting KGs with spaCy (the offline extractor)"
            ),
            "extract": f"Loading {encoder_name} and scoring {len(answers)} answers "
            "(GoldSim, CtxSim, CUS)",
            "score": "TAU: explaining the lowest-scoring answers",
        },
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".building")
    os.close(fd)
    os.unlink(tmp_name)  # DuckDB creates the file itself
    tmp = Path(tmp_name)
    try:
        store = Store(tmp)
        steps.say(f"Importing {n_items} demo questions and {len(answers)} answers")
        chain = run_pipeline(
            store,
            imports=[
                partial(_import_demo, questions=questions, answers_file=answers_file, runs=runs)
            ],
            extractor=extractor,
            encoder=encoder,
            tau=TauSettings(),
            progress=progress,
            on_stage=steps.stage_done,
        )
        steps.say("Factuality evaluations")
        evaluations = demo_dir / "factuality_eval.json"
        factuality = read_evaluations(evaluations) if evaluations.exists() else []
        for evaluation in reversed(factuality):  # the file's first is saved last: newest,
            save_evaluation(store, evaluation)  # so the Factuality page opens on it
        store_demo_bench(store, demo_dir / BENCH_FILE.name)  # the project's benchmark figures
        with store.transaction() as con:
            Store.set_meta(con, PENDING_KEY, "" if grapheval else "grapheval")
        detections: list[DetectReport] = []
        if grapheval:
            steps.say("GraphEval: checking every answer's triples against its context")
            detections = finish_demo(store, encoder=encoder, progress=progress)
        installed = _install(tmp, path)
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
        kgs=kgs_from,
        pending=() if grapheval else ("grapheval",),
        installed=installed,
    )


def pending_steps(store: Store) -> tuple[str, ...]:
    """The demo build's steps still to do (``("grapheval",)`` after ``grapheval=False``).

    Examples
    --------
    >>> import os, tempfile
    >>> from s3kg_core.store.store import Store
    >>> pending_steps(Store(os.path.join(tempfile.mkdtemp(), "x.duckdb")))
    ()
    """
    with store.connect() as con:
        value = store.get_meta(con, PENDING_KEY) or ""
    return tuple(s for s in value.split(",") if s)


def finish_demo(
    store: Store, *, encoder: Any = "minilm", progress: StageProgress | None = None
) -> list[DetectReport]:
    """GraphEval detection of every run with the offline support checker; clears the pending step.

    Resumable: answers already checked are skipped, so a finish killed halfway and run again
    does the rest.

    Returns
    -------
    list of DetectReport
        One report per run.

    Examples
    --------
    >>> build_demo("/tmp/demo.duckdb", grapheval=False).pending  # doctest: +SKIP
    ('grapheval',)
    >>> [r.written for r in finish_demo(Store("/tmp/demo.duckdb"))]  # doctest: +SKIP
    [30, 30]
    """
    from .encoders.registry import load_encoder
    from .grapheval.checkers.support import SupportChecker
    from .grapheval.results import detect_store
    from .store import queries

    checker = SupportChecker(load_encoder(encoder) if isinstance(encoder, str) else encoder)
    with store.connect() as con:
        run_ids = queries.run_ids(con)
    reports = [detect_store(store, run_id, checker, progress=progress) for run_id in run_ids]
    with store.transaction() as con:
        store.set_meta(con, PENDING_KEY, "")
    return reports
