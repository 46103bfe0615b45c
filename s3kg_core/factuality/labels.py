"""What the target LLM says about each statement: TRUE, FALSE, or IDK (I don't know).

Two ways to ask, both with the prompt of :mod:`.prompts`:

* :func:`label_with_client` sends it to an OpenAI-compatible endpoint through
  :class:`s3kg_core.llm.client.LLMClient` (cached, rate-limited, retried) and parses the reply
  strictly: ``True``, ``False`` or ``I don't know`` (case, surrounding quotes or spaces and one
  final full stop aside). Anything else is recorded as ``unparsable`` with the raw reply, never
  guessed; a failed request is recorded as ``error``.
* :class:`LocalLabeler` scores the three answers after the prompt (chat template applied)
  with a local transformers model and takes the most likely one: no sampling, so the same
  model gives the same labels. By default an answer's score is the log-probability of its
  first token as the next token (one forward pass per statement, what one step of greedy
  decoding compares); ``scoring="full"`` scores each answer's whole log-likelihood (mean or
  sum over its tokens). ``calibrate=True`` subtracts a content-free input's scores first.

Both return the statements table with the columns of :data:`LABEL_COLUMNS` added.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..errors import FactualityError
from ..llm.client import ChatRequest, LLMClient
from ..progress import Progress
from .prompts import ANSWER_OPTIONS, LABEL_PROMPT_VERSION, label_messages, label_prompt_text

__all__ = [
    "LABELS",
    "LABEL_COLUMNS",
    "LocalLabeler",
    "label_counts",
    "label_with_client",
    "parse_label",
]

LABELS = ("TRUE", "FALSE", "IDK")
"""The label set, in class-index order (TRUE = 0, FALSE = 1, IDK = 2)."""

LABEL_COLUMNS = ("llm_label", "label_status", "label_source", "raw_answer")
"""Columns added by labelling: the label (``None`` unless ``label_status == "ok"``); ``ok``,
``unparsable``, ``empty``, ``refused`` or ``error``; ``endpoint:<model>`` or
``local:<folder name>``; the reply text (the endpoint's, or the best option locally)."""

_ANSWERS = {
    "true": "TRUE",
    "false": "FALSE",
    "i don't know": "IDK",
    "i do not know": "IDK",
}


def parse_label(text: str | None) -> str | None:
    """The label of a reply, or ``None`` when it is not exactly one of the three answers.

    Examples
    --------
    >>> replies = ["True", " false. ", "'I don't know'", "Yes", "True, because"]
    >>> [parse_label(t) for t in replies]
    ['TRUE', 'FALSE', 'IDK', None, None]
    """
    if text is None:
        return None
    cleaned = text.strip().strip("\"'`*").strip().replace("\u2019", "'")
    cleaned = re.sub(r"\.$", "", cleaned).strip().lower()
    return _ANSWERS.get(cleaned)


def label_counts(table: pd.DataFrame) -> dict[str, int]:
    """How many statements got each label, and how many none (by status).

    Examples
    --------
    >>> label_counts(pd.DataFrame({"llm_label": ["TRUE", None],
    ...                            "label_status": ["ok", "unparsable"]}))
    {'TRUE': 1, 'FALSE': 0, 'IDK': 0, 'unparsable': 1}
    """
    counts = {label: int((table["llm_label"] == label).sum()) for label in LABELS}
    for status, n in (
        table.loc[table["label_status"] != "ok", "label_status"].value_counts().items()
    ):
        counts[str(status)] = int(n)
    return counts


def label_with_client(
    table: pd.DataFrame,
    client: LLMClient,
    *,
    seed: int | None = 0,
    max_tokens: int = 8,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """Ask an OpenAI-compatible endpoint about every statement (temperature 0).

    Parameters
    ----------
    table
        Statements (a ``statement`` column at least).
    client
        The endpoint client; its cache makes a rerun free, but for the replies that were
        empty, refused or failed (never cached: asked again).
    seed
        Sent with every request.
    max_tokens
        Reply length limit (the answers are one to four words).
    progress
        Called with (done, total).

    Returns
    -------
    pandas.DataFrame
        A copy of ``table`` with :data:`LABEL_COLUMNS`.

    Raises
    ------
    FactualityError
        If ``table`` has no ``statement`` column.
    EndpointError
        If the endpoint is unreachable or refuses the key or model (from the client).

    Examples
    --------
    >>> from s3kg_core.llm.client import LLMSettings
    >>> client = LLMClient(LLMSettings(base_url="http://127.0.0.1:8000/v1", model="m"))
    >>> labelled = label_with_client(statements, client)  # doctest: +SKIP
    """
    if "statement" not in table.columns:
        raise FactualityError("the statements table has no 'statement' column")
    requests = [
        ChatRequest.build(
            label_messages(str(s)),
            prompt_version=LABEL_PROMPT_VERSION,
            temperature=0.0,
            seed=seed,
            max_tokens=max_tokens,
        )
        for s in table["statement"]
    ]
    results = client.chat_many(requests, progress=progress)
    labels: list[str | None] = []
    statuses: list[str] = []
    for result in results:
        label = parse_label(result.text) if result.ok else None
        labels.append(label)
        statuses.append(
            result.status if not result.ok else ("ok" if label is not None else "unparsable")
        )
    out = table.copy()
    out["llm_label"] = pd.Series(labels, index=out.index, dtype=object)
    out["label_status"] = statuses
    out["label_source"] = f"endpoint:{client.settings.model}"
    out["raw_answer"] = [r.text if r.text is not None else r.error for r in results]
    return out


class LocalLabeler:
    """Label statements with a local causal LM by scoring the three answers.

    Parameters
    ----------
    model
        ``"smollm2"`` or a local model folder (see :func:`.models.resolve_model_dir`).
    batch_size
        Statements per forward pass.
    scoring
        ``"first-token"`` (default): one forward pass per statement; an answer's score is the
        log-probability of its first token as the model's next token after the prompt (what
        greedy decoding of one token compares; needs the three answers to start with
        different tokens). ``"full"``: the answers' whole log-likelihood, three sequences per
        statement (three times the cost), reduced by ``length_norm``.
    length_norm
        With ``scoring="full"``: ``"mean"`` token log-probability or ``"sum"``.
    calibrate
        Subtract each answer's score for a content-free statement (``"N/A"``) before taking
        the best (contextual calibration, Zhao et al. 2021): removes the model's prior
        preference for one answer word. Off by default (the labels are then the model's own
        most likely answer).

    Examples
    --------
    >>> labeler = LocalLabeler("smollm2")  # doctest: +SKIP
    >>> labeler.score(["Paris is the capital of France."]).shape  # doctest: +SKIP
    (1, 3)
    """

    def __init__(
        self,
        model: str | Path = "smollm2",
        *,
        batch_size: int = 16,
        scoring: Literal["first-token", "full"] = "first-token",
        length_norm: Literal["mean", "sum"] = "mean",
        calibrate: bool = False,
    ) -> None:
        from .models import PromptRunner

        if batch_size < 1:
            raise FactualityError(f"batch_size must be >= 1; got {batch_size}")
        if scoring not in ("first-token", "full"):
            raise FactualityError(f"scoring must be 'first-token' or 'full'; got {scoring!r}")
        if length_norm not in ("mean", "sum"):
            raise FactualityError(f"length_norm must be 'mean' or 'sum'; got {length_norm!r}")
        self.runner = PromptRunner(model)
        self.model, self.tokenizer = self.runner.model, self.runner.tokenizer
        self.name = Path(str(model)).name
        self.batch_size = batch_size
        self.scoring = scoring
        self.length_norm = length_norm
        self.calibrate = calibrate
        self._options = [
            list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
            for text in ANSWER_OPTIONS.values()
        ]
        if any(not ids for ids in self._options):
            raise FactualityError("the tokenizer turns an answer option into no tokens")
        if scoring == "first-token" and len({ids[0] for ids in self._options}) < len(LABELS):
            raise FactualityError(
                "the answers start with the same token for this tokenizer; use scoring='full'"
            )
        self._baseline: np.ndarray | None = None

    def score(self, statements: Sequence[str]) -> np.ndarray:
        """Each statement's score of TRUE, FALSE, IDK (higher is likelier), shape (n, 3).

        With ``calibrate``, the content-free statement's scores are already subtracted.
        """
        out = np.zeros((len(statements), len(LABELS)), dtype=np.float64)
        for start in range(0, len(statements), self.batch_size):
            chunk = statements[start : start + self.batch_size]
            out[start : start + len(chunk)] = self._score_batch(chunk)
        if self.calibrate:
            if self._baseline is None:
                self._baseline = self._score_batch(["N/A"])[0]
            out = out - self._baseline
        return out

    def _encode(self, sequences: list[list[int]]) -> tuple[Any, Any, Any]:
        import torch

        width = max(len(s) for s in sequences)
        pad = int(self.tokenizer.pad_token_id)
        # Left padding: every sequence ends at the last position, so only the last positions'
        # logits are needed; explicit position ids keep padded rows identical to unpadded ones.
        input_ids = torch.full((len(sequences), width), pad, dtype=torch.long)
        mask = torch.zeros((len(sequences), width), dtype=torch.long)
        for row, seq in enumerate(sequences):
            input_ids[row, width - len(seq) :] = torch.tensor(seq)
            mask[row, width - len(seq) :] = 1
        return input_ids, mask, (mask.cumsum(-1) - 1).clamp(min=0)

    def _score_batch(self, statements: Sequence[str]) -> np.ndarray:
        import torch

        if self.scoring == "first-token":
            logprobs = self.runner.run(statements).next_logprobs
            firsts = [ids[0] for ids in self._options]
            return np.asarray(logprobs[:, firsts].double().numpy())
        prompts = [
            list(
                self.tokenizer(label_prompt_text(self.tokenizer, s), add_special_tokens=False)[
                    "input_ids"
                ]
            )
            for s in statements
        ]
        scores = np.zeros((len(statements), len(LABELS)), dtype=np.float64)
        sequences = [p + option for p in prompts for option in self._options]
        input_ids, mask, positions = self._encode(sequences)
        keep = max(len(o) for o in self._options) + 1
        with torch.no_grad():
            logits = self.model(
                input_ids=input_ids,
                attention_mask=mask,
                position_ids=positions,
                logits_to_keep=keep,
            ).logits
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        for row in range(len(sequences)):
            option = self._options[row % len(self._options)]
            # Token j of the option is predicted at the position before it: index
            # keep - 1 - len(option) + j of the kept logits.
            steps = [
                float(logprobs[row, keep - 1 - len(option) + j, tok])
                for j, tok in enumerate(option)
            ]
            total = float(np.sum(steps))
            scores[row // len(self._options), row % len(self._options)] = (
                total / len(steps) if self.length_norm == "mean" else total
            )
        return scores

    def label(self, table: pd.DataFrame, progress: Progress | None = None) -> pd.DataFrame:
        """A copy of ``table`` with :data:`LABEL_COLUMNS` and the three scores.

        The scores are the columns ``score_true``, ``score_false``, ``score_idk``.

        Raises
        ------
        FactualityError
            If ``table`` has no ``statement`` column.
        """
        if "statement" not in table.columns:
            raise FactualityError("the statements table has no 'statement' column")
        texts = [str(s) for s in table["statement"]]
        scores = np.zeros((len(texts), len(LABELS)))
        for start in range(0, len(texts), self.batch_size):
            chunk = texts[start : start + self.batch_size]
            scores[start : start + len(chunk)] = self._score_batch(chunk)
            if progress is not None:
                progress(start + len(chunk), len(texts))
        if self.calibrate and len(texts):
            if self._baseline is None:
                self._baseline = self._score_batch(["N/A"])[0]
            scores = scores - self._baseline
        best = scores.argmax(axis=1) if len(texts) else np.zeros(0, dtype=int)
        out = table.copy()
        out["llm_label"] = pd.Series([LABELS[i] for i in best], index=out.index, dtype=object)
        out["label_status"] = "ok"
        out["label_source"] = f"local:{self.name}"
        out["raw_answer"] = [list(ANSWER_OPTIONS.values())[i] for i in best]
        for i, label in enumerate(LABELS):
            out[f"score_{label.lower()}"] = scores[:, i]
        return out

    def describe(self) -> dict[str, Any]:
        """What produced the labels (for stored results)."""
        return {
            "source": f"local:{self.name}",
            "scoring": self.scoring,
            "length_norm": self.length_norm,
            "calibrate": self.calibrate,
            "prompt_version": LABEL_PROMPT_VERSION,
        }
