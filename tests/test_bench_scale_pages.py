"""The scale page benchmark's table (bench/speed/bench_scale_pages.py): every figure shown."""

from __future__ import annotations

from bench.speed.bench_scale_pages import table


def test_the_table_has_a_row_per_page_with_its_interactions_and_errors():
    figures = {
        "pages": {
            "tau": {
                "page": "Failure analysis (TAU)",
                "first": 1.234,
                "second": 0.5,
                "share 5->6 %": 0.25,
                "rss_gb": 0.7,
            },
            "run": {"page": "Run details", "first": 2.0, "error": "TimeoutError: busy"},
        },
        "server_start_gb": 0.3,
        "server_peak_gb": 0.91,
        "environment": {"load_before": "1.00 1.00 1.00", "load_after": "2.00 2.00 2.00"},
    }
    lines = table(figures).splitlines()
    assert lines[2] == "| Failure analysis (TAU) | 1.23 s | 0.50 s | share 5->6 % 0.25 s |"
    assert lines[3] == "| Run details | 2.00 s | - | error: TimeoutError: busy |"
    assert "peak 0.91 GB" in lines[-1] and "0.30 GB at start" in lines[-1]


def test_runs_are_added_to_the_evidence_per_database_and_column(tmp_path):
    from store_helpers import build_store

    from bench.speed.bench_scale_pages import add_to_evidence, database_size
    from docsgen import VIEWS
    from docsgen.evidence import read_evidence

    db = build_store(tmp_path / "s.duckdb", n_items=6).path
    size = database_size(db)
    assert size == {"answers": 12, "runs": 2}
    out = tmp_path / "scale_pages.json"

    def run(first: float, peak: float) -> dict:
        page = {"page": "Failure analysis (TAU)", "first": first, "second": 1.0, "rss_gb": 0.4}
        return {"pages": {"tau": page}, "server_peak_gb": peak}

    add_to_evidence(out, run(9.0, 2.0), size, "before")
    add_to_evidence(out, run(3.0, 0.5), size, "after")
    add_to_evidence(out, run(4.0, 0.7), {"answers": 100000, "runs": 20}, "after")
    dbs = read_evidence(out)["figures"]["databases"]
    assert sorted(dbs) == ["100000", "12"] and set(dbs["12"]) >= {"before", "after"}
    table = VIEWS["scale_pages"].render({"scale_pages": read_evidence(out)}).splitlines()
    assert table[2] == "| 12 | Failure analysis (TAU) | first visit | 9.0 s | 3.0 s |"
    assert table[4] == "| 12 | the server | peak memory | 2.00 GB | 0.50 GB |"
    assert table[5] == "| 100,000 | Failure analysis (TAU) | first visit |  | 4.0 s |"
    assert table[-1] == "| 100,000 | the server | peak memory |  | 0.70 GB |"
