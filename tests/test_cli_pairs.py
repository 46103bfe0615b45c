"""Tests of ``s3kg pairs score`` (s3kg_core.cli.pairs), its help, and ``python -m s3kg_core``."""

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from s3kg_core.cli import cli
from s3kg_core.encoders.backend import DEFAULT_BACKEND

REPO = Path(__file__).resolve().parents[1]
PAWS = "s3kg_release/benchmarks_kgs/paws_wiki_400_KGs.csv"


def _write_pairs(path: Path, rows: list[list[str]], header=("id", "kg_1", "kg_2")) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


KG = json.dumps([["Griese", "was_injured_in", "season"], ["Griese", "relieved_by", "Grossman"]])


def test_scores_good_and_bad_rows_without_stopping(tmp_path):
    src = _write_pairs(
        tmp_path / "in.csv",
        [
            ["a", KG, KG],
            ["b", "[]", KG],
            ["c", KG, "[]"],
            ["d", KG, '[["x", "r", "y"]]137'],
            ["e", "[('a', 'r')]", KG],
            ["f", str([["a", "r", "b"], ["too", "many", "parts", "here"]]), KG],
        ],
    )
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(cli, ["pairs", "score", str(src), "-o", str(out)])
    assert result.exit_code == 0, result.output
    rows = _read(out)
    assert list(rows[0]) == ["id", "s_wl", "s_sbert", "s3kg", "status"]
    status = {r["id"]: r["status"] for r in rows}
    assert status == {
        "a": "ok",
        "b": "empty_kg_1",
        "c": "empty_kg_2",
        "d": "unparseable_kg_2",
        "e": "empty_kg_1",
        "f": "ok",
    }
    assert float(rows[0]["s3kg"]) == pytest.approx(1.0, abs=1e-6)
    for r in rows[1:5]:
        assert (float(r["s_wl"]), float(r["s_sbert"]), float(r["s3kg"])) == (0.0, 0.0, 0.0)
    summary = result.output.strip().splitlines()[-1]
    assert summary.startswith("scored 2/6 pairs")
    assert "2 malformed triples dropped" in summary
    assert "signature mode:ot|enc:minilm@" in summary and summary.endswith("|alpha:0.5")


def test_non_utf8_bytes_and_ragged_rows_are_reported(tmp_path):
    src = tmp_path / "in.csv"
    src.write_bytes(
        b"id,kg_1,kg_2\n"
        b'1,"[[""caf\xe9"", ""serves"", ""tea""]]","[[""cafe"", ""serves"", ""tea""]]"\n'
        b'2,"[[""a"", ""r"", ""b""]]","[[""a"", ""r"", ""b""]]",glued,fields\n'
    )
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(cli, ["pairs", "score", str(src), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert [r["status"] for r in _read(out)] == ["ok", "ok"]
    # Regression: the summary counted the rows with replaced bytes but did not say which.
    assert "1 rows with non-UTF-8 text replaced (id 1)" in result.output
    assert "1 rows with extra fields" in result.output


def test_a_5000_digit_number_in_a_kg_cell_drops_its_triple(tmp_path):
    # Regression (issue 17, D1): the ValueError of json.loads ("Exceeds the limit (4300 digits)
    # for integer string conversion") aborted the run with a traceback.
    src = _write_pairs(
        tmp_path / "in.csv", [["1", f'[[{"9" * 5000}, "r", "b"]]', KG], ["2", KG, KG]]
    )
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(cli, ["pairs", "score", str(src), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert [(r["id"], r["status"]) for r in _read(out)] == [("1", "empty_kg_1"), ("2", "ok")]
    assert "1 malformed triples dropped" in result.output


def test_a_lone_surrogate_in_a_kg_cell_is_replaced_and_reported(tmp_path):
    # Regression (issue 17, D2): [["\ud800","r","b"]] reached the tokenizer, which raised
    # TypeError after the encoding: a traceback and no output file.
    src = _write_pairs(tmp_path / "in.csv", [["1", r'[["\ud800", "r", "b"]]', KG], ["2", KG, KG]])
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(cli, ["pairs", "score", str(src), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert [(r["id"], r["status"]) for r in _read(out)] == [("1", "ok"), ("2", "ok")]
    assert "1 rows with non-UTF-8 text replaced (id 1)" in result.output


def test_missing_column_is_a_one_line_error_and_keeps_old_output(tmp_path):
    src = _write_pairs(tmp_path / "in.csv", [["1", KG]], header=("id", "kg_1"))
    out = tmp_path / "out.csv"
    out.write_text("previous results\n")
    result = CliRunner().invoke(cli, ["pairs", "score", str(src), "-o", str(out)])
    assert result.exit_code == 1
    assert result.output.startswith("Error: in.csv: missing column(s) kg_2")
    assert "found id, kg_1" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert out.read_text() == "previous results\n"


def test_an_output_below_a_file_is_refused_before_any_scoring(tmp_path, monkeypatch):
    # Regression (issue 17, D10): `-o some.csv/out.csv` scored every pair, then ended in a
    # FileExistsError traceback.
    import s3kg_core.scoring.s3kg as s3kg

    def no_scorer(*args, **kwargs):
        raise AssertionError("the scorer was built before the output was checked")

    monkeypatch.setattr(s3kg, "KGScorer", no_scorer)
    src = _write_pairs(tmp_path / "in.csv", [["1", KG, KG]])
    (tmp_path / "some.csv").write_text("not a folder\n", encoding="utf-8")
    out = tmp_path / "some.csv" / "out.csv"
    result = CliRunner().invoke(cli, ["pairs", "score", str(src), "-o", str(out)])
    assert result.exit_code == 1, result.output
    assert result.output == (
        f"Error: cannot write {out}: {tmp_path / 'some.csv'} is a file, not a folder\n"
    )


def test_scores_are_kept_when_the_output_cannot_be_written(tmp_path, monkeypatch):
    # Regression (issue 17, D10): a write that failed after the scoring lost the scores.
    import tempfile

    from s3kg_core.cli import _common

    rescue = tmp_path / "rescue"
    rescue.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(rescue))
    src = _write_pairs(tmp_path / "in.csv", [["1", KG, KG], ["2", "[]", KG]])
    out = tmp_path / "out.csv"
    real_replace = os.replace

    def replace(src_path, dst_path):
        if Path(dst_path) == out:
            raise OSError(28, "No space left on device")
        real_replace(src_path, dst_path)

    monkeypatch.setattr(_common.os, "replace", replace)
    result = CliRunner().invoke(cli, ["pairs", "score", str(src), "-o", str(out)])
    assert result.exit_code == 1, result.output
    (saved,) = rescue.glob("s3kg-out-*.csv")
    assert result.output == (
        f"Error: cannot write {out}: No space left on device; the output is saved in {saved}\n"
    )
    assert [(r["id"], r["status"]) for r in _read(saved)] == [("1", "ok"), ("2", "empty_kg_1")]
    assert not out.exists()


def test_unknown_encoder_is_a_clean_error(tmp_path):
    src = _write_pairs(tmp_path / "in.csv", [["1", KG, KG]])
    result = CliRunner().invoke(
        cli, ["pairs", "score", str(src), "-o", str(tmp_path / "o.csv"), "--encoder", "nope"]
    )
    assert result.exit_code == 1
    assert "Error: unknown encoder 'nope'" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("option", "value"), [("--alpha", "1.5"), ("--tau", "-0.1"), ("--wl-iterations", "0")]
)
def test_out_of_range_options_are_usage_errors(tmp_path, option, value):
    src = _write_pairs(tmp_path / "in.csv", [["1", KG, KG]])
    result = CliRunner().invoke(
        cli, ["pairs", "score", str(src), "-o", str(tmp_path / "o.csv"), option, value]
    )
    assert result.exit_code == 2
    assert option in result.output


def test_alpha_changes_the_blend_but_not_the_components(tmp_path):
    other = json.dumps([["Griese", "was_injured_in", "season"], ["Grossman", "relieved", "Griese"]])
    src = _write_pairs(tmp_path / "in.csv", [["1", KG, other]])
    runs = {}
    for alpha in ("0", "1"):
        out = tmp_path / f"o{alpha}.csv"
        assert (
            CliRunner()
            .invoke(cli, ["pairs", "score", str(src), "-o", str(out), "--alpha", alpha])
            .exit_code
            == 0
        )
        runs[alpha] = _read(out)[0]
    assert runs["0"]["s_wl"] == runs["1"]["s_wl"]
    assert float(runs["0"]["s3kg"]) == pytest.approx(float(runs["0"]["s_wl"]))
    assert float(runs["1"]["s3kg"]) == pytest.approx(float(runs["1"]["s_sbert"]))


@pytest.mark.shared_data
def test_kgx_no_align_reproduces_published_pure_wl(tmp_path, shared_data):
    src_rows = [r for r in _read(shared_data / PAWS) if r["id"] in {"0", "2", "9", "12"}]
    src = _write_pairs(tmp_path / "in.csv", [[r["id"], r["kg_1"], r["kg_2"]] for r in src_rows])
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(
        cli, ["pairs", "score", str(src), "-o", str(out), "--mode", "kgx", "--no-align"]
    )
    assert result.exit_code == 0, result.output
    got = {r["id"]: float(r["s_wl"]) for r in _read(out)}
    expected = {
        "0": 0.8333333333333334,
        "2": 0.3333333333333333,
        "9": 0.6708203932499369,
        "12": 0.4444444444444444,
    }
    assert got == pytest.approx(expected, abs=1e-9)
    assert "mode:kgx" in result.output and "align:no" in result.output


def test_text_mode_is_refused_without_texts(tmp_path):
    """Issue 19: `pairs score` reads KGs only, so the text mode (which needs the texts) is a
    usage error that says where to use it, before any model is loaded."""
    src = _write_pairs(tmp_path / "in.csv", [["1", '[["a", "r", "b"]]', '[["a", "r", "b"]]']])
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(cli, ["pairs", "score", str(src), "-o", str(out), "--mode", "text"])
    assert result.exit_code == 2, result.output
    assert "--mode text needs the two texts of each pair" in result.output
    assert "s3kg score" in result.output and not out.exists()


def test_help_texts_name_every_option():
    runner = CliRunner()
    top = runner.invoke(cli, ["--help"])
    assert top.exit_code == 0 and "pairs" in top.output
    sub = runner.invoke(cli, ["pairs", "score", "--help"])
    assert sub.exit_code == 0
    for option in (
        "--output",
        "--mode",
        "--no-align",
        "--encoder",
        "--alpha",
        "--tau",
        "--wl-iterations",
    ):
        assert option in sub.output


def test_python_dash_m_runs_the_same_cli():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-m", "s3kg_core", "pairs", "score", "--help"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Usage: s3kg pairs score" in proc.stdout


def test_backend_option_and_variable_choose_the_runtime_and_the_signature_says_which(
    tmp_path, monkeypatch
):
    src = _write_pairs(tmp_path / "in.csv", [["a", KG, KG], ["b", KG, '[["Griese", "r", "x"]]']])
    monkeypatch.delenv("S3KG_ENCODER_BACKEND", raising=False)
    runs = {}
    for label, args, env in [
        ("default", [], None),
        ("openvino", ["--backend", "openvino"], None),
        ("torch-env", [], "torch"),
        ("option-wins", ["--backend", "openvino"], "torch"),
    ]:
        if env is None:
            monkeypatch.delenv("S3KG_ENCODER_BACKEND", raising=False)
        else:
            monkeypatch.setenv("S3KG_ENCODER_BACKEND", env)
        out = tmp_path / f"{label}.csv"
        result = CliRunner().invoke(cli, ["pairs", "score", str(src), "-o", str(out), *args])
        assert result.exit_code == 0, result.output
        summary = result.output.strip().splitlines()[-1]
        runs[label] = (summary.split("|enc:")[1].split("|")[0], _read(out))
    assert runs["default"][0].endswith(f"+{DEFAULT_BACKEND}")
    assert runs["openvino"][0].endswith("+openvino")
    assert runs["option-wins"][0].endswith("+openvino")
    assert "+" not in runs["torch-env"][0]  # torch's name is the one stored before backends
    for label in ("default", "openvino", "option-wins"):
        for got, ref in zip(runs[label][1], runs["torch-env"][1], strict=True):
            assert float(got["s3kg"]) == pytest.approx(float(ref["s3kg"]), abs=1e-3)
    bad = CliRunner().invoke(cli, ["pairs", "score", str(src), "-o", "x.csv", "--backend", "gpu"])
    assert bad.exit_code == 2


def test_output_ids_that_a_spreadsheet_would_run_are_escaped(tmp_path):
    """Regression (issue 28, item 8): `pairs score` copied ids such as `=2+5` into its CSV."""
    src = _write_pairs(tmp_path / "in.csv", [["=2+5", "[]", "[]"], ["@SUM(1)", "[]", "[]"]])
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(cli, ["pairs", "score", str(src), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert [r["id"] for r in _read(out)] == ["'=2+5", "'@SUM(1)"]


def test_a_5mb_label_a_crlf_label_a_nul_id_and_a_spaced_header(tmp_path):
    """Regression (issue 28, items 5, 11): one 5 MB label took 1.76 GB; a label with CRLF made
    its KG unparseable; an id with NUL was copied raw; `id, kg_1, kg_2` was rejected."""
    huge = json.dumps([["x" * 5_000_000, "r", "b"]])
    crlf = json.dumps([["Griese\r\nsenior", "was_injured_in", "season"]])
    src = _write_pairs(
        tmp_path / "in.csv",
        [["huge", KG, huge], ["crlf", crlf, KG], ["a\x00b", KG, KG]],
        header=("id", " kg_1", " kg_2"),
    )
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(cli, ["pairs", "score", str(src), "-o", str(out)])
    assert result.exit_code == 0, result.output
    rows = _read(out)
    assert [(r["id"], r["status"]) for r in rows] == [
        ("huge", "oversized_kg_2"),
        ("crlf", "ok"),
        ("ab", "ok"),
    ]
    assert float(rows[1]["s3kg"]) > 0.3 and rows[0]["s3kg"] == "0.0"
    assert "1 oversized_kg_2" in result.output
    assert "1 ids with control or formatting characters removed" in result.output
    assert "1 rows over the size limits (id huge: kg_2: a label of 5,000,000 characters" in (
        result.output
    )


def test_help_states_the_size_limits():
    from s3kg_core.limits import MAX_LABEL_CHARS, MAX_TRIPLES

    out = " ".join(CliRunner().invoke(cli, ["pairs", "score", "--help"]).output.split())
    assert f"more than {MAX_TRIPLES:,} triples" in out
    assert f"label of more than {MAX_LABEL_CHARS:,} characters" in out
    assert "input file (INPUT_CSV or a PENMAN file) over 64 MB" in out
    assert "S3KG_MAX_INPUT_MB=<megabytes> raises the cap" in out


def test_a_pair_csv_past_the_input_cap_is_one_line_and_writes_nothing(tmp_path):
    """Regression (issue 59): a pair CSV of any size was read whole."""
    src, out = tmp_path / "pairs.csv", tmp_path / "out.csv"
    src.write_text("id,kg_1,kg_2\n" + '1,"[[""a"", ""r"", ""b""]]",[]\n' * 40_000)
    result = CliRunner().invoke(
        cli, ["pairs", "score", str(src), "-o", str(out)], env={"S3KG_MAX_INPUT_MB": "1"}
    )
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: pairs.csv holds 1.2 MB; a CSV file takes at most 1.0 MB: split it into files of "
        "whole rows, or raise the cap with S3KG_MAX_INPUT_MB=<megabytes>"
    ]
    assert not out.exists()


def test_a_missing_dependency_is_one_line_with_the_install_hint(tmp_path, monkeypatch):
    # Regression (issue 34): a package that is not installed (here lemminflect, which the label
    # normalisation imports on first use) printed a traceback; now one line says what to install.
    from s3kg_core import normalize

    monkeypatch.setitem(sys.modules, "lemminflect", None)  # import of lemminflect fails
    normalize.normalize_label.cache_clear()  # the label is new: _lemma has not seen it either
    inp = _write_pairs(
        tmp_path / "in.csv", [["1", '[["zebrafied", "r", "b"]]', '[["a", "r", "b"]]']]
    )
    try:
        result = CliRunner().invoke(
            cli, ["pairs", "score", str(inp), "--output", str(tmp_path / "o")]
        )
    finally:
        normalize.normalize_label.cache_clear()
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit)  # not the ModuleNotFoundError
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert errors == [
        "Error: the package lemminflect is not installed: pip install lemminflect "
        "(a dependency of s3kg-workbench: pip install s3kg-workbench)"
    ]
    assert "Traceback" not in result.output
    assert not (tmp_path / "o").exists()


# -- two parallel PENMAN (AMR) files (issue 41) ----------------------------------------------------

SRC_AMR = """# ::id p1
# ::snt A man is dancing.
(d / dance-01 :ARG0 (m / man))

# ::snt The mouse feeds the man.
(f / feed-01 :ARG0 (m / mouse) :ARG1 (n / man))

(l / line)
"""
TGT_AMR = """# ::id q1
(d / dance-01 :ARG0 (m / man))

(f / feed-01 :ARG0 (n / man) :ARG1 (m / mouse))

(x / line)
"""


def test_two_penman_files_are_scored_graph_by_graph(tmp_path):
    src, tgt = tmp_path / "src.amr", tmp_path / "tgt.amr"
    src.write_text(SRC_AMR, encoding="utf-8")
    tgt.write_text(TGT_AMR, encoding="utf-8")
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(cli, ["pairs", "score", str(src), str(tgt), "-o", str(out)])
    assert result.exit_code == 0, result.output
    rows = _read(out)
    assert list(rows[0]) == ["id", "s_wl", "s_sbert", "s3kg", "status"]
    # the first file's # ::id, else the graph's index from 0
    assert [(r["id"], r["status"]) for r in rows] == [("p1", "ok"), ("1", "ok"), ("2", "ok")]
    assert float(rows[0]["s3kg"]) == pytest.approx(1.0, abs=1e-6)
    assert float(rows[1]["s_wl"]) < 1.0  # two roles swapped
    assert float(rows[2]["s3kg"]) == pytest.approx(1.0, abs=1e-6)  # one-node graphs
    assert result.output.strip().splitlines()[-1].startswith("scored 3/3 pairs")


def test_penman_files_of_different_lengths_are_one_line_naming_both_counts(tmp_path):
    src, tgt = tmp_path / "src.amr", tmp_path / "tgt.amr"
    src.write_text(SRC_AMR, encoding="utf-8")
    tgt.write_text(TGT_AMR.rsplit("\n\n", 1)[0], encoding="utf-8")
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(cli, ["pairs", "score", str(src), str(tgt), "-o", str(out)])
    assert result.exit_code == 1
    assert result.output.startswith("Error: src.amr has 3 graphs and tgt.amr has 2")
    assert len(result.output.strip().splitlines()) == 1
    assert not out.exists()


def test_a_malformed_penman_block_is_one_line_naming_file_and_block(tmp_path):
    src, tgt = tmp_path / "src.amr", tmp_path / "tgt.amr"
    src.write_text(SRC_AMR.replace("(l / line)", "(l / line :mod (w / long)"), encoding="utf-8")
    tgt.write_text(TGT_AMR, encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["pairs", "score", str(src), str(tgt), "-o", str(tmp_path / "o.csv")]
    )
    assert result.exit_code == 1
    assert result.output.startswith("Error: src.amr, block 3 (line 8): malformed PENMAN")
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output


def test_three_inputs_are_a_usage_error(tmp_path):
    src = tmp_path / "src.amr"
    src.write_text(SRC_AMR, encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["pairs", "score", str(src), str(src), str(src), "-o", str(tmp_path / "o.csv")]
    )
    assert result.exit_code == 2
    assert "give one CSV of KG pairs or two PENMAN files; got 3 inputs" in result.output
    assert "INPUT_CSV | SRC.amr TGT.amr" in CliRunner().invoke(cli, ["pairs", "score", "-h"]).output


def test_a_deeply_nested_penman_graph_is_one_line_and_writes_nothing(tmp_path):
    """Regression (issue 59, item 4): 500 levels gave a 2,996-line RecursionError traceback."""
    from test_amr import nested_penman

    src, tgt, out = tmp_path / "src.amr", tmp_path / "tgt.amr", tmp_path / "o.csv"
    src.write_text("(d / dog)\n\n" + nested_penman(500), encoding="utf-8")
    tgt.write_text("(d / dog)\n\n(c / cat)\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["pairs", "score", str(src), str(tgt), "-o", str(out)])
    assert result.exit_code == 1
    assert result.output == (
        "Error: src.amr, block 2 (line 3): malformed PENMAN: nested more than 100 parentheses "
        "deep (the limit)\n"
    )
    assert not out.exists()


def _raw_terminal_codes(text: str) -> list[str]:
    """The characters of ``text`` a terminal would act on or hide (ESC, BEL, U+202E...)."""
    from s3kg_core.names import name_problem

    return [c for c in text if c not in "\n" and name_problem(c) is not None]


def test_penman_ids_lose_terminal_escapes_in_the_csv_and_the_output(tmp_path):
    """Regression (issue 59, item 10): a ``# ::id`` with ESC ]0; ... BEL and U+202E was printed
    raw and written raw into the CSV."""
    src, tgt, out = tmp_path / "src.amr", tmp_path / "tgt.amr", tmp_path / "o.csv"
    evil = "q\x1b]0;owned\x07\u202e7"
    src.write_text(f"# ::id {evil}\n(d / dog)\n\n# ::id ok\n(c / cat)\n", encoding="utf-8")
    tgt.write_text("(d / dog)\n\n(c / cat)\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["pairs", "score", str(src), str(tgt), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert [r["id"] for r in _read(out)] == ["q]0;owned7", "ok"]
    assert "1 ids with control or formatting characters removed" in result.stdout
    assert _raw_terminal_codes(result.output) == []
    assert _raw_terminal_codes(out.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    ("problem", "status", "shown"),
    [
        ("malformed", 1, "bad\\x1b]0;owned\\x07\\u202e.amr, block 1 (line 1): malformed PENMAN"),
        ("absent", 2, "bad\\x1b]0;owned\\x07\\u202e.amr' does not exist"),  # click's own
        ("output", 1, "bad\\x1b[2J\\u202e.csv is a file, not a folder"),
    ],
)
def test_a_file_name_with_terminal_escapes_is_printed_escaped(tmp_path, problem, status, shown):
    """Regression (issue 59, item 10): an ESC in an .amr file name reached the terminal in the
    error; every error line shows such a character as its escape."""
    src, tgt = tmp_path / "bad\x1b]0;owned\x07\u202e.amr", tmp_path / "tgt.amr"
    tgt.write_text("(d / dog)\n", encoding="utf-8")
    if problem != "absent":
        src.write_text("(d / dog :ARG0 )\n" if problem == "malformed" else "(d / dog)\n")
    out = tmp_path / "o.csv"
    if problem == "output":
        (tmp_path / "bad\x1b[2J\u202e.csv").write_text("a file, not a folder\n")
        out = tmp_path / "bad\x1b[2J\u202e.csv" / "o.csv"
    result = CliRunner().invoke(cli, ["pairs", "score", str(src), str(tgt), "-o", str(out)])
    assert result.exit_code == status, result.output
    assert _raw_terminal_codes(result.output) == []
    error = result.output.strip().splitlines()[-1]
    assert error.startswith("Error: ") and shown in error


def test_large_penman_input_is_named_without_reading_it_whole(tmp_path):
    """Regression (issue 59, item 8): a graph of more roles than the triples a KG may have was
    decoded whole before it was called oversized_kg_1, and a file of many graphs against one
    was decoded whole before the counts were compared."""
    from s3kg_core.limits import MAX_TRIPLES

    big, one, many = tmp_path / "big.amr", tmp_path / "one.amr", tmp_path / "many.amr"
    roles = "".join(f" :mod (b{i} / y)" for i in range(MAX_TRIPLES + 1))
    big.write_text(f"# ::id big\n(a / x{roles})\n", encoding="utf-8")
    one.write_text("(d / dog)\n", encoding="utf-8")
    many.write_text("\n\n".join(f"(a{i} / dog)" for i in range(50_000)) + "\n", encoding="utf-8")
    out = tmp_path / "o.csv"
    result = CliRunner().invoke(cli, ["pairs", "score", str(big), str(one), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert [(r["id"], r["status"]) for r in _read(out)] == [("big", "oversized_kg_1")]
    assert f"id big: kg_1: more than {MAX_TRIPLES:,} triples ({MAX_TRIPLES + 1:,} roles" in (
        result.stdout
    )
    result = CliRunner().invoke(cli, ["pairs", "score", str(many), str(one), "-o", str(out)])
    assert result.exit_code == 1
    assert result.output == (
        "Error: many.amr has 50000 graphs and one.amr has 1: parallel files need one graph "
        "per pair, in the same order\n"
    )
