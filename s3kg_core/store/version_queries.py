"""A cheap content version of the tables the results are read from (runs, answers, KGs, scores).

The dashboard keys its caches of scores and KGs by this version rather than by the file's
modification stamp, so a write to other tables (an annotation saved, a GraphEval check) keeps
them. The version is a fingerprint: per table, the row count and the sum of a hash of each row
(the columns a write can change; long JSON details and vectors are left out, as they change
only with a column that is hashed), so an insert, a delete or an update in place changes it.
One ``GROUP BY``-free scan per table, in DuckDB.
"""

from __future__ import annotations

import hashlib

import duckdb

__all__ = ["RESULT_TABLES", "results_version"]

RESULT_TABLES: dict[str, str] = {
    "meta": "hash(meta)",
    "datasets": "hash(datasets)",
    "items": "hash(items)",
    "runs": "hash(runs)",
    "answers": "hash(answers)",
    "kgs": "hash(kgs)",
    "triples": "hash(run_id, item_id, source, pos, head, relation, tail)",
    "scores": (
        "hash(run_id, item_id, signature, mode, alpha, gold_s_wl, gold_s_sbert, gold_status, "
        "ctx_s_wl, ctx_s_sbert, ctx_status, scored_at)"
    ),
    "tau_results": (
        "hash(run_id, item_id, signature, target, fraction, alpha, target_score, n_aligned, "
        "n_extra, n_missing)"
    ),
    "embeddings": "0",
    "extra_columns": "hash(extra_columns)",
}
"""Each table the version covers and the expression hashed per row (``0``: rows only counted;
stored vectors are never replaced, only added)."""


def results_version(con: duckdb.DuckDBPyConnection) -> int:
    """A negative 63-bit number that changes whenever a table of :data:`RESULT_TABLES` does.

    Negative, so it is never a file's modification stamp (a positive number of nanoseconds).

    Examples
    --------
    >>> import os, tempfile
    >>> from s3kg_core.store.store import Store
    >>> db = Store(os.path.join(tempfile.mkdtemp(), "v.duckdb"))
    >>> with db.connect() as con:
    ...     before = results_version(con)
    >>> with db.transaction() as con:
    ...     _ = db.ensure_dataset(con, "toy")
    >>> with db.connect() as con:
    ...     before < 0, results_version(con) != before
    (True, True)
    """
    parts = [
        f"(SELECT count(*) || ':' || coalesce(sum({expr}), 0) FROM {table})"
        for table, expr in RESULT_TABLES.items()
    ]
    row = con.execute(f"SELECT {', '.join(parts)}").fetchone()
    digest = hashlib.blake2b("|".join(map(str, row or ())).encode(), digest_size=8).digest()
    return -(int.from_bytes(digest, "big") >> 1) - 1
