"""bench/speed/bench_search.py: its figures, printed and added to an evidence file."""

from __future__ import annotations

import doctest

import bench.speed.bench_search as bench_search
from docsgen import VIEWS
from docsgen.evidence import read_evidence, write_evidence


def test_doctests():
    result = doctest.testmod(bench_search)
    assert result.attempted > 0 and result.failed == 0


def test_a_run_is_added_to_the_evidence_by_its_answers(tmp_path, capsys):
    from store_helpers import build_store

    db = build_store(tmp_path / "s.duckdb", n_items=6).path
    out = tmp_path / "search.json"
    write_evidence(
        out,
        {"databases": {"100000": {"answers": 100000, "searches": []}}},
        title="t",
        command="c",
        commit="abc",
        transcribed={"from": "bench/README.md", "run": "2026-12-02"},
    )
    bench_search.main([str(db), "--repeats", "1", "--json", str(out)])
    ev = read_evidence(out)
    entry = ev["figures"]["databases"]["12"]
    assert entry["answers"] == 12 and entry["runs"] == 2 and entry["repeats"] == 1
    assert entry["db"] == "s.duckdb" and entry["db_mb"] > 0 and entry["load_before"]
    assert [s["search"] for s in entry["searches"]][:3] == [
        "words: 'the'",
        entry["searches"][1]["search"],
        "words: 'zzqx' (no match)",
    ]
    assert entry["searches"][2]["matched"] == 0
    assert "100000" in ev["figures"]["databases"]  # the other database is kept
    assert ev["provenance"]["transcribed"]["from"] == "bench/README.md"
    printed = capsys.readouterr().out
    assert "| words: 'zzqx' (no match) | 0 |" in printed and f"wrote {out}" in printed


def test_the_views_render_each_database_of_the_committed_evidence():
    from docsgen.evidence import load_all

    ev = load_all()
    for n in ("20000", "100000"):
        table = VIEWS[f"search_{n}"].render(ev).splitlines()
        rows = ev["search"]["figures"]["databases"][n]["searches"]
        assert len(table) == 2 + len(rows)
        first = rows[0]
        assert table[2] == (
            f"| {first['search']} | {first['matched']:,} | {first['median_ms']} | "
            f"{first['worst_ms']} |"
        )
