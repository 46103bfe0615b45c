"""s3kg_core.cli.grapheval: help texts, bench on a tiny data folder, errors as one line."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from fake_openai import Reply, fake_openai
from grapheval_helpers import scripted_llm

from s3kg_core.cli import cli


def _invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.mark.parametrize("command", ["bench", "detect", "correct"])
def test_help(command):
    result = _invoke("grapheval", command, "--help")
    assert result.exit_code == 0 and "--checker" in result.output


def _data_dir(tmp_path):
    folder = tmp_path / "data" / "qags" / "true_binarized"
    folder.mkdir(parents=True)
    rows = [
        ",grounding,generated_text,label",
        '0,"The Eiffel Tower is in Paris. It opened in 1889.","The Eiffel Tower is in Paris.",1',
        '1,"The Eiffel Tower is in Paris. It opened in 1889.","The Eiffel Tower opened in 1899.",0',
        '2,"Aspirin reduces fever. It was sold from 1899.","Aspirin reduces fever.",1',
        '3,"Aspirin reduces fever. It was sold from 1899.","Aspirin causes cancer in Berlin.",0',
    ]
    (folder / "qags_xsum_true.csv").write_text("\n".join(rows) + "\n")
    return tmp_path / "data"


def test_bench_writes_the_json_and_the_db_row(tmp_path, one_torch_thread):
    out = tmp_path / "out.json"
    db = tmp_path / "b.duckdb"
    result = _invoke(
        "grapheval",
        "bench",
        "--dataset",
        "qags_x",
        "--checker",
        "support",
        "--split",
        "all",
        "--json",
        out,
        "--data-dir",
        _data_dir(tmp_path),
        "--db",
        db,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["dataset"] == "qags_x" and data["n"] == 4 and data["checker"] == "support"
    assert 0.0 <= data["kg"]["balanced_accuracy"] <= 1.0 and "balanced_accuracy" in data["raw"]
    assert (tmp_path / "out.qags_x.jsonl").exists()
    from s3kg_core.grapheval.results import get_bench_rows
    from s3kg_core.store.store import Store

    with Store(db).connect() as con:
        assert len(get_bench_rows(con)) == 1


def test_an_llm_checker_bench_with_a_db_resumes_from_its_cached_replies(tmp_path):
    """Regression: the bench's LLM replies were cached in memory only, so a killed run (minutes
    per summary with a local model) lost everything; with ``--db`` a rerun asks nothing again."""
    db = tmp_path / "b.duckdb"
    data_dir = _data_dir(tmp_path)
    with fake_openai(scripted_llm) as server:
        args = [
            "grapheval", "bench", "--dataset", "qags_x", "--checker", "llm", "--split", "all",
            "--data-dir", data_dir, "--db", db, "--base-url", server.base_url,
            "--model", "judge", "--api-key", "k", "--max-retries", "0",
        ]  # fmt: skip
        first = _invoke(*args, "--json", tmp_path / "a.json")
        assert first.exit_code == 0, first.output
        asked = len(server.requests)
        assert asked >= 8  # raw and KG checks of four summaries
        second = _invoke(*args, "--json", tmp_path / "b.json")
        assert second.exit_code == 0, second.output
        assert len(server.requests) == asked
    a, b = (json.loads((tmp_path / f).read_text()) for f in ("a.json", "b.json"))
    assert a["kg"] == b["kg"] and a["raw"] == b["raw"]
    assert a["kg"]["balanced_accuracy"] == 1.0  # the scripted judge reads the context


def test_library_errors_are_one_line(tmp_path):
    result = _invoke(
        "grapheval",
        "bench",
        "--dataset",
        "summeval",
        "--json",
        tmp_path / "o.json",
        "--data-dir",
        tmp_path,
    )
    assert result.exit_code == 1 and result.output.startswith("Error: benchmark file")
    result = _invoke(
        "grapheval",
        "bench",
        "--dataset",
        "qags_x",
        "--checker",
        "nli",
        "--json",
        tmp_path / "o.json",
        "--data-dir",
        tmp_path,
    )
    assert result.exit_code == 1 and "--nli-model" in result.output


def test_detect_needs_an_existing_database(tmp_path):
    result = _invoke("grapheval", "detect", "--db", tmp_path / "none.duckdb")
    assert result.exit_code == 1 and "does not exist" in result.output


def _answered_store(path, n=3):
    """A run of ``n`` answers with an answer KG each (one triple), extracted offline."""
    from s3kg_core.kg import Triple
    from s3kg_core.store.records import AnswerRecord, ItemRecord, KGRecord
    from s3kg_core.store.store import Store

    store = Store(path)
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "toy")
        ctx = "The Eiffel Tower is in Paris. It opened in 1889."
        ids = store.upsert_items(
            con, ds, [ItemRecord(f"q{i}", "When?", ctx, "1889.") for i in range(n)]
        )
        run = store.ensure_run(con, ds, "m", 0.0, "offline:test")
        items = [ids[f"q{i}"] for i in range(n)]
        store.put_answers(con, run, [AnswerRecord(i, f"It opened in 1889 ({i}).") for i in items])
        store.put_kgs(
            con,
            [
                KGRecord(run, i, "answer", (Triple("Eiffel Tower", "opened in", "1889"),))
                for i in items
            ],
        )
    return store


def test_detect_exits_non_zero_when_answers_stay_unjudged_and_a_rerun_retries_them_d11a(
    tmp_path,
):
    """Issue 17 (D11a): `grapheval detect --checker llm` exited 0 with every answer unjudged
    (each request failed), and a rerun skipped those answers as already checked."""
    db = tmp_path / "g.duckdb"
    _answered_store(db)
    down = {"on": True}

    def script(body, n):
        if down["on"]:
            return Reply(status=500)
        return scripted_llm(body, n)

    with fake_openai(script) as server:
        args = ["grapheval", "detect", "--db", db, "--checker", "llm", "--no-raw"]
        args += ["--base-url", server.base_url, "--model", "m", "--max-retries", "0"]
        failed = _invoke(*args)
        assert failed.exit_code == 1, failed.output
        [line] = [x for x in failed.output.splitlines() if x.startswith("Error: ")]
        assert line.startswith("Error: grapheval detect: 3 of 3 answers unjudged (")
        assert "grapheval_results" in line and line.endswith("rerun to retry them")
        down["on"] = False
        again = _invoke(*args)
    assert again.exit_code == 0, again.output
    assert "3 answers checked (0 inconsistent), 0 already done" in again.output
    usage = " ".join(_invoke("grapheval", "detect", "--help").output.split())
    assert "Exit status: 0 when nothing failed; 3 when some items failed" in usage


def test_train_checker_help_names_its_options():
    result = _invoke("grapheval", "train-checker", "--help")
    assert result.exit_code == 0
    for option in ("--pairs", "--seed", "--max-length", "--checkpoint-every", "--fresh", "--head"):
        assert option in result.output
    assert "--paraphrase-share" in result.output


def test_train_checker_paraphrase_share_defaults_to_the_generators():
    from s3kg_core.checker_training.synthetic import PARAPHRASE_SHARE
    from s3kg_core.cli.grapheval import train_checker_cmd

    option = next(p for p in train_checker_cmd.params if p.name == "paraphrase_share")
    assert option.default == PARAPHRASE_SHARE


def test_train_checker_then_bench_and_detect_with_checker_trained(tmp_path, one_torch_thread):
    data_dir = _data_dir(tmp_path)
    (data_dir / "wikipedia_paragraphs").mkdir()
    leads = [
        "Marie Curie was born in Warsaw in 1867. She moved to Paris in 1891. Pierre Curie "
        "married her in 1895. The couple discovered radium in 1898. She won the Nobel Prize.",
        "The Eiffel Tower is in Paris. Gustave Eiffel designed the tower. It opened in 1889. "
        "The tower is 330 metres tall. Millions of tourists visit it every year.",
    ]
    (data_dir / "wikipedia_paragraphs" / "wikitext_lead_paragraphs.jsonl").write_text(
        "".join(json.dumps({"doc_id": i, "lead_text_detok": t}) + "\n" for i, t in enumerate(leads))
    )
    model = tmp_path / "model"
    args = ["--data-dir", data_dir, "--out", model, "--pairs", 16, "--max-steps", 1]
    result = _invoke("grapheval", "train-checker", *args, "--batch-size", 4, "--max-length", 64)
    assert result.exit_code == 0, result.output
    assert "held-out balanced accuracy" in result.output and (model / "manifest.json").exists()
    out = tmp_path / "out.json"
    result = _invoke(
        "grapheval",
        "bench",
        "--dataset",
        "qags_x",
        "--checker",
        "trained",
        "--trained-model",
        model,
        "--split",
        "all",
        "--json",
        out,
        "--data-dir",
        data_dir,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["checker"] == "trained" and data["checker_signature"].startswith("checker:trained")
    missing = _invoke(
        "grapheval",
        "bench",
        "--dataset",
        "qags_x",
        "--checker",
        "trained",
        "--trained-model",
        tmp_path / "none",
        "--json",
        out,
        "--data-dir",
        data_dir,
    )
    assert missing.exit_code == 1 and "train-checker" in missing.output


def test_export_checker_then_bench_with_the_int8_backend(tmp_path, one_torch_thread):
    from trained_checker_helpers import train_tiny

    model = tmp_path / "model"
    train_tiny(model)
    data_dir = _data_dir(tmp_path)
    out = tmp_path / "out.json"
    bench = ["grapheval", "bench", "--dataset", "qags_x", "--checker", "trained"]
    bench += ["--trained-model", model, "--split", "all", "--json", out, "--data-dir", data_dir]
    # before the export: onnx is a one-line error that says what to run; auto is torch
    result = _invoke(*bench, "--checker-backend", "onnx")
    assert result.exit_code == 1 and "export-checker" in result.output
    assert "Traceback" not in result.output
    result = _invoke("grapheval", "export-checker", "--model", model, "--pairs", 0)
    assert result.exit_code == 0, result.output
    assert (
        "onnx_int8: balanced accuracy" in result.output and "wrote model.int8.onnx" in result.output
    )
    assert json.loads((model / "manifest.json").read_text())["onnx"]["file"] == "model.int8.onnx"
    signatures = {}
    for backend in ("torch", "onnx", "auto"):
        result = _invoke(*bench, "--checker-backend", backend)
        assert result.exit_code == 0, result.output
        signatures[backend] = json.loads(out.read_text())["checker_signature"]
    assert "backend:onnx-int8:" in signatures["onnx"] == signatures["auto"]
    assert "backend:" not in signatures["torch"]
    result = _invoke("grapheval", "export-checker", "--model", tmp_path / "none")
    assert result.exit_code == 1 and "train-checker" in result.output
