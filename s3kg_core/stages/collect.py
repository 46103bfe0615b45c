"""Answer collection: prompt a model with each item's question and context, store the answers.

One run per dataset x model x temperature (found again on a rerun, so a killed collection
continues where it stopped), shown under a display name (``--name``; by default the model's
short name, never a whole path). Each answer is stored as it arrives, in a short transaction
(answers that arrive together share one), so a kill loses none that was paid for; an answer
that failed (HTTP error, timeout) is stored with its reason and asked again on the next run,
while answers that came back (even empty or refused ones) are kept. The response cache
means a rerun never pays twice for the same prompt.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ..errors import ConfigError
from ..extract.prompts import ANSWER_PROMPT_VERSION, answer_messages, truncate
from ..failures import StageFailures
from ..llm.client import ChatRequest, ChatResult, LLMClient
from ..names import clean_name
from ..progress import StageProgress
from ..store import queries
from ..store.records import AnswerRecord
from ..store.store import Store

__all__ = ["UNEXTRACTED", "CollectReport", "collect_answers", "collected_run"]

UNEXTRACTED = "none"  # a collected run's extractor until KGs are extracted


@dataclass
class CollectReport:
    """What a collection did, per run and in total."""

    run_ids: list[int] = field(default_factory=list)
    asked: int = 0
    already_done: int = 0
    cached: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    truncated: int = 0
    capped: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    sent: int = 0
    retries: int = 0
    timeouts: int = 0
    peak_in_flight: int = 0

    def summary(self) -> str:
        """One line for the command line."""
        parts = ", ".join(f"{k} {v}" for k, v in sorted(self.statuses.items())) or "nothing new"
        text = (
            f"{len(self.run_ids)} run(s): {self.asked} asked ({parts}; {self.cached} from the "
            f"cache), {self.already_done} already answered, {self.truncated} contexts truncated"
        )
        if self.capped:
            text += f", {self.capped} answers cut at --max-tokens"
        if self.sent:
            text += (
                f"; {self.sent} requests sent ({self.retries} retries, {self.timeouts} timeouts, "
                f"at most {self.peak_in_flight} in flight) in {self.seconds:.0f} s"
            )
        if self.failures:
            worst = sorted(self.failures.items(), key=lambda kv: -kv[1])[:3]
            text += "; failures: " + "; ".join(f"{n}x {reason}" for reason, n in worst)
            text += " (run the command again to retry them)"
        return text

    def stage_failures(self) -> StageFailures:
        """The requests that failed (stored with status ``error``, asked again on a rerun)."""
        return StageFailures(
            "collect",
            self.statuses.get("error", 0),
            self.asked,
            "requests",
            "the answer_status and answer_error columns of `s3kg export`, or the answers table",
        )


def collected_run(
    con: Any,
    dataset_id: int,
    model: str,
    temperature: float,
    settings: dict[str, Any],
    name: str | None = None,
) -> int:
    """The collected run of ``(dataset, model, temperature)``, created on first use.

    ``name`` names it (a found run is renamed); ``None`` keeps a found run's name and gives a
    new one the model's short name.

    Raises
    ------
    ConfigError
        If ``name`` breaks the rule of every name (:func:`s3kg_core.names.clean_name`).
    """
    name = clean_name(name, "a run's name") if name else None  # the rule of every name
    found = queries.find_run_by_source(con, dataset_id, model, temperature, "collect")
    if found is not None:
        if name:
            queries.set_run_name(con, found, name)
        return found
    return Store.ensure_run(
        con,
        dataset_id,
        model,
        temperature,
        UNEXTRACTED,
        source="collect",
        settings=settings,
        name=name,
    )


def collect_answers(
    store: Store,
    client: LLMClient,
    *,
    datasets: Sequence[str] | None = None,
    temperatures: Sequence[float] = (0.0,),
    seed: int | None = 0,
    max_input_chars: int = 12_000,
    max_tokens: int = 512,
    batch_items: int = 16,
    limit: int | None = None,
    refresh: bool = False,
    name: str | None = None,
    progress: StageProgress | None = None,
) -> CollectReport:
    """Ask ``client``'s model every question of ``datasets`` (default: all) at each temperature.

    Parameters
    ----------
    store
        The database, opened read-write.
    client
        The endpoint, model, limits and response cache.
    datasets
        Dataset names (default every dataset in the store).
    temperatures
        One run per temperature.
    seed
        Sent with every request (endpoints that honour it make answers repeatable).
    max_input_chars
        A longer context is cut at a word boundary; the answer is flagged ``truncated``.
    max_tokens
        The answer's length limit.
    batch_items
        Requests handed to the client at a time (each answer is stored as it arrives).
    limit
        Only the first ``limit`` items of each dataset (by id): a quick look at a large set.
    refresh
        Ask the items already answered too (``s3kg collect --refresh``); an answer that comes
        back different loses its KGs, scores and TAU results. Give a client made with
        ``refresh=True``, or it reads the same replies from its cache.
    name
        The runs' display name (``None``: the model's short name, or the name they have).
    progress
        ``progress("answers", done, total)``.

    Raises
    ------
    ConfigError
        If a named dataset is not in the store, or an option is out of range.
    EndpointError
        If the endpoint is down or refuses the key or model (answers stored so far are kept).
    """
    if batch_items < 1:
        raise ConfigError(f"batch_items must be >= 1; got {batch_items}")
    if not temperatures:
        raise ConfigError("give at least one temperature")
    for t in temperatures:
        if not 0.0 <= t <= 2.0:
            raise ConfigError(f"temperature must be in [0, 2]; got {t}")
    started = time.perf_counter()
    report = CollectReport()
    model = client.settings.model
    settings = {
        "endpoint": client.settings.endpoint,
        "seed": seed,
        "prompt_version": ANSWER_PROMPT_VERSION,
        "max_tokens": max_tokens,
        "max_input_chars": max_input_chars,
    }
    with store.transaction() as con:
        known = queries.dataset_ids(con)
        wanted = list(datasets) if datasets is not None else sorted(known)
        missing = [n for n in wanted if n not in known]
        if missing:
            raise ConfigError(
                f"dataset(s) {missing} not in {store.path}; it has {sorted(known) or 'none'} "
                "(import one with `s3kg import ...`)"
            )
        work: list[tuple[int, float, list[tuple[int, str, str | None]]]] = []
        for dataset in wanted:
            items = queries.dataset_items(con, known[dataset], limit)
            for t in temperatures:
                run = collected_run(con, known[dataset], model, t, settings, name)
                report.run_ids.append(run)
                done = set() if refresh else queries.answered_item_ids(con, run)
                todo = [(int(i), q or "", c) for i, q, c in items if int(i) not in done]
                report.already_done += len(items) - len(todo)
                work.append((run, float(t), todo))
    total = sum(len(todo) for _, _, todo in work)

    def keep(
        run: int, item_ids: list[int], cut: list[bool], arrived: list[tuple[int, ChatResult]]
    ) -> None:
        """Store the answers that just arrived, in one short transaction."""
        records = [_answer(report, item_ids[i], result, seed, cut[i]) for i, result in arrived]
        with store.transaction() as con:
            Store.put_answers(con, run, records)
        if progress is not None:
            progress("answers", report.asked, total)

    for run, temperature, todo in work:
        for lo in range(0, len(todo), batch_items):
            batch = todo[lo : lo + batch_items]
            requests, cut = [], []
            for _item, question, context in batch:
                text, was_cut = truncate(context or "", max_input_chars)
                cut.append(was_cut)
                requests.append(
                    ChatRequest(
                        messages=answer_messages(question, text if context is not None else None),
                        prompt_version=ANSWER_PROMPT_VERSION,
                        temperature=temperature,
                        seed=seed,
                        max_tokens=max_tokens,
                    )
                )
            item_ids = [item for item, _q, _c in batch]
            client.chat_many(requests, on_results=partial(keep, run, item_ids, cut))
    report.seconds = time.perf_counter() - started
    stats = client.stats
    report.sent, report.retries, report.timeouts = stats.sent, stats.retries, stats.timeouts
    report.peak_in_flight = stats.peak_in_flight
    return report


def _answer(
    report: CollectReport, item: int, result: ChatResult, seed: int | None, was_cut: bool
) -> AnswerRecord:
    """The stored answer of ``item``, counted in ``report``."""
    report.asked += 1
    report.cached += result.cached
    report.truncated += was_cut
    report.capped += result.finish_reason == "length"
    report.statuses[result.status] = report.statuses.get(result.status, 0) + 1
    if result.status == "error":
        reason = result.error or "unknown error"
        report.failures[reason] = report.failures.get(reason, 0) + 1
    return AnswerRecord(
        item,
        result.text,
        seed=seed,
        latency_s=result.latency_s,
        prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens,
        error=result.error,
        status=result.status,
        truncated=was_cut,
        model_id=result.model_id,
        finish_reason=result.finish_reason,
    )
