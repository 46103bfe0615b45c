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
