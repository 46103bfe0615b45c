"""The extraction stage: stored answers, gold answers and contexts become stored KGs.

It works on collected runs (extractor ``none`` until their first extraction) and resumes runs
already extracted with the same extractor: items whose three KGs are stored are skipped, items
whose extraction failed (HTTP error, output beyond repair) are tried again.
Extracting a run again with another extractor copies the run (same dataset, model,
temperature, answers) under the new extractor, so both versions stay comparable. Writing an
item's KGs removes its stale scores and TAU results when they changed
(:meth:`~s3kg_core.store.store.Store.put_kgs`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ..extract.base import Extractor, ItemTexts, TextKG
from ..extract.prompts import SINGLE_PROMPT_VERSION
from ..failures import StageFailures
from ..progress import StageProgress
from ..store import queries
from ..store.records import KGRecord
from ..store.store import Store
from .collect import UNEXTRACTED

__all__ = ["ExtractReport", "extract_command", "extract_store"]


def extract_command(extractor: str, runs: Sequence[int]) -> str:
    """The ``s3kg extract`` command line that extracts ``runs`` with the extractor named so.

    Examples
    --------
    >>> extract_command("llm:smollm2:joint-kg-v1", [1, 3])
    's3kg extract --extractor llm --run 1 --run 3'
    >>> extract_command("llm:m:single-kg-v1", [2])
    's3kg extract --extractor llm --prompt single --run 2'
    >>> extract_command("offline:en_core_web_sm", [4])
    's3kg extract --extractor offline --run 4'
    """
    kind = extractor.split(":")[0]
    words = ["s3kg extract", f"--extractor {kind}"]
    if kind == "llm" and extractor.endswith(f":{SINGLE_PROMPT_VERSION}"):
        words.append("--prompt single")
    words += [f"--run {run}" for run in runs]
    return " ".join(words)


@dataclass
class ExtractReport:
    """What an extraction did."""

    run_ids: list[int] = field(default_factory=list)
    items: int = 0
    already_done: int = 0
    skipped_failed_answers: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    dropped_triples: int = 0
    truncated: int = 0
    seconds: float = 0.0
    extractor: str = ""
    failed_elsewhere: dict[int, tuple[str, int, int]] = field(default_factory=dict)
    """Runs left alone, extracted with another extractor, whose KGs failed: ``{run:
    (extractor, failed KGs, KGs)}`` (only when no ``run_ids`` were given)."""

    def notes(self) -> list[str]:
        """A line per run left alone although its KGs failed, with the command that extracts it.

        Examples
        --------
        >>> report = ExtractReport(extractor="offline:sm",
        ...                        failed_elsewhere={1: ("llm:smol:joint-kg-v1", 15, 15)})
        >>> note = report.notes()[0]
        >>> note[:64]
        'run 1 (llm:smol:joint-kg-v1: 15 of 15 KGs failed) is left as it '
        >>> note[-51:]
        'beside it: s3kg extract --extractor offline --run 1'
        """
        return [
            f"run {run} ({other}: {failed} of {total} KGs failed) is left as it is: without "
            f"--run, extract takes only the runs not extracted yet or extracted with "
            f"{self.extractor}. To extract run {run} with {self.extractor} as a new run beside "
            f"it: {extract_command(self.extractor, [run])}"
            for run, (other, failed, total) in sorted(self.failed_elsewhere.items())
        ]

    def summary(self) -> str:
        """One line for the command line."""
        parts = ", ".join(f"{k} {v}" for k, v in sorted(self.statuses.items())) or "nothing new"
        return (
            f"{len(self.run_ids)} run(s): {self.items} items extracted (KGs: {parts}), "
            f"{self.already_done} already done, {self.skipped_failed_answers} skipped (answer "
            f"failed; collect again), {self.dropped_triples} malformed triples dropped, "
            f"{self.truncated} texts truncated"
        )

    def stage_failures(self) -> StageFailures:
        """The KGs whose extraction failed (stored as ``failed: ...``, tried again on a rerun)."""
        return StageFailures(
            "extract",
            self.statuses.get("failed", 0),
            sum(self.statuses.values()),
            "KGs",
            "the gold_kg_status, answer_kg_status and context_kg_status columns of "
            "`s3kg export`, or the kgs table's status",
        )


def _target_runs(con: Any, extractor: str, run_ids: Sequence[int] | None) -> list[int]:
    """Runs to extract into: existing ones, or copies made for another extractor."""
    rows = queries.run_rows(con)
    by_id = {int(r[0]): r for r in rows}
    if run_ids is None:
        return [int(r[0]) for r in rows if r[4] in (UNEXTRACTED, extractor)]
    unknown = [r for r in run_ids if r not in by_id]
    if unknown:
        raise ConfigError(f"no run(s) {unknown}; the store has runs {sorted(by_id)}")
    out = []
    for run in run_ids:
        _, dataset, model, temperature, current, source, settings = by_id[run]
        if current in (UNEXTRACTED, extractor):
            out.append(run)
            continue
        copy = Store.ensure_run(
            con,
            dataset,
            model,
            temperature,
            extractor,
            source=source,
            settings=None,
            name=queries.run_name(con, run),
        )
        queries.set_run_settings(con, copy, settings)
        queries.copy_answers(con, run, copy)
        out.append(copy)
    return out


def extract_store(
    store: Store,
    extractor: Extractor,
    *,
    run_ids: Sequence[int] | None = None,
    batch_items: int = 16,
    refresh: bool = False,
    progress: StageProgress | None = None,
) -> ExtractReport:
    """Extract the gold, answer and context KGs of every answer of the target runs.

    Parameters
    ----------
    store
        The database, opened read-write.
    extractor
        An :class:`~s3kg_core.extract.Extractor` (offline or LLM).
    run_ids
        These runs (a run extracted with another extractor is copied first); default: every
        run not yet extracted (collected, or imported without KGs) or extracted with this
        extractor.
    batch_items
        Items per write transaction.
    refresh
        Extract the items already done too (``s3kg extract --refresh``). Give an LLM extractor
        a client made with ``refresh=True``, or it reads the same replies from its cache.
    progress
        ``progress("items", done, total)``.

    Raises
    ------
    EndpointError
        From an LLM extractor whose endpoint is down (KGs stored so far are kept).
    """
    if batch_items < 1:
        raise ConfigError(f"batch_items must be >= 1; got {batch_items}")
    started = time.perf_counter()
    report = ExtractReport(extractor=extractor.name)
    with store.transaction() as con:
        runs = _target_runs(con, extractor.name, run_ids)
        report.run_ids = runs
        if run_ids is None:
            extractors = {int(r[0]): str(r[4]) for r in queries.run_rows(con)}
            report.failed_elsewhere = {
                run: (extractors[run], failed, total)
                for run, (failed, total) in queries.failed_kg_counts(con).items()
                if run not in runs and extractors.get(run) not in (None, UNEXTRACTED)
            }
        work: list[tuple[int, int, ItemTexts]] = []
        for run in runs:
            rows = queries.answers_for_extraction(con, run)
            for item, answer, status, gold, context, n_kgs in rows:
                if status == "error":
                    report.skipped_failed_answers += 1
                elif n_kgs >= 3 and not refresh:
                    report.already_done += 1
                else:
                    work.append(
                        (run, int(item), ItemTexts(gold or "", answer or "", context or ""))
                    )
    held = getattr(extractor, "deferred_cache", None)
    for lo in range(0, len(work), batch_items):
        batch = work[lo : lo + batch_items]
        # An LLM extractor caches a batch's replies only once its KGs are stored: a reply
        # whose KGs the store rejects is asked again on the next run, never replayed.
        with held() if held is not None else contextlib.nullcontext():
            extracted = extractor.extract([texts for _, _, texts in batch])
            records = []
            for (run, item, _), kgs in zip(batch, extracted, strict=True):
                for source, kg in kgs.items():
                    records.append(_record(run, item, source, kg, report))
            with store.transaction() as con:
                Store.put_kgs(con, records)  # drops the scores and TAU results of changed KGs
                queries.set_run_extractor(
                    con, sorted({run for run, _, _ in batch}), extractor.name, current=UNEXTRACTED
                )
        report.items += len(batch)
        if progress is not None:
            progress("items", report.items, len(work))
    report.seconds = time.perf_counter() - started
    return report


def _record(run: int, item: int, source: str, kg: TextKG, report: ExtractReport) -> KGRecord:
    status = kg.status.split(":")[0] if kg.status.startswith("failed") else kg.status
    report.statuses[status] = report.statuses.get(status, 0) + 1
    report.dropped_triples += kg.n_dropped
    report.truncated += kg.truncated
    return KGRecord(run, item, source, kg.triples, kg.status, kg.n_dropped, kg.truncated)
