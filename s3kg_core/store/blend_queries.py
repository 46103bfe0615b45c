"""Stored score components blended at an alpha in SQL: what ``reblend`` computes, in DuckDB.

One ``WITH`` clause that pages and queries begin with (the Failure analysis's lowest share, the
Run comparison's pair of runs), so the formula is written once. Its ``c`` holds every score of
a signature with ``gold_sim``, ``ctx_sim`` and ``cus`` at the alpha; a query filters it (by
run: DuckDB pushes the filter down to the scan) and selects from it.

Examples
--------
>>> import os, tempfile
>>> from s3kg_core.store.store import Store
>>> db = Store(os.path.join(tempfile.mkdtemp(), "b.duckdb"))
>>> with db.connect() as con:
...     con.execute(f"{BLENDED} SELECT count(*) FROM c", [0.5, "sig"]).fetchall()
[(0,)]
"""

from __future__ import annotations

__all__ = ["BLENDED"]

# reblend() in SQL, the same operations in the same order (bit-identical doubles): paper and
# hybrid modes weight the embedding side by alpha, kgx the WL side
BLENDED = """
WITH s AS (
    SELECT s.run_id, s.item_id, d.name AS dataset, coalesce(r.name, r.model) AS model,
           r.temperature, r.extractor, s.mode <> 'kgx' AS emb,
           coalesce(CAST(? AS DOUBLE), s.alpha) AS a,
           s.gold_s_wl, s.gold_s_sbert, s.ctx_s_wl, s.ctx_s_sbert
    FROM scores s JOIN runs r USING (run_id) JOIN datasets d USING (dataset_id)
    WHERE s.signature = ?),
b AS (
    SELECT *,
        CASE WHEN emb THEN (1 - a) * gold_s_wl + a * gold_s_sbert
             ELSE a * gold_s_wl + (1 - a) * gold_s_sbert END AS gold_sim,
        CASE WHEN emb THEN (1 - a) * ctx_s_wl + a * ctx_s_sbert
             ELSE a * ctx_s_wl + (1 - a) * ctx_s_sbert END AS ctx_sim
    FROM s),
c AS (
    SELECT *, CASE WHEN gold_sim + ctx_sim > 0
                   THEN 2 * gold_sim * ctx_sim / (gold_sim + ctx_sim) ELSE 0.0 END AS cus
    FROM b)
"""
"""The ``WITH s, b, c`` clause; ``c``: ``run_id, item_id, dataset, model, temperature,
extractor, gold_sim, ctx_sim, cus`` (and the components) of every score of a signature.

Its two parameters come first: the alpha (``None``: each score's stored alpha), then the
signature. ``model`` is the run's display name."""
