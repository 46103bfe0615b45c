"""Tests of ``s3kg bench pairs`` (s3kg_core.cli.bench) on a tiny pair set in the released layout."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_evaluation_pairs import separable_rows

from s3kg_core.cli import cli
from s3kg_core.evaluation.pair_sets import BENCHMARKS_SUBDIR
from s3kg_core.store.store import Store

COLUMNS = ["id", "paragraph_1", "kg_1", "paragraph_2", "kg_2", "label", "perturbation_type"]


def _write_set(data_dir: Path, name: str, rows: list[dict[str, str]]) -> Path:
    folder = data_dir / BENCHMARKS_SUBDIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({**row, "perturbation_type": "toy"})
    return path


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    _write_set(root, "toy_a", separable_rows())
    _write_set(root, "toy_b", separable_rows()[2:7])
    return root


def _bench(*args: str) -> object:
    return CliRunner().invoke(cli, ["bench", "pairs", *args])


def test_one_set_prints_a_table_writes_json_and_stores_rows(data_dir, tmp_path):
    out, db = tmp_path / "out.json", tmp_path / "bench.duckdb"
    common = ["--dataset", "toy_a", "--data-dir", str(data_dir), "--methods", "s3kg"]
    common += ["--mode", "paper", "--protocol", "same"]
    args = [*common, "--bootstrap", "20", "--json", str(out), "--db", str(db)]
    result = _bench(*args)
    assert result.exit_code == 0, result.output
    assert "toy_a (n=8, encoder minilm, mode paper, triples released)" in result.output
    assert "s3kg" in result.output and "alpha" in result.output
    data = json.loads(out.read_text())
    assert data["dataset"] == "toy_a" and data["n"] == 8
    assert data["methods"]["s3kg"]["f1"] == pytest.approx(1.0)
    assert data["methods"]["s3kg"]["auroc"] == pytest.approx(1.0)
    assert f"stored 1 rows in {db}" in result.output
    assert _bench(*args).exit_code == 0  # a rerun replaces, never duplicates
    with Store(db).connect() as con:
        rows = Store.get_bench_results(con)
    assert [(r["dataset"], r["method"], r["mode"]) for r in rows] == [("toy_a", "s3kg", "paper")]


def test_rows_with_bytes_that_are_not_utf8_are_named(data_dir, tmp_path):
    path = data_dir / BENCHMARKS_SUBDIR / "toy_a.csv"
    lines = path.read_bytes().split(b"\n")
    lines[3] = lines[3].replace(b",", b",caf\xe9 ", 1)  # data row 3: a Latin-1 byte in a text
    path.write_bytes(b"\n".join(lines))
    result = _bench(
        "--dataset", "toy_a", "--data-dir", str(data_dir), "--methods", "s3kg", "--mode", "kgx",
        "--bootstrap", "5", "--json", str(tmp_path / "out.json"), "--protocol", "same",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "toy_a: non-UTF-8 text replaced with U+FFFD in data rows 3\n" in result.output


def test_all_writes_a_list_in_set_order(data_dir, tmp_path):
    out = tmp_path / "all.json"
    result = _bench(
        "--dataset", "all", "--data-dir", str(data_dir), "--methods", "s3kg",
        "--mode", "kgx", "--bootstrap", "5", "--json", str(out), "--protocol", "same",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert [d["dataset"] for d in data] == ["toy_a", "toy_b"]
    assert [d["n"] for d in data] == [8, 5]
    assert {d["mode"] for d in data} == {"kgx"}


def test_a_killed_all_run_resumes_with_the_sets_it_finished(data_dir, tmp_path, monkeypatch):
    """A run killed in its second set, rerun, scores only that set; the JSON equals an
    uninterrupted run's, and the finished set was already in the DB before the kill."""
    import s3kg_core.evaluation.pairs as runner

    real = runner.run_pair_benchmark
    scored: list[str] = []

    def killed_in_toy_b(pair_set, **kw):
        scored.append(pair_set.name)
        if pair_set.name == "toy_b" and scored.count("toy_b") == 1:
            raise KeyboardInterrupt
        return real(pair_set, **kw)

    monkeypatch.setattr(runner, "run_pair_benchmark", killed_in_toy_b)
    out, db = tmp_path / "all.json", tmp_path / "b.duckdb"
    args = [
        "--dataset", "all", "--data-dir", str(data_dir), "--methods", "s3kg", "--mode", "paper",
        "--bootstrap", "5", "--protocol", "same", "--json", str(out), "--db", str(db),
    ]  # fmt: skip
    first = _bench(*args)
    assert first.exit_code != 0 and not out.exists()
    partial = tmp_path / "all.json.partial.jsonl"
    assert [json.loads(line)["dataset"] for line in partial.read_text().splitlines()] == ["toy_a"]
    with Store(db).connect() as con:
        assert {r["dataset"] for r in Store.get_bench_results(con)} == {"toy_a"}
    second = _bench(*args)
    assert second.exit_code == 0, second.output
    assert scored == ["toy_a", "toy_b", "toy_b"] and "resumed from" in second.output
    assert not partial.exists()
    resumed = json.loads(out.read_text())
    assert _bench(*args).exit_code == 0  # a finished run leaves no partial: this one rescores
    assert scored[3:] == ["toy_a", "toy_b"]
    assert json.loads(out.read_text()) == resumed
    with Store(db).connect() as con:
        assert sorted(r["dataset"] for r in Store.get_bench_results(con)) == ["toy_a", "toy_b"]


def test_a_partial_file_of_other_options_is_not_reused(data_dir, tmp_path):
    out = tmp_path / "o.json"
    partial = tmp_path / "o.json.partial.jsonl"
    fake = {"dataset": "toy_a", "n": 8, "methods": {}, "encoder": "minilm", "mode": "paper"}
    row = {"dataset": "toy_a", "pairs": 8, "options": {"seed": 99}, "result": fake}
    partial.write_text(json.dumps(row) + "\n{not json")
    result = _bench(
        "--dataset", "toy_a", "--data-dir", str(data_dir), "--methods", "s3kg",
        "--bootstrap", "5", "--protocol", "same", "--json", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "resumed" not in result.output and not partial.exists()
    assert json.loads(out.read_text())["methods"]["s3kg"]["auroc"] == pytest.approx(1.0)


def test_unknown_dataset_is_a_one_line_error_listing_the_sets(data_dir, tmp_path):
    result = _bench("--dataset", "nope", "--data-dir", str(data_dir), "--json", str(tmp_path / "x"))
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert "unknown pair set 'nope'" in lines[0] and "toy_a, toy_b" in lines[0]
    assert not (tmp_path / "x").exists()


def test_all_with_no_sets_says_where_it_looked(tmp_path):
    result = _bench("--dataset", "all", "--data-dir", str(tmp_path), "--json", str(tmp_path / "x"))
    assert result.exit_code == 1
    assert "no pair sets under" in result.output


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--triples", "llm"], "--triples llm needs an endpoint"),
        (["--methods", "s3kg,bogus"], "unknown method(s) bogus"),
        (["--methods", " , "], "at least one method"),
    ],
)
def test_bad_options_fail_cleanly(data_dir, tmp_path, extra, message):
    result = _bench(
        "--dataset", "toy_a", "--data-dir", str(data_dir), "--json", str(tmp_path / "x"), *extra
    )  # fmt: skip
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output


def test_help_documents_every_option():
    result = _bench("--help")
    assert result.exit_code == 0
    for option in (
        "--dataset", "--data-dir", "--encoder", "--mode", "--protocol", "--triples", "--methods",
        "--bootstrap", "--seed", "--json", "--db", "--base-url", "--model",
    ):  # fmt: skip
        assert option in result.output
    assert "pairs" in CliRunner().invoke(cli, ["bench", "--help"]).output


def test_llm_triples_are_extracted_through_the_endpoint(tmp_path, monkeypatch):
    # A real local HTTP server speaking chat completions: every text becomes [A, verb, B]
    # triples; the first pair's text 2 is beyond repair, so its KG is empty and scores 0.
    from fake_openai import fake_openai
    from llm_helpers import toy_model

    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "S3KG_MODEL"):
        monkeypatch.delenv(var, raising=False)
    rows = [
        {"id": "a", "paragraph_1": "Aspirin reduces fever.", "kg_1": "[]",
         "paragraph_2": "BROKENJSON aspirin reduces fever.", "kg_2": "[]", "label": "0"},
        {"id": "b", "paragraph_1": "Curie won prizes.", "kg_1": "[]",
         "paragraph_2": "Curie won prizes.", "kg_2": "[]", "label": "1"},
        {"id": "c", "paragraph_1": "Sun heats earth.", "kg_1": "[]",
         "paragraph_2": "Moon orbits planets.", "kg_2": "[]", "label": "0"},
        {"id": "d", "paragraph_1": "Shakespeare wrote Hamlet.", "kg_1": "[]",
         "paragraph_2": "Shakespeare wrote Hamlet.", "kg_2": "[]", "label": "1"},
    ]  # fmt: skip
    root = tmp_path / "data"
    _write_set(root, "toy_llm", rows)
    out, db = tmp_path / "llm.json", tmp_path / "bench.duckdb"
    with fake_openai(toy_model) as server:
        args = [
            "--dataset", "toy_llm", "--data-dir", str(root), "--methods", "s3kg",
            "--protocol", "same", "--triples", "llm", "--base-url", server.base_url,
            "--model", "toy", "--api-key", "k", "--bootstrap", "5", "--json", str(out),
            "--db", str(db),
        ]  # fmt: skip
        result = _bench(*args)
        assert result.exit_code == 0, result.output
        asked = server.count()
        assert asked == 6  # every distinct text once (pairs b and d repeat their text)
        assert _bench(*args).exit_code == 0
        # the rerun reads every response from the DB cache but the unparseable one (BROKENJSON),
        # which is never cached: asked again (issue 17, D5)
        assert server.count() == asked + 1
    data = json.loads(out.read_text())
    assert data["triples"] == "llm"
    assert data["methods"]["s3kg"]["auroc"] == pytest.approx(1.0)


def test_a_set_too_small_for_the_dev_test_split_says_what_to_do(tmp_path):
    rows = separable_rows()
    root = tmp_path / "data"
    _write_set(root, "toy_c", [rows[0], rows[4], rows[1]])
    result = _bench("--dataset", "toy_c", "--data-dir", str(root), "--json", str(tmp_path / "x"))
    assert result.exit_code == 1
    assert "protocol 'same' for tiny sets" in result.output
    assert "Traceback" not in result.output


def test_a_json_path_below_a_file_is_refused_before_any_scoring(data_dir, tmp_path, monkeypatch):
    # Regression (issue 17, D10): the output path was first tried after every set was scored.
    import s3kg_core.evaluation.pairs as runner

    def no_run(*args, **kwargs):
        raise AssertionError("a set was scored before the output was checked")

    monkeypatch.setattr(runner, "run_pair_benchmark", no_run)
    (tmp_path / "some.csv").write_text("not a folder\n", encoding="utf-8")
    out = tmp_path / "some.csv" / "out.json"
    result = _bench("--dataset", "toy_a", "--data-dir", str(data_dir), "--json", str(out))
    assert result.exit_code == 1, result.output
    assert result.output == (
        f"Error: cannot write {out}: {tmp_path / 'some.csv'} is a file, not a folder\n"
    )


# -- bench bamboo (issue 41) -----------------------------------------------------------------------


def test_bamboo_prints_the_twelve_figures_and_writes_json_and_evidence(tmp_path):
    from bamboo_helpers import write_fake_bamboo

    from docsgen.evidence import read_evidence

    data, partial = tmp_path / "data", tmp_path / "partial"
    write_fake_bamboo(data)
    write_fake_bamboo(partial, missing=("para/reify",))
    out, evidence = tmp_path / "bamboo.json", tmp_path / "evidence" / "bamboo.json"
    args = ["bench", "bamboo", "--split", "dev", "--encoder", "minilm"]
    result = CliRunner().invoke(cli, [*args, "--data-dir", str(partial), "--json", str(out)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()  # stderr has the encoder's first load
    assert lines[0].startswith("BAMBOO dev: Pearson x100 (main, reify, syno), accuracy x100")
    assert "mode ot, alpha 0.5" in lines[0]
    assert [line.split()[0] for line in lines[3:6]] == ["S3KG", "S_WL", "S_SBERT"]
    assert lines[3].split()[6] == "n/a"  # PARA reify: its files are missing
    assert "mean of the 11 of 12 figures available" in result.output
    assert "44 graph pairs scored" in result.output and "pairs/s" in result.output
    payload = json.loads(out.read_text(encoding="utf-8"))
    assert payload["figures"]["s3kg"]["para"]["reify"] is None
    assert payload["figures"]["s_wl"]["sts"]["role_confusion"] == 100.0
    assert payload["available"] == 11 and payload["pairs"] == 44
    assert payload["signature"].startswith("mode:ot|enc:minilm")
    assert payload["signature"].endswith("|alpha:0.5")
    args += ["--data-dir", str(data)]
    result = CliRunner().invoke(cli, [*args, "--json", str(out), "--evidence", str(evidence)])
    assert result.exit_code == 0, result.output
    payload = json.loads(out.read_text(encoding="utf-8"))
    assert payload["available"] == 12 and payload["pairs"] == 48
    ev = read_evidence(evidence)
    entry = ev["figures"]["ours"]["ot"]["dev"]
    assert entry["mean"] == payload["mean"] and entry["commit"]
    assert entry["command"].startswith("s3kg bench bamboo --split dev --mode ot")
    assert ev["provenance"]["signature"] == payload["signature"]
    assert ev["provenance"]["transcribed"] is None
    # a second run in another mode adds its block and keeps the first
    again = CliRunner().invoke(cli, [*args, "--mode", "kgx", "--evidence", str(evidence)])
    assert again.exit_code == 0, again.output
    assert set(read_evidence(evidence)["figures"]["ours"]) == {"ot", "kgx"}


def _sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def published(tmp_path: Path) -> Path:
    """An evidence file with a BAMBOO entry, as evidence/bamboo.json holds."""
    from docsgen.evidence import write_evidence

    path = tmp_path / "evidence" / "bamboo.json"
    entry = {"mean": 67.504, "command": "s3kg bench bamboo", "commit": "abc"}
    write_evidence(path, {"ours": {"ot": {"dev": entry}}}, title="t", command="c", commit="abc")
    return path


def test_bamboo_with_nothing_to_score_exits_1_and_writes_nothing(tmp_path, published):
    """Regression (issue 59, items 2 and 11): an empty bamboo/ folder exited 0 ("mean of the 0
    of 12 figures available") and replaced the published entry's mean with null."""
    data = tmp_path / "data"
    (data / "bamboo").mkdir(parents=True)
    before, out = _sha(published), tmp_path / "out.json"
    args = ["bench", "bamboo", "--data-dir", str(data), "--evidence", str(published)]
    result = CliRunner().invoke(cli, [*args, "--json", str(out)])
    assert result.exit_code == 1, result.output
    assert result.output.startswith(
        "Error: nothing to score: none of the 12 BAMBOO tasks of the dev split has graph pairs"
    )
    assert result.output.rstrip().endswith("nothing was written")
    assert len(result.output.strip().splitlines()) == 1
    assert _sha(published) == before and not out.exists()


def test_bamboo_evidence_takes_complete_figures_only_refused_before_scoring(
    tmp_path, published, monkeypatch
):
    from bamboo_helpers import write_fake_bamboo

    import s3kg_core.evaluation.bamboo as bamboo

    def no_run(*args, **kwargs):
        raise AssertionError("scored before the missing figures were seen")

    monkeypatch.setattr(bamboo, "run_bamboo", no_run)
    data = tmp_path / "data"
    write_fake_bamboo(data, missing=("para/reify",))
    before, out = _sha(published), tmp_path / "out.json"
    args = ["bench", "bamboo", "--data-dir", str(data), "--evidence", str(published)]
    result = CliRunner().invoke(cli, [*args, "--json", str(out)])
    assert result.exit_code == 1, result.output
    assert result.output == (
        "Error: --evidence takes complete figures only, and 1 is missing (para/reify: "
        "para/reify/src.dev.amr, para/reify/tgt.dev.amr missing): nothing was written to "
        f"{published} (--json alone writes a partial result)\n"
    )
    assert _sha(published) == before and not out.exists()


def test_bamboo_evidence_with_a_figure_the_run_could_not_make_writes_nothing(
    tmp_path, published, monkeypatch
):
    """A task with graphs whose scores are all equal has no Pearson's r: the run prints its
    table, and neither file is written."""
    from bamboo_helpers import QuantScorer, write_fake_bamboo

    import s3kg_core.scoring.s3kg as s3kg

    class Constant(QuantScorer):
        def score_pairs(self, pairs, *, texts=None, progress=None):
            from s3kg_core.scoring.result import ScoreResult

            return [ScoreResult(0.5, 0.5, alpha=0.5, mode="ot") for _ in pairs]

    monkeypatch.setattr(s3kg, "KGScorer", lambda *args, **kwargs: Constant())
    data = tmp_path / "data"
    write_fake_bamboo(data)
    before, out = _sha(published), tmp_path / "out.json"
    args = ["bench", "bamboo", "--data-dir", str(data), "--evidence", str(published)]
    result = CliRunner().invoke(cli, [*args, "--json", str(out)])
    assert result.exit_code == 1, result.output
    assert "Error: --evidence takes complete figures only, and 27 are missing" in result.output
    assert "constant scores: Pearson's r is undefined" in result.output
    assert _sha(published) == before and not out.exists()


@pytest.mark.parametrize("content", ['{"results": [1, 2]}\n', "id,score\n1,0.5\n", "{"])
def test_bamboo_evidence_onto_another_file_is_refused_before_scoring(
    tmp_path, monkeypatch, content
):
    """Regression (issue 59, item 5): the evidence file was first read after the whole run, and
    a file that was not one ended it in a traceback, the result lost."""
    from bamboo_helpers import write_fake_bamboo

    import s3kg_core.evaluation.bamboo as bamboo

    def no_run(*args, **kwargs):
        raise AssertionError("scored before the evidence file was read")

    monkeypatch.setattr(bamboo, "run_bamboo", no_run)
    data, other = tmp_path / "data", tmp_path / "results.json"
    write_fake_bamboo(data)
    other.write_text(content, encoding="utf-8")
    args = ["bench", "bamboo", "--data-dir", str(data), "--evidence", str(other)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert result.output.startswith(f"Error: --evidence {other} cannot be updated: ")
    assert result.output.endswith("name an evidence file (evidence/NAME.json) or a new file\n")
    assert len(result.output.splitlines()) == 1
    assert other.read_text(encoding="utf-8") == content


@pytest.mark.parametrize("extra", [[], ["--wl-iterations", "3", "--tau", "0.7", "--alpha", "0"]])
def test_the_recorded_bamboo_command_reruns_the_same_figures(tmp_path, monkeypatch, extra):
    """Regression (issue 59, item 9): evidence/bamboo.json recorded ``--wl-iterations None``,
    which the command refuses, and left out --tau and --backend (chosen by the environment)."""
    import shlex

    from bamboo_helpers import write_fake_bamboo

    from docsgen.evidence import read_evidence

    monkeypatch.setenv("S3KG_ENCODER_BACKEND", "torch")  # not the default: must be recorded
    data, evidence = tmp_path / "data", tmp_path / "bamboo.json"
    write_fake_bamboo(data)
    args = ["bench", "bamboo", "--data-dir", str(data), "--evidence", str(evidence), *extra]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    entry = read_evidence(evidence)["figures"]["ours"]["ot"]["dev"]
    words = shlex.split(entry["command"])
    assert words[:3] == ["s3kg", "bench", "bamboo"]
    assert "None" not in words and {"--tau", "--backend", "--alpha"} <= set(words)
    assert words[words.index("--backend") + 1] == "torch"
    monkeypatch.delenv("S3KG_ENCODER_BACKEND")
    again = CliRunner().invoke(cli, words[1:])
    assert again.exit_code == 0, again.output
    rerun = read_evidence(evidence)["figures"]["ours"]["ot"]["dev"]
    assert rerun["figures"] == entry["figures"] and rerun["signature"] == entry["signature"]
    assert rerun["command"] == entry["command"]


def test_bamboo_without_its_data_is_one_line(tmp_path):
    result = CliRunner().invoke(cli, ["bench", "bamboo", "--data-dir", str(tmp_path)])
    assert result.exit_code == 1
    assert result.output.startswith("Error: no BAMBOO data at")
    assert len(result.output.strip().splitlines()) == 1


def test_bamboo_help_documents_every_option():
    result = CliRunner().invoke(cli, ["bench", "bamboo", "--help"])
    assert result.exit_code == 0
    for option in (
        "--split", "--data-dir", "--encoder", "--mode", "--alpha", "--tau", "--json",
        "--evidence", "--backend",
    ):  # fmt: skip
        assert option in result.output
    assert "bamboo" in CliRunner().invoke(cli, ["bench", "--help"]).output


# -- bench direction -------------------------------------------------------------------------------


def _direction(*args: str) -> object:
    return CliRunner().invoke(cli, ["bench", "direction", *args])


def test_direction_prints_the_table_and_writes_json_and_evidence(tmp_path):
    from docsgen.evidence import read_evidence

    data = tmp_path / "data"
    rows = [
        {"id": str(i), "paragraph_1": "a", "paragraph_2": "b", "kg_2": "[]", "label": str(i % 2),
         "kg_1": json.dumps([[h, r, t]])}
        for i, (h, r, t) in enumerate([
            ("Fleming", "discovered", "penicillin"), ("Newton", "wrote", "Principia"),
            ("Bees", "pollinate", "flowers"), ("Shakers", "built", "barns"),
        ])
    ]  # fmt: skip
    _write_set(data, "toy_d", rows)
    out, evidence = tmp_path / "direction.json", tmp_path / "evidence" / "direction.json"
    args = ["--split", "all", "--modes", "paper,kgx", "--data-dir", str(data)]
    result = _direction(*args, "--json", str(out), "--evidence", str(evidence))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()  # stderr has the encoder's first load
    assert lines[0].startswith("Direction suite, dev split: ")
    assert "comparisons" in lines[0] and "drawn)" in lines[0]
    assert lines[1].split() == [
        "mode", "accuracy", "keep", "passive", "inverse", "synonym", "symmetr", "swap",
        "pas.old", "replace", "change",
    ]  # fmt: skip
    assert [line.split()[0] for line in lines[2:4]] == ["paper", "kgx"]
    assert "Direction suite, test split: " in result.output
    assert "Direction suite, all facts: " in result.output
    assert "note:" not in result.output  # the data folder had a pair set: facts were drawn
    payload = json.loads(out.read_text(encoding="utf-8"))
    assert [p["mode"] for p in payload] == ["paper", "kgx"]
    assert payload[0]["facts"]["drawn"] == 4 and payload[0]["facts"]["written"] >= 150
    assert {s["source"] for s in payload[0]["scores"]} == {"written", "drawn"}
    assert payload[0]["signature"].startswith("mode:paper|enc:minilm")
    ev = read_evidence(evidence)
    assert set(ev["figures"]["modes"]) == {"paper", "kgx"}
    entry = ev["figures"]["modes"]["paper"]["dev"]
    assert entry["accuracy"] == payload[0]["metrics"]["dev"]["accuracy"]
    assert set(entry["family_means"]) == {
        "passive", "inverse", "synonym", "symmetric", "swap", "passive_old_order",
        "entity_replaced",
    }  # fmt: skip
    assert entry["command"].startswith("s3kg bench direction --split all --modes paper,kgx")
    assert entry["commit"] and entry["split_rule"] == "direction-facts-v1"
    assert ev["provenance"]["signature"] == payload[0]["signature"]  # the first mode's
    assert f"updated {evidence} (modes/paper/dev, paper/test" in result.output
    # a later run in another mode adds its block and keeps the others
    again = _direction("--mode", "hybrid", "--no-drawn", "--evidence", str(evidence))
    assert again.exit_code == 0, again.output
    modes = read_evidence(evidence)["figures"]["modes"]
    assert set(modes) == {"paper", "kgx", "hybrid"} and set(modes["hybrid"]) == {"dev"}
    assert list(modes["hybrid"]["dev"]["by_source"]) == ["written"]
    assert modes["hybrid"]["dev"]["drawn_note"] == "drawn facts not asked for"


def test_direction_without_the_data_folder_runs_on_the_written_facts_and_says_so(tmp_path):
    result = _direction("--split", "test", "--mode", "paper", "--data-dir", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Direction suite, test split: ")
    assert ", 0 drawn)" in result.stdout.splitlines()[0]
    assert f"note: no pair sets under {tmp_path / BENCHMARKS_SUBDIR}" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mode", "ot", "--modes", "ot,kgx"], "give --mode or --modes, not both"),
        (["--modes", "ot,nope"], "unknown mode(s) nope"),
        (["--modes", " , "], "give at least one mode"),
        (["--split", "train"], "'train' is not one of"),
    ],
)
def test_direction_bad_options_are_usage_errors(args, message):
    result = _direction(*args)
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output


def test_direction_help_documents_every_option():
    result = _direction("--help")
    assert result.exit_code == 0
    for option in (
        "--mode", "--modes", "--split", "--data-dir", "--drawn", "--no-drawn", "--encoder",
        "--backend", "--alpha", "--json", "--evidence",
    ):  # fmt: skip
        assert option in result.output
    assert "direction" in CliRunner().invoke(cli, ["bench", "--help"]).output


def test_bamboo_with_a_deeply_nested_graph_is_one_line(tmp_path):
    """Regression (issue 59, item 4): a RecursionError traceback from `bench bamboo` too."""
    from bamboo_helpers import write_fake_bamboo
    from test_amr import nested_penman

    data = tmp_path / "data"
    write_fake_bamboo(data)
    syno = data / "bamboo" / "sick" / "syno" / "tgt.dev.amr"
    blocks = syno.read_text(encoding="utf-8").split("\n\n")
    blocks[2] = nested_penman(500).strip()
    syno.write_text("\n\n".join(blocks), encoding="utf-8")
    result = CliRunner().invoke(cli, ["bench", "bamboo", "--data-dir", str(data)])
    assert result.exit_code == 1
    assert result.output.startswith("Error: tgt.dev.amr, block 3 (line ")
    assert result.output.rstrip().endswith("nested more than 100 parentheses deep (the limit)")
    assert len(result.output.splitlines()) == 1
