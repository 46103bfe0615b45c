"""Tests of s3kg_core.factuality.labels: strict label parsing, endpoint and local labellers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from fake_openai import Reply, fake_openai, last_user_message

from s3kg_core.errors import FactualityError
from s3kg_core.factuality.labels import (
    LABELS,
    LocalLabeler,
    label_counts,
    label_with_client,
    parse_label,
)
from s3kg_core.factuality.prompts import LABEL_PROMPT_VERSION, LABEL_SYSTEM_PROMPT
from s3kg_core.llm.client import LLMClient, LLMSettings, MemoryCache


@pytest.mark.parametrize(
    "text, expected",
    [
        ("True", "TRUE"),
        ("true.", "TRUE"),
        ("  FALSE  ", "FALSE"),
        ("I don't know", "IDK"),
        ("I don\u2019t know.", "IDK"),
        ("'I do not know'", "IDK"),
        ("Yes, the statement is true.", None),
        ("True or False", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_label_strict(text: str | None, expected: str | None) -> None:
    assert parse_label(text) == expected


def _script(body: dict[str, Any], n: int) -> Reply:
    user = last_user_message(body)
    if "Apple" in user:
        return Reply(text="True")
    if "Google" in user:
        return Reply(text="False.")
    if "Samsung" in user:
        return Reply(text="I don't know")
    if "China" in user:
        return Reply(text="Probably true, since China is large.")
    return Reply(text="")


def test_label_with_client_fake_server() -> None:
    table = pd.DataFrame(
        {
            "statement_id": list("abcde"),
            "statement": [
                "Apple controls Beats.",
                "Google controls Beats.",
                "Samsung produces Galaxy.",
                "China has an impact on Inflation.",
                "Nothing here.",
            ],
        }
    )
    with fake_openai(_script) as server:
        client = LLMClient(
            LLMSettings(base_url=server.base_url, model="fake", max_retries=0),
            cache=MemoryCache(),
        )
        out = label_with_client(table, client)
        sent = server.requests[0][1]
        again = label_with_client(table, client)
        assert server.count() == 6  # the rerun came from the cache, but the empty reply
    assert out["llm_label"].tolist() == ["TRUE", "FALSE", "IDK", None, None]
    assert out["label_status"].tolist() == ["ok", "ok", "ok", "unparsable", "empty"]
    assert out.loc[3, "raw_answer"].startswith("Probably true")
    assert out["label_source"].iloc[0] == "endpoint:fake"
    assert sent["messages"][0]["content"] == LABEL_SYSTEM_PROMPT
    assert sent["temperature"] == 0
    assert again["llm_label"].tolist() == out["llm_label"].tolist()
    assert label_counts(out) == {"TRUE": 1, "FALSE": 1, "IDK": 1, "unparsable": 1, "empty": 1}
    assert LABEL_PROMPT_VERSION


def test_local_labeler_deterministic(tiny_model: Path) -> None:
    table = pd.DataFrame(
        {"statement": ["Apple controls Beats.", "Google produces Pixel.", "China has Xbox."]}
    )
    labeler = LocalLabeler(tiny_model, batch_size=2)
    first = labeler.label(table)
    second = labeler.label(table)
    assert set(first["llm_label"]) <= set(LABELS)
    assert (first["label_status"] == "ok").all()
    pd.testing.assert_frame_equal(first, second)
    scores = first[["score_true", "score_false", "score_idk"]].to_numpy()
    assert first["llm_label"].tolist() == [LABELS[i] for i in scores.argmax(1)]
    # batch size does not change the scores (padding is hidden)
    alone = LocalLabeler(tiny_model, batch_size=1).score(table["statement"].tolist())
    np.testing.assert_allclose(alone, scores, atol=1e-5)


def test_local_labeler_full_and_calibrated(tiny_model: Path) -> None:
    texts = ["Apple controls Beats.", "Google produces Pixel and Galaxy."]
    first = LocalLabeler(tiny_model).score(texts)
    full = LocalLabeler(tiny_model, scoring="full", batch_size=1).score(texts)
    # single-token answers score the same both ways
    np.testing.assert_allclose(full[:, :2], first[:, :2], atol=1e-5)
    calibrated = LocalLabeler(tiny_model, calibrate=True).score(texts)
    base = LocalLabeler(tiny_model).score(["N/A"])[0]
    np.testing.assert_allclose(calibrated, first - base, atol=1e-6)


def test_local_labeler_bad_options(tiny_model: Path) -> None:
    with pytest.raises(FactualityError):
        LocalLabeler(tiny_model, scoring="beam")  # type: ignore[arg-type]
    with pytest.raises(FactualityError, match="statement"):
        LocalLabeler(tiny_model).label(pd.DataFrame({"text": ["x"]}))
    with pytest.raises(FactualityError, match=r"config\.json"):
        LocalLabeler(tiny_model.parent)
