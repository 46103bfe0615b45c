"""Tests of s3kg_core.factuality.ray_jobs: hidden states and judging as Ray Data jobs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from factuality_helpers import toy_kg_csv

from s3kg_core.errors import FactualityError
from s3kg_core.factuality.hidden import HiddenStateExtractor, read_hidden
from s3kg_core.factuality.judge import Judge, JudgeConfig
from s3kg_core.factuality.kg import load_user_kg
from s3kg_core.factuality.ray_jobs import (
    JUDGMENT_COLUMNS,
    RayJobReport,
    extract_hidden_ray,
    judge_ray,
    ray_session,
)
from s3kg_core.factuality.statements import build_statements


@pytest.fixture(scope="module")
def ray_local():
    """One local Ray session (1 worker + 1 CPU for reads/writes) for this module."""
    pytest.importorskip("ray")
    with ray_session("local", workers=1) as ray:
        yield ray


def test_extract_then_judge_one_worker(
    ray_local,
    tiny_model: Path,
    tmp_path: Path,
) -> None:
    kg = load_user_kg(toy_kg_csv(tmp_path))
    table, _ = build_statements(kg, None, negatives_per_positive=1, seed=0)
    report = extract_hidden_ray(
        table, tmp_path / "hidden", model=tiny_model, workers=1, batch_size=4, layers=[1, 2]
    )
    assert isinstance(report, RayJobReport) and report.rows == len(table)
    ids, x = read_hidden(tmp_path / "hidden", 2)
    assert sorted(ids) == sorted(table["statement_id"])
    assert x.shape == (len(table), 32)
    # same vectors as in-process extraction
    local = HiddenStateExtractor(tiny_model, layers=[2]).extract(table["statement"].tolist())
    order = {sid: i for i, sid in enumerate(table["statement_id"])}
    np.testing.assert_allclose(x, local["last"][[order[i] for i in ids], 0], atol=1e-5)

    judge = Judge(JudgeConfig(input_dim=32, hidden_dim=8, layer=2, max_epochs=2))
    judge.save(tmp_path / "judge")
    judged = judge_ray(tmp_path / "hidden", tmp_path / "judge", tmp_path / "judged", workers=1)
    assert judged.rows == len(table)
    out = pd.read_parquet(tmp_path / "judged")
    assert tuple(out.columns) == JUDGMENT_COLUMNS
    assert sorted(out["statement_id"]) == sorted(ids)
    expected = judge.predict_proba(x)
    got = out.set_index("statement_id").loc[ids, ["p_true", "p_false", "p_idk"]].to_numpy()
    np.testing.assert_allclose(got, expected, atol=1e-6)


def test_bad_inputs(tmp_path: Path) -> None:
    with pytest.raises(FactualityError, match="workers"):
        extract_hidden_ray(pd.DataFrame({"statement_id": [], "statement": []}), tmp_path, workers=0)
    with pytest.raises(FactualityError, match="statement"):
        extract_hidden_ray(pd.DataFrame({"x": [1]}), tmp_path / "o")
    (tmp_path / "file.txt").write_text("keep me")
    with pytest.raises(FactualityError, match="not a folder of Parquet"):
        extract_hidden_ray(pd.DataFrame({"statement_id": ["a"], "statement": ["b"]}), tmp_path)
