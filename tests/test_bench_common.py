"""Tests of bench/_common.py: what every bench script shares."""

from __future__ import annotations

import argparse
import doctest
import json
import re
from pathlib import Path

import bench._common as common
from bench._common import add_data_dir, print_load, text_table, write_figures


def test_the_doctests_pass():
    assert doctest.testmod(common).failed == 0


def test_text_table_aligns_columns_and_rules_the_header():
    out = text_table(
        ["set", "n", "pairs/s"], [["paws", "400", "27.7"], ["all", "3281", "4.5"]], {1, 2}
    )
    assert out.splitlines() == [
        "set      n  pairs/s",
        "----  ----  -------",
        "paws   400     27.7",
        "all   3281      4.5",
    ]


def test_the_data_dir_default_is_the_librarys(tmp_path, monkeypatch):
    monkeypatch.setenv("S3KG_DATA_DIR", str(tmp_path))
    parser = argparse.ArgumentParser()
    add_data_dir(parser)
    assert parser.parse_args([]).data_dir == tmp_path
    assert parser.parse_args(["--data-dir", "x"]).data_dir == Path("x")
    monkeypatch.delenv("S3KG_DATA_DIR")
    monkeypatch.chdir(tmp_path)
    parser = argparse.ArgumentParser()
    add_data_dir(parser)
    assert parser.parse_args([]).data_dir == tmp_path.parent / "shared" / "data"


def test_print_load_prints_one_line_and_returns_it(capsys):
    load = print_load("before")
    assert re.fullmatch(r"\d+\.\d\d \d+\.\d\d \d+\.\d\d", load)
    assert capsys.readouterr().out == f"load average before: {load}\n"


def test_write_figures_writes_json_only_when_asked(tmp_path):
    write_figures(None, {"a": 1})
    path = tmp_path / "deep" / "f.json"
    write_figures(path, {"a": 1, "p": Path("x")})
    assert json.loads(path.read_text(encoding="utf-8")) == {"a": 1, "p": "x"}
