"""s3kg_core.cli.pipeline: collect, extract, run, against the scripted local OpenAI server."""

from __future__ import annotations

import csv
import json
import socket
import subprocess
import sys
import urllib.request

import pytest
from click.testing import CliRunner
from fake_openai import fake_openai
from llm_helpers import ITEMS, toy_model

from s3kg_core.cli import cli
from s3kg_core.store.store import Store


def _invoke(*args, env=None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env)


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "toy.csv"
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["qid", "q", "ctx", "ref"])
        for item in ITEMS:
            writer.writerow([item.ext_id, item.question, item.context, item.gold_answer])
    return path


@pytest.fixture
def no_endpoint_env(monkeypatch):
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "S3KG_MODEL"):
        monkeypatch.delenv(var, raising=False)


MAP = "id=qid,question=q,context=ctx,gold=ref"


@pytest.mark.parametrize("command", ["collect", "extract", "run"])
def test_help_texts(command):
    result = _invoke(command, "--help")
    assert result.exit_code == 0
    for flag in ("--db", "--base-url", "--model", "--api-key", "--max-retries"):
        assert flag in result.output


def test_collect_then_extract_from_the_command_line(tmp_path, table, no_endpoint_env):
    db = tmp_path / "cli.duckdb"
    assert _invoke("import", "csv", table, "--db", db, "--map", MAP).exit_code == 0
    with fake_openai(toy_model) as server:
        result = _invoke(
            "collect",
            "--db",
            db,
            "--base-url",
            server.base_url,
            "--model",
            "toy",
            "--temperatures",
            "0,0.7",
            "--api-key",
            "sk-CLISECRET",
        )
        assert result.exit_code == 0, result.output
        assert "collected from toy: 2 run(s): 8 asked (ok 8; 0 from the cache)" in result.output
        result = _invoke(
            "extract", "--db", db, "--extractor", "llm", "--base-url", server.base_url,
            "--model", "toy",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert result.output.splitlines()[0] == (
            "extract: extractor llm (--extractor llm, prompt joint), endpoint "
            f"{server.base_url} (--base-url), model toy (--model)"
        )
        assert "extracted with llm:toy:joint-kg-v1: 2 run(s): 8 items extracted" in result.output
        sent = server.count()
        rerun = _invoke(
            "collect",
            "--db",
            db,
            "--base-url",
            server.base_url,
            "--model",
            "toy",
            "--temperatures",
            "0,0.7",
        )
        assert "0 asked" in rerun.output and "8 already answered" in rerun.output
        assert server.count() == sent
    assert b"CLISECRET" not in db.read_bytes()
    with Store(db).connect() as con:
        assert con.execute("SELECT count(*) FROM kgs").fetchall() == [(24,)]


def test_refresh_asks_again_what_collect_and_extract_did(tmp_path, table, no_endpoint_env):
    db = tmp_path / "cli.duckdb"
    assert _invoke("import", "csv", table, "--db", db, "--map", MAP).exit_code == 0
    with fake_openai(toy_model) as server:
        endpoint = ["--db", db, "--base-url", server.base_url, "--model", "toy"]
        assert _invoke("collect", *endpoint).exit_code == 0
        assert _invoke("extract", *endpoint, "--extractor", "llm").exit_code == 0
        sent = server.count()
        collected = _invoke("collect", *endpoint, "--refresh")
        assert "4 asked (ok 4; 0 from the cache), 0 already answered" in collected.output
        extracted = _invoke("extract", *endpoint, "--extractor", "llm", "--refresh")
        assert "4 items extracted (KGs: ok 12), 0 already done" in extracted.output
        assert server.count() - sent == 2 * len(ITEMS)


def test_endpoint_down_is_one_line_not_a_traceback(tmp_path, table, no_endpoint_env):
    db = tmp_path / "cli.duckdb"
    _invoke("import", "csv", table, "--db", db, "--map", MAP)
    with fake_openai(toy_model) as server:
        url = server.base_url
    result = _invoke(
        "collect", "--db", db, "--base-url", url, "--model", "toy", "--max-retries", "0"
    )
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert lines[0].startswith("collect: endpoint ") and "Traceback" not in result.output
    assert len(lines) == 2 and lines[1].startswith("Error: the endpoint")


@pytest.fixture
def refused_port():
    """A port of 127.0.0.1 that this test holds bound and not listening: every connection to it
    is refused, whatever else runs on the machine (port 9 was assumed closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


# Regression (issue 17, D11): credentials in --base-url were echoed whole, and a malformed port
# ended in a ValueError traceback that printed the URL.
@pytest.mark.parametrize(
    "url", ["http://user:SECRET@127.0.0.1:{port}/v1", "http://user:SECRET@127.0.0.1:x/v1"]
)
def test_credentials_in_the_base_url_are_never_printed(
    tmp_path, table, no_endpoint_env, refused_port, url
):
    url = url.format(port=refused_port)
    db = tmp_path / "cli.duckdb"
    _invoke("import", "csv", table, "--db", db, "--map", MAP)
    result = _invoke("collect", "--db", db, "--base-url", url, "--model", "m", "--max-retries", "0")
    assert result.exit_code == 1
    assert "SECRET" not in result.output and "Traceback" not in result.output
    assert result.output.strip().splitlines()[-1].startswith("Error: the endpoint")


def test_collect_without_endpoint_says_what_to_set(tmp_path, table, no_endpoint_env):
    db = tmp_path / "cli.duckdb"
    _invoke("import", "csv", table, "--db", db, "--map", MAP)
    result = _invoke("collect", "--db", db, "--model", "toy")
    assert result.exit_code == 1 and "--base-url" in result.output
    result = _invoke(
        "collect", "--db", db, "--base-url", "http://127.0.0.1:9/v1", "--temperatures", "hot"
    )
    assert result.exit_code == 2 and "comma-separated" in result.output


def test_collect_local_answers_imported_pubmedqa_questions_with_no_endpoint_issue_58(
    tmp_path, tiny_model, no_endpoint_env
):
    """Issue 58: `s3kg import pubmedqa` stored questions and nothing answered them without an
    endpoint; `collect --local` serves a local model folder (here a tiny random Llama; the
    README's `smollm2` is the packaged one) in the command's own process, and stops it."""
    from serve_helpers import serve_unavailable_reason

    if serve_unavailable_reason():
        pytest.skip(serve_unavailable_reason())
    path = tmp_path / "ori_pqal.json"
    records = {
        str(pmid): {"QUESTION": f"Does drug {pmid} work?", "CONTEXTS": ["It was tested."],
                    "LONG_ANSWER": f"Drug {pmid} works."}
        for pmid in (41, 42, 43)
    }  # fmt: skip
    path.write_text(json.dumps(records), encoding="utf-8")
    db = tmp_path / "pq.duckdb"
    assert _invoke("import", "pubmedqa", path, "--limit", "2", "--db", db).exit_code == 0
    result = _invoke("collect", "--db", db, "--local", tiny_model, "--max-tokens", "4")
    assert result.exit_code in (0, 3), result.output  # 3: a random model's empty reply
    lines = result.output.splitlines()
    served = [line for line in lines if line.startswith("collect: the local model model, ")]
    assert len(served) == 1 and served[0].endswith("(--local)"), result.output
    url = served[0].split("served at ", 1)[1].split(" ", 1)[0]
    assert "collected from model: 1 run(s): 2 asked" in result.output
    with Store(db).connect() as con:
        rows = con.execute(
            "SELECT i.ext_id, r.model FROM answers a JOIN items i USING (item_id) "
            "JOIN runs r USING (run_id) ORDER BY i.ext_id"
        ).fetchall()
    assert rows == [("41", str(tiny_model)), ("42", str(tiny_model))]
    with pytest.raises(OSError):  # the server stopped with the command
        urllib.request.urlopen(f"{url}/models", timeout=5)
    clash = _invoke("collect", "--db", db, "--local", tiny_model, "--base-url", url)
    assert clash.exit_code == 2 and "--local serves its own model: leave out --base-url" in (
        clash.output
    )
    bad = _invoke("collect", "--db", db, "--local", tmp_path / "nope")
    assert bad.exit_code == 1 and bad.output.startswith(
        "Error: the model must be 'smollm2' or a local transformers model folder"
    )


def test_run_chains_every_stage_and_resumes(tmp_path, table, no_endpoint_env):
    db = tmp_path / "run.duckdb"
    with fake_openai(toy_model) as server:
        args = [
            "run",
            "--db",
            db,
            "--table",
            table,
            "--map",
            MAP,
            "--base-url",
            server.base_url,
            "--model",
            "toy",
            "--extractor",
            "llm",
            "--fraction",
            "0.5",
        ]
        first = _invoke(*args)
        assert first.exit_code == 0, first.output
        for stage in (
            "import:",
            "collect:",
            "extract (llm:toy:joint-kg-v1):",
            "score: 4 answers",
            "tau: 2 answers analysed",
        ):
            assert stage in first.output, first.output
        sent = server.count()
        second = _invoke(*args)
        assert second.exit_code == 0, second.output
        assert "score: 0 answers scored, 4 already done" in second.output
        assert server.count() == sent
    cus = _invoke("cus", "--db", db, "--json", tmp_path / "cus.json")
    assert cus.exit_code == 0
    [row] = json.loads((tmp_path / "cus.json").read_text())
    assert row["model"] == "toy" and row["n"] == 4 and 0.0 < row["cus"] <= 1.0


def test_run_without_endpoint_extracts_offline_from_stored_answers(tmp_path, no_endpoint_env):
    path = tmp_path / "answered.csv"
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "question", "context", "gold", "answer"])
        writer.writerow(
            [
                "1",
                "What reduces fever?",
                "Aspirin reduces fever.",
                "Aspirin reduces fever.",
                "Aspirin reduces fever.",
            ]
        )
    db = tmp_path / "off.duckdb"
    imported = _invoke(
        "import",
        "csv",
        path,
        "--db",
        db,
        "--model",
        "m",
        "--map",
        "id=id,question=question,context=context,gold=gold,answer=answer",
    )
    assert imported.exit_code == 0, imported.output
    result = _invoke("run", "--db", db)
    assert result.exit_code == 0, result.output
    assert "collect: skipped" in result.output and "extract (offline:" in result.output
    assert "score: 1 answers scored" in result.output


def _answered_table(tmp_path, rows):
    """A CSV with an answer column ``out`` beside the columns MAP names."""
    path = tmp_path / "answered.csv"
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["qid", "q", "ctx", "ref", "out"])
        writer.writerows(rows)
    return path


ASPIRIN = "Aspirin reduces fever."
HAMLET = "Shakespeare wrote Hamlet."


def test_run_imports_a_tables_answers_under_the_model_that_model_names_d9(
    tmp_path, no_endpoint_env
):
    """Issue 17 (D9): ``run --table T --map ...,answer=out --model NAME`` always failed with
    "an answer column is mapped: name its model with --model NAME": run never passed --model
    to the importer. Without an endpoint, the answers are imported under that model, then
    extracted offline, scored with the packaged MiniLM and explained by TAU."""
    rows = [["1", "Why?", ASPIRIN, ASPIRIN, ASPIRIN], ["2", "Who?", HAMLET, HAMLET, "Bob ran."]]
    path = _answered_table(tmp_path, rows)
    db = tmp_path / "d9.duckdb"
    args = ["run", "--db", db, "--table", path, "--map", MAP + ",answer=out", "--model", "my-llm"]
    result = _invoke(*args)
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert lines[0] == (
        "run: extractor offline, spaCy rules, no LLM (the default; --extractor llm uses an "
        "endpoint)"
    )
    assert lines[1] == "import: answered.csv: answered / my-llm: 2 items, 2 answers, 0 KGs"
    assert lines[2] == "collect: skipped (no endpoint configured; using stored answers)"
    assert lines[3].startswith("extract (offline:") and "2 items extracted" in lines[3]
    assert lines[4] == "score: 2 answers scored, 0 already done, 0 without KGs"
    assert lines[5].startswith("tau: 1 answers analysed: ") and len(lines) == 6
    with Store(db).connect() as con:
        runs = con.execute("SELECT model, temperature, source FROM runs").fetchall()
    assert runs == [("my-llm", 0.0, "table/answered.csv")]
    again = _invoke("run", "--db", db)  # the later stages resume: nothing new to score
    assert again.exit_code == 0, again.output
    assert "score: 0 answers scored, 2 already done" in again.output
    without_model = _invoke(*args[:-2])  # still a clean error without --model
    assert without_model.exit_code == 1
    assert "name its model with --model NAME" in without_model.output


def test_rerunning_run_with_the_same_answered_table_resumes(tmp_path, no_endpoint_env):
    """Issue 17: the second ``run`` re-imported the table into a new run with extractor
    ``none``; extracting it collided with the extracted one (a raw DuckDB ConstraintException).
    The import now finds its run again; a changed answer is extracted and scored again."""
    rows = [["1", "Why?", ASPIRIN, ASPIRIN, ASPIRIN], ["2", "Who?", HAMLET, HAMLET, HAMLET]]
    path = _answered_table(tmp_path, rows)
    db = tmp_path / "re.duckdb"
    args = ["run", "--db", db, "--table", path, "--map", MAP + ",answer=out", "--model", "my-llm"]
    assert _invoke(*args).exit_code == 0
    again = _invoke(*args)
    assert again.exit_code == 0, again.output
    assert "score: 0 answers scored, 2 already done" in again.output
    rows[1][4] = "Marlowe wrote Hamlet."
    _answered_table(tmp_path, rows)
    changed = _invoke(*args)
    assert changed.exit_code == 0, changed.output
    assert "1 items extracted" in changed.output
    assert "score: 1 answers scored, 1 already done" in changed.output
    with Store(db).connect() as con:
        assert con.execute("SELECT count(*) FROM runs").fetchall() == [(1,)]


def test_python_dash_m_runs_the_llm_commands():
    out = subprocess.run(
        [sys.executable, "-m", "s3kg_core", "collect", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "Ask a model every stored question" in out.stdout


# -- exit status: failures the stages stored (issue 17, D11a) ------------------------------------


def _questions_table(tmp_path, bad: set[str], marker: str = "SERVERERROR"):
    """The toy items as a CSV, with ``marker`` in the questions of the items in ``bad``."""
    path = tmp_path / "marked.csv"
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["qid", "q", "ctx", "ref"])
        for item in ITEMS:
            q = f"{item.question} {marker}" if item.ext_id in bad else item.question
            writer.writerow([item.ext_id, q, item.context, item.gold_answer])
    return path


def _error_lines(result) -> list[str]:
    return [line for line in result.output.splitlines() if line.startswith("Error: ")]


@pytest.mark.parametrize(
    ("bad", "status", "message"),
    [
        (set(), 0, None),
        ({"q2", "q4"}, 3, "Error: collect: 2 of 4 requests failed"),
        ({"q1", "q2", "q3", "q4"}, 1, "Error: collect: 4 of 4 requests failed"),
    ],
)
def test_collect_exits_non_zero_when_requests_failed_d11a(
    tmp_path, no_endpoint_env, bad, status, message
):
    """Issue 17 (D11a): `collect` exited 0 when every request failed. Now 3 when some failed,
    1 when all did, with one line that says how many and where to look."""
    db = tmp_path / "c.duckdb"
    imported = _invoke("import", "csv", _questions_table(tmp_path, bad), "--db", db, "--map", MAP)
    assert imported.exit_code == 0, imported.output
    with fake_openai(toy_model) as server:
        args = ["collect", "--db", db, "--base-url", server.base_url, "--model", "toy"]
        result = _invoke(*args, "--max-retries", "0")
    assert result.exit_code == status, result.output
    assert result.output.splitlines()[1].startswith("collected from toy: 1 run(s): 4 asked")
    errors = _error_lines(result)
    if message is None:
        assert errors == []
        return
    [line] = errors
    assert line.startswith(message + " (")
    assert "answer_status" in line and "answer_error" in line and "s3kg export" in line
    assert line.endswith("rerun to retry them")


def _answered_toy_table(tmp_path, bad: set[str]):
    """The toy items with stored answers; the answers of ``bad`` items make extraction fail."""
    rows = [
        [
            i.ext_id,
            i.question,
            i.context,
            i.gold_answer,
            i.gold_answer + (" BROKENJSON" * (i.ext_id in bad)),
        ]
        for i in ITEMS
    ]
    return _answered_table(tmp_path, rows)


@pytest.mark.parametrize(
    ("bad", "status", "message"),
    [
        ({"q3"}, 3, "Error: extract: 3 of 12 KGs failed"),
        ({"q1", "q2", "q3", "q4"}, 1, "Error: extract: 12 of 12 KGs failed"),
    ],
)
def test_extract_exits_non_zero_when_kgs_failed_d11a(
    tmp_path, no_endpoint_env, bad, status, message
):
    """Issue 17 (D11a): `extract` exited 0 with 27 of 33 KGs failed."""
    db = tmp_path / "e.duckdb"
    table = _answered_toy_table(tmp_path, bad)
    imported = _invoke(
        "import", "csv", table, "--db", db, "--map", MAP + ",answer=out", "--model", "toy"
    )
    assert imported.exit_code == 0, imported.output
    with fake_openai(toy_model) as server:
        args = ["extract", "--db", db, "--base-url", server.base_url, "--model", "toy"]
        result = _invoke(*args, "--extractor", "llm")
        assert result.exit_code == status, result.output
        [line] = _error_lines(result)
        assert line.startswith(message + " (")
        assert "kgs table" in line and "answer_kg_status" in line
        assert line.endswith("rerun to retry them")
        again = _invoke(*args, "--extractor", "llm")  # a rerun tries the failed items only
        assert again.exit_code == 1 and f"{len(bad)} items extracted" in again.output
        n = 3 * len(bad)
        assert _error_lines(again)[0].startswith(f"Error: extract: {n} of {n} KGs failed (")


def test_run_exits_with_the_worst_stage_d11a(tmp_path, no_endpoint_env):
    """Issue 17 (D11a): `run` chains the stages and exits 3 when one stored some failures."""
    db = tmp_path / "r.duckdb"
    table = _questions_table(tmp_path, {"q4"})
    with fake_openai(toy_model) as server:
        result = _invoke(
            "run", "--db", db, "--table", table, "--map", MAP, "--base-url", server.base_url,
            "--model", "toy", "--max-retries", "0", "--fraction", "0.5", "--extractor", "llm",
        )  # fmt: skip
    assert result.exit_code == 3, result.output
    assert "score: 3 answers scored" in result.output  # the chain went on
    [line] = _error_lines(result)
    assert line.startswith("Error: collect: 1 of 4 requests failed (")


@pytest.mark.parametrize("command", ["collect", "extract", "run"])
def test_help_documents_the_exit_status_d11a(command):
    result = _invoke(command, "--help")
    text = " ".join(result.output.split())
    assert "Exit status: 0" in text and "3 when some" in text and "1 when all" in text


def test_collect_names_runs_after_the_model_never_its_path_29(tmp_path, table, no_endpoint_env):
    """Issue 29: a run collected from a local folder was stored and shown under the folder's
    absolute path; now it is named after the model (or --name), and the export shows that."""
    db = tmp_path / "n.duckdb"
    assert _invoke("import", "csv", table, "--db", db, "--map", MAP).exit_code == 0
    folder = str(tmp_path / "cache" / "models" / "smollm2-135m-instruct")
    with fake_openai(toy_model) as server:
        common = ["collect", "--db", db, "--base-url", server.base_url, "--model", folder]
        first = _invoke(*common, "--limit", "2")
        renamed = _invoke(*common, "--temperatures", "0.7", "--name", "smol <b>")
    assert first.exit_code == 0 and renamed.exit_code == 0, first.output + renamed.output
    assert "collected from smollm2-135m-instruct: " in first.output
    assert "collected from smol <b>: " in renamed.output
    with Store(db).connect() as con:
        runs = con.execute("SELECT model, temperature, name FROM runs ORDER BY 2").fetchall()
        ids = con.execute("SELECT DISTINCT model_id FROM answers").fetchall()
    assert runs == [(folder, 0.0, "smollm2-135m-instruct"), (folder, 0.7, "smol <b>")]
    assert ids == [(folder,)]  # the fake server reports the model it was asked for
    out = tmp_path / "e.csv"
    assert _invoke("export", "--db", db, "--format", "csv", "--out", out).exit_code == 0
    exported = out.read_text()
    assert "smollm2-135m-instruct" in exported and str(tmp_path) not in exported


def test_another_extractor_after_a_failed_one_says_what_it_does_and_score_says_failed(
    tmp_path, no_endpoint_env
):
    """Issue 43 item 2: after `extract --extractor llm` failed every KG, `extract --extractor
    offline` printed `0 run(s): 0 items extracted` and exited 0, and `score` then counted the
    answers as "without KGs yet". Now extract names the run it leaves alone and the one command
    that extracts it, and score tells failed KGs apart, with the command that retries them."""
    db = tmp_path / "f.duckdb"
    table = _answered_toy_table(tmp_path, {"q1", "q2", "q3", "q4"})
    imported = _invoke(
        "import", "csv", table, "--db", db, "--map", MAP + ",answer=out", "--model", "toy"
    )
    assert imported.exit_code == 0, imported.output
    with fake_openai(toy_model) as server:
        args = ["extract", "--db", db, "--base-url", server.base_url, "--model", "toy"]
        assert _invoke(*args, "--extractor", "llm").exit_code == 1
    offline = _invoke("extract", "--db", db, "--extractor", "offline")
    assert offline.exit_code == 0, offline.output
    assert (
        "extract: run 1 (llm:toy:joint-kg-v1: 12 of 12 KGs failed) is left as it is: without "
        "--run, extract takes only the runs not extracted yet or extracted with offline:"
    ) in offline.output
    assert offline.output.split("\n")[1].endswith(
        "as a new run beside it: s3kg extract --extractor offline --run 1"
    )
    scored = _invoke("score", "--db", db)
    assert scored.exit_code == 0, scored.output
    assert "without KGs yet" not in scored.output
    assert "4 whose KGs failed (s3kg extract --extractor llm --run 1 retries them)" in (
        scored.output
    )
    # the command it gave does what it says: run 2, offline, beside run 1
    again = _invoke("extract", "--db", db, "--extractor", "offline", "--run", "1")
    assert again.exit_code == 0 and "4 items extracted" in again.output
    with Store(db).connect() as con:
        runs = con.execute("SELECT run_id, extractor FROM runs ORDER BY run_id").fetchall()
    assert [r for r, _ in runs] == [1, 2] and runs[1][1].startswith("offline:")


def test_extract_says_when_the_endpoint_refused_the_schema(tmp_path, no_endpoint_env):
    """Issue 43: an endpoint that rejects response_format is asked without it, and the command
    says so (the extraction itself succeeds)."""
    from fake_openai import Reply

    def script(body: dict, n: int) -> Reply:
        if "response_format" in body:
            error = {"error": {"message": "unknown field response_format", "type": "x"}}
            return Reply(status=400, raw=json.dumps(error).encode())
        return toy_model(body, n)

    db = tmp_path / "r.duckdb"
    table = _answered_toy_table(tmp_path, set())
    args = ["import", "csv", table, "--db", db, "--map", MAP + ",answer=out", "--model", "toy"]
    assert _invoke(*args).exit_code == 0
    with fake_openai(script) as server:
        result = _invoke(
            "extract", "--db", db, "--base-url", server.base_url, "--model", "toy",
            "--extractor", "llm",
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "extract: the endpoint refused response_format" in result.output
    assert "(KGs: ok 12)" in result.output
