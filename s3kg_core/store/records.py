"""The rows the stages write: items, answers, KGs and score components, as frozen dataclasses."""

from __future__ import annotations

from dataclasses import dataclass

from ..kg import SOURCES, Triple

__all__ = ["SOURCES", "AnswerRecord", "ItemRecord", "KGRecord", "ScoreRecord", "short_name"]


def short_name(model: str) -> str:
    """A run's default display name: the last part of a model path or id, never a whole path.

    Migration 5 fills the names of older runs with the same rule.

    Examples
    --------
    >>> short_name("/root/.cache/s3kg/models/smollm2-135m-instruct/")
    'smollm2-135m-instruct'
    >>> short_name("HuggingFaceTB/SmolLM2-135M-Instruct"), short_name("gpt-4o-mini")
    ('SmolLM2-135M-Instruct', 'gpt-4o-mini')
    """
    stripped = model.rstrip("/").rstrip("\\")
    last = stripped.replace("\\", "/").rsplit("/", 1)[-1]
    return last or model


@dataclass(frozen=True)
class ItemRecord:
    """A question with its context and gold answer, identified within its dataset."""

    ext_id: str
    question: str | None = None
    context: str | None = None
    gold_answer: str | None = None


@dataclass(frozen=True)
class AnswerRecord:
    """A model's answer to an item, with what the collection recorded about it."""

    item_id: int
    answer: str | None
    seed: int | None = None
    latency_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    error: str | None = None
    status: str | None = None
    truncated: bool = False
    model_id: str | None = None
    finish_reason: str | None = None

    def __post_init__(self) -> None:
        if self.status is None:
            status = (
                "error" if self.error else "ok" if self.answer and self.answer.strip() else "empty"
            )
            object.__setattr__(self, "status", status)


@dataclass(frozen=True)
class KGRecord:
    """One stored KG: ``status`` is ``ok``, ``empty``, ``unparseable...`` or ``failed: ...``."""

    run_id: int
    item_id: int
    source: str
    triples: tuple[Triple, ...]
    status: str = "ok"
    n_dropped: int = 0
    truncated: bool = False


@dataclass(frozen=True)
class ScoreRecord:
    """GoldSim and CtxSim components of one answer under one signature."""

    run_id: int
    item_id: int
    signature: str
    mode: str
    alpha: float
    gold_s_wl: float
    gold_s_sbert: float
    gold_status: str
    ctx_s_wl: float
    ctx_s_sbert: float
    ctx_status: str
    gold_detail: str | None = None
    ctx_detail: str | None = None
