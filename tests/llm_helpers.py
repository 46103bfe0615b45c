"""A scripted "model" for the fake OpenAI server, and a small dataset to run it on.

The toy model answers a question with the first sentence of its context, and extracts a KG by
splitting every sentence "A verb B." into [A, verb, B]. Marker words in a text make it misbehave:
``BROKENJSON`` (output that is not JSON beyond repair), ``FENCEDJSON`` (JSON in a code fence
with single quotes: repairable), ``RATELIMIT`` (429 with Retry-After: 1 on the first try),
``SERVERERROR`` (always 500), ``HANG`` (never answers within the timeout), ``REFUSE`` (a
refusal), ``SILENT`` (an empty answer).
"""

from __future__ import annotations

import json
import re
from typing import Any

from fake_openai import Reply, last_user_message

from s3kg_core.store.records import ItemRecord
from s3kg_core.store.store import Store

__all__ = ["ITEMS", "make_dataset", "toy_kg", "toy_model"]

ITEMS = [
    ItemRecord(
        "q1",
        "What does aspirin reduce?",
        "Aspirin reduces fever. Aspirin relieves pain.",
        "Aspirin reduces fever.",
    ),
    ItemRecord(
        "q2",
        "Where was Curie born?",
        "Curie was_born_in Warsaw. Curie won prizes.",
        "Curie was_born_in Warsaw.",
    ),
    ItemRecord(
        "q3", "What does the sun heat?", "Sun heats earth. Earth orbits sun.", "Sun heats earth."
    ),
    ItemRecord(
        "q4",
        "Who wrote Hamlet?",
        "Shakespeare wrote Hamlet. Hamlet is_a tragedy.",
        "Shakespeare wrote Hamlet.",
    ),
]


def make_dataset(store: Store, items: list[ItemRecord] | None = None, name: str = "toy") -> None:
    """Import ``items`` (default :data:`ITEMS`) as dataset ``name``."""
    with store.transaction() as con:
        ds = store.ensure_dataset(con, name, source="test")
        store.upsert_items(con, ds, items or ITEMS)


def toy_kg(text: str) -> list[list[str]]:
    """[A, verb, B] for every sentence "A verb B." of ``text``."""
    out = []
    for sentence in re.split(r"[.!?]\s*", text):
        words = sentence.split()
        if len(words) >= 3:
            out.append([words[0], words[1], " ".join(words[2:])])
    return out


def _misbehaviour(text: str, n: int) -> Reply | None:
    if "SERVERERROR" in text:
        return Reply(status=500)
    if "RATELIMIT" in text and n == 1:
        return Reply(status=429, headers={"Retry-After": "1"})
    if "HANG" in text:
        return Reply(hang=5.0)
    if "REFUSE" in text:
        return Reply(text=None, refusal="I will not answer that.")
    if "SILENT" in text:
        return Reply(text="")
    return None


def toy_model(body: dict[str, Any], n: int) -> Reply:
    """The scripted model: answers, joint extraction, single extraction."""
    user = last_user_message(body)
    system = body["messages"][0]["content"] if body["messages"][0]["role"] == "system" else ""
    bad = _misbehaviour(user, n)
    if bad is not None:
        return bad
    if user.startswith("Context:"):
        context = user.split("\n\nQuestion:")[0].removeprefix("Context:\n")
        first = context.split(". ")[0].rstrip(".")
        return Reply(text=f"{first}.")
    if "TEXT 1:" in user:
        parts = re.split(r"TEXT [123]: ", user)[1:]
        texts = [p.strip() for p in parts]
        graphs = {f"knowledge_graph{i + 1}": toy_kg(t) for i, t in enumerate(texts)}
        if "BROKENJSON" in user:
            return Reply(text="Sure! Here are the graphs: knowledge_graph1 = aspirin -> fever")
        if "FENCEDJSON" in user:
            body_text = json.dumps(graphs).replace('"', "'")
            return Reply(text=f"```json\n{body_text[:-1]},}}\n```")
        return Reply(text=json.dumps(graphs))
    if "knowledge_graph" in system:
        if "BROKENJSON" in user:
            return Reply(text="{not json at all")
        return Reply(text=json.dumps({"knowledge_graph": toy_kg(user)}))
    return Reply(text="I do not understand.")
