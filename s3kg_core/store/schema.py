"""The DuckDB schema as numbered migrations, and the columns of stored benchmark results.

The schema version (the highest migration applied) and the list of applied migrations are
recorded in ``meta``; the missing migrations run, in order, on the first read-write open.
"""

from __future__ import annotations

from ..statuses import LEGACY_STATUSES, Reference

__all__ = ["BENCH_COLUMNS", "MIGRATIONS", "SCHEMA_VERSION"]


SCHEMA_VERSION = 9


def _rename_statuses(column: str, reference: Reference) -> str:
    """An UPDATE giving ``column``'s pair statuses (``empty_kg_1``...) their names by KG."""
    names = LEGACY_STATUSES[reference]
    cases = " ".join(f"WHEN '{old}' THEN '{new}'" for old, new in names.items())
    olds = ", ".join(f"'{old}'" for old in names)
    return f"UPDATE scores SET {column} = CASE {column} {cases} END WHERE {column} IN ({olds})"


_SWAPPED = (
    "len(list_filter(coalesce(json_extract_string(result, '$.entity_mismatch[*].parts'), []), "
    "lambda p: p = 'swapped'))"
)
"""SQL: the entity mismatches of a stored TAU result filed as head and tail swapped."""


MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        "CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)",
        "CREATE SEQUENCE IF NOT EXISTS dataset_ids START 1",
        "CREATE SEQUENCE IF NOT EXISTS item_ids START 1",
        "CREATE SEQUENCE IF NOT EXISTS run_ids START 1",
        "CREATE SEQUENCE IF NOT EXISTS annotation_ids START 1",
        """CREATE TABLE IF NOT EXISTS datasets (
            dataset_id INTEGER PRIMARY KEY DEFAULT nextval('dataset_ids'),
            name VARCHAR NOT NULL UNIQUE,
            source VARCHAR,
            created_at TIMESTAMP DEFAULT current_timestamp)""",
        """CREATE TABLE IF NOT EXISTS items (
            item_id INTEGER PRIMARY KEY DEFAULT nextval('item_ids'),
            dataset_id INTEGER NOT NULL,
            ext_id VARCHAR NOT NULL,
            question VARCHAR,
            context VARCHAR,
            gold_answer VARCHAR,
            UNIQUE (dataset_id, ext_id))""",
        """CREATE TABLE IF NOT EXISTS runs (
            run_id INTEGER PRIMARY KEY DEFAULT nextval('run_ids'),
            dataset_id INTEGER NOT NULL,
            model VARCHAR NOT NULL,
            temperature DOUBLE NOT NULL,
            extractor VARCHAR NOT NULL,
            source VARCHAR,
            settings JSON,
            created_at TIMESTAMP DEFAULT current_timestamp,
            UNIQUE (dataset_id, model, temperature, extractor))""",
        """CREATE TABLE IF NOT EXISTS answers (
            run_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            answer VARCHAR,
            seed INTEGER,
            latency_s DOUBLE,
            prompt_tokens INTEGER,
            completion_tokens INTEGER,
            error VARCHAR,
            PRIMARY KEY (run_id, item_id))""",
        """CREATE TABLE IF NOT EXISTS kgs (
            run_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            source VARCHAR NOT NULL CHECK (source IN ('gold', 'answer', 'context')),
            status VARCHAR NOT NULL,
            n_triples INTEGER NOT NULL,
            n_dropped INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (run_id, item_id, source))""",
        """CREATE TABLE IF NOT EXISTS triples (
            run_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            source VARCHAR NOT NULL,
            pos INTEGER NOT NULL,
            head VARCHAR NOT NULL,
            relation VARCHAR NOT NULL,
            tail VARCHAR NOT NULL,
            PRIMARY KEY (run_id, item_id, source, pos))""",
        """CREATE TABLE IF NOT EXISTS scores (
            run_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            signature VARCHAR NOT NULL,
            mode VARCHAR NOT NULL,
            alpha DOUBLE NOT NULL,
            gold_s_wl DOUBLE NOT NULL,
            gold_s_sbert DOUBLE NOT NULL,
            gold_status VARCHAR NOT NULL,
            ctx_s_wl DOUBLE NOT NULL,
            ctx_s_sbert DOUBLE NOT NULL,
            ctx_status VARCHAR NOT NULL,
            gold_detail JSON,
            ctx_detail JSON,
            scored_at TIMESTAMP DEFAULT current_timestamp,
            PRIMARY KEY (run_id, item_id, signature))""",
        """CREATE TABLE IF NOT EXISTS tau_results (
            run_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            signature VARCHAR NOT NULL,
            target VARCHAR NOT NULL,
            fraction DOUBLE NOT NULL,
            alpha DOUBLE NOT NULL,
            target_score DOUBLE NOT NULL,
            n_aligned INTEGER NOT NULL,
            n_relation_mismatch INTEGER NOT NULL,
            n_entity_mismatch INTEGER NOT NULL,
            n_extra INTEGER NOT NULL,
            n_missing INTEGER NOT NULL,
            result JSON NOT NULL,
            PRIMARY KEY (run_id, item_id, signature, target))""",
        """CREATE TABLE IF NOT EXISTS annotations (
            annotation_id INTEGER PRIMARY KEY DEFAULT nextval('annotation_ids'),
            run_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            annotator VARCHAR NOT NULL,
            gold_triple JSON,
            answer_triple JSON,
            verdict VARCHAR NOT NULL,
            created_at TIMESTAMP DEFAULT current_timestamp)""",
        """CREATE TABLE IF NOT EXISTS embeddings (
            encoder VARCHAR NOT NULL,
            text VARCHAR NOT NULL,
            vector FLOAT[] NOT NULL,
            PRIMARY KEY (encoder, text))""",
    ),
    # 2: the LLM stage. Answers say how the call went and whether the prompt was cut; KGs say
    # whether their text was cut; successful LLM responses are cached by request key.
    2: (
        "ALTER TABLE answers ADD COLUMN IF NOT EXISTS status VARCHAR",
        "ALTER TABLE answers ADD COLUMN IF NOT EXISTS truncated BOOLEAN DEFAULT false",
        "ALTER TABLE kgs ADD COLUMN IF NOT EXISTS truncated BOOLEAN DEFAULT false",
        # 'empty' when the text is all whitespace as Python's str.strip() sees it (what
        # AnswerRecord decides): trim() alone strips only spaces, so "\n" would stay 'ok'.
        "UPDATE answers SET status = CASE WHEN error IS NOT NULL THEN 'error' "
        "WHEN answer IS NULL OR regexp_full_match(answer, "
        r"'[\x{09}-\x{0d}\x{1c}-\x{1f}\x{85}\pZ]*') THEN 'empty' ELSE 'ok' END "
        "WHERE status IS NULL",
        """CREATE TABLE IF NOT EXISTS llm_cache (
            key VARCHAR PRIMARY KEY,
            endpoint VARCHAR NOT NULL,
            model VARCHAR NOT NULL,
            prompt_version VARCHAR NOT NULL,
            temperature DOUBLE NOT NULL,
            seed INTEGER,
            input_hash VARCHAR NOT NULL,
            response JSON NOT NULL,
            created_at TIMESTAMP DEFAULT current_timestamp)""",
    ),
    # 3: the benchmark harness. One row per (pair set, encoder, mode, triple source, method).
    3: (
        """CREATE TABLE IF NOT EXISTS bench_results (
            run_at TIMESTAMP DEFAULT current_timestamp,
            dataset VARCHAR NOT NULL,
            n INTEGER NOT NULL,
            encoder VARCHAR NOT NULL,
            mode VARCHAR NOT NULL,
            triples VARCHAR NOT NULL,
            method VARCHAR NOT NULL,
            f1 DOUBLE NOT NULL,
            auroc DOUBLE NOT NULL,
            alpha DOUBLE,
            threshold DOUBLE NOT NULL,
            f1_lo DOUBLE,
            f1_hi DOUBLE,
            auroc_lo DOUBLE,
            auroc_hi DOUBLE,
            detail JSON,
            PRIMARY KEY (dataset, encoder, mode, triples, method))""",
    ),
    # 4: GraphEval (per-answer detection and correction, benchmark rows) and the factuality
    # judge's evaluations. Per-triple details are JSON so a new checker needs no migration.
    4: (
        """CREATE TABLE IF NOT EXISTS grapheval_results (
            run_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            checker VARCHAR NOT NULL,
            extractor VARCHAR NOT NULL,
            inconsistent BOOLEAN,
            raw_probability DOUBLE,
            n_triples INTEGER NOT NULL,
            n_flagged INTEGER NOT NULL,
            detail JSON NOT NULL,
            corrected_answer VARCHAR,
            correction JSON,
            signature VARCHAR NOT NULL,
            created_at TIMESTAMP DEFAULT current_timestamp,
            PRIMARY KEY (run_id, item_id, checker, extractor))""",
        """CREATE TABLE IF NOT EXISTS grapheval_bench (
            run_at TIMESTAMP DEFAULT current_timestamp,
            dataset VARCHAR NOT NULL,
            n INTEGER NOT NULL,
            checker VARCHAR NOT NULL,
            extractor VARCHAR NOT NULL,
            raw_balanced_accuracy DOUBLE,
            kg_balanced_accuracy DOUBLE,
            flagged_triples INTEGER,
            detail JSON,
            PRIMARY KEY (dataset, checker, extractor))""",
        """CREATE TABLE IF NOT EXISTS factuality_evals (
            run_at TIMESTAMP DEFAULT current_timestamp,
            name VARCHAR PRIMARY KEY,
            model VARCHAR NOT NULL,
            layer INTEGER NOT NULL,
            n_test INTEGER NOT NULL,
            summary JSON NOT NULL,
            breakdown JSON)""",
    ),
    # 5: what collect sees of each answer and how a run is shown. Answers keep the model id the
    # server said answered and why generation stopped (``length``: cut at max_tokens); a run
    # has a display name (``--name``; the model's short name by default, never a cache path),
    # filled in for existing runs from their model the same way.
    5: (
        "ALTER TABLE answers ADD COLUMN IF NOT EXISTS model_id VARCHAR",
        "ALTER TABLE answers ADD COLUMN IF NOT EXISTS finish_reason VARCHAR",
        "ALTER TABLE runs ADD COLUMN IF NOT EXISTS name VARCHAR",
        "UPDATE runs SET name = coalesce(nullif(regexp_extract(rtrim(rtrim(model, '/'), "
        r"'\'), '[^/\\]+$'), ''), model) WHERE name IS NULL",
    ),
    # 6: the annotation verdict log (issue 30). ``verdicts`` is append-only: every decision,
    # withdrawal and undo is a new row naming the row it replaces; the current verdicts are
    # derived from it (s3kg_core.store.annotation_queries). The legacy ``annotations`` rows move
    # into it (the page only wrote confirm / reject on TAU's aligned pairs, and add). Tasks say
    # which items each annotator sees and fix the units (TAU's pairs) judged on each item;
    # ``tau_calibrations`` keep the thresholds fitted to the human labels.
    6: (
        "CREATE SEQUENCE IF NOT EXISTS verdict_ids START 1",
        """CREATE TABLE IF NOT EXISTS verdicts (
            verdict_id BIGINT PRIMARY KEY DEFAULT nextval('verdict_ids'),
            uid VARCHAR NOT NULL UNIQUE,
            created_at TIMESTAMP NOT NULL,
            annotator VARCHAR NOT NULL,
            role VARCHAR NOT NULL CHECK (role IN ('annotator', 'adjudicator')),
            task_id INTEGER,
            run_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            category VARCHAR,
            gold_triple VARCHAR[],
            answer_triple VARCHAR[],
            gold_extracted VARCHAR[][],
            answer_extracted VARCHAR[][],
            verdict VARCHAR NOT NULL,
            replaces BIGINT,
            source VARCHAR)""",
        # A rerun of this migration finds no legacy table: make an empty one to copy from.
        """CREATE TABLE IF NOT EXISTS annotations (
            annotation_id INTEGER,
            run_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            annotator VARCHAR NOT NULL,
            gold_triple JSON,
            answer_triple JSON,
            verdict VARCHAR NOT NULL,
            created_at TIMESTAMP)""",
        """INSERT INTO verdicts (uid, created_at, annotator, role, run_id, item_id, category,
            gold_triple, answer_triple, verdict, source)
            SELECT 'legacy-' || md5(concat_ws(chr(31), annotation_id, run_id, item_id,
                annotator, gold_triple, answer_triple, verdict, created_at)),
                coalesce(created_at, current_timestamp::TIMESTAMP), nfc_normalize(annotator),
                'annotator', run_id, item_id,
                CASE WHEN verdict IN ('confirm', 'reject') THEN 'aligned' END,
                from_json(gold_triple, '["VARCHAR"]'), from_json(answer_triple, '["VARCHAR"]'),
                verdict, 'annotations table (before schema 6)'
            FROM annotations ORDER BY annotation_id
            ON CONFLICT DO NOTHING""",
        # A legacy pair saved twice (two JSON spellings of one triple): the later row replaces
        # the earlier, as it did on the page.
        """UPDATE verdicts SET replaces = (SELECT max(w.verdict_id) FROM verdicts w
            WHERE w.annotator = verdicts.annotator AND w.role = verdicts.role
            AND w.run_id = verdicts.run_id AND w.item_id = verdicts.item_id
            AND w.gold_triple IS NOT DISTINCT FROM verdicts.gold_triple
            AND w.answer_triple IS NOT DISTINCT FROM verdicts.answer_triple
            AND w.verdict_id < verdicts.verdict_id)
            WHERE uid LIKE 'legacy-%' AND replaces IS NULL""",
        "DROP TABLE annotations",
        "DROP SEQUENCE IF EXISTS annotation_ids",
        "CREATE SEQUENCE IF NOT EXISTS task_ids START 1",
        """CREATE TABLE IF NOT EXISTS annotation_tasks (
            task_id INTEGER PRIMARY KEY DEFAULT nextval('task_ids'),
            name VARCHAR,
            created_at TIMESTAMP NOT NULL,
            annotators VARCHAR[] NOT NULL,
            overlap INTEGER NOT NULL,
            settings JSON NOT NULL)""",
        """CREATE TABLE IF NOT EXISTS task_items (
            task_id INTEGER NOT NULL,
            annotator VARCHAR NOT NULL,
            position INTEGER NOT NULL,
            run_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            PRIMARY KEY (task_id, annotator, run_id, item_id))""",
        """CREATE TABLE IF NOT EXISTS task_units (
            task_id INTEGER NOT NULL,
            run_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            unit INTEGER NOT NULL,
            category VARCHAR NOT NULL,
            gold_triple VARCHAR[],
            answer_triple VARCHAR[],
            gold_extracted VARCHAR[][],
            answer_extracted VARCHAR[][],
            similarity DOUBLE,
            PRIMARY KEY (task_id, run_id, item_id, unit))""",
        "CREATE SEQUENCE IF NOT EXISTS calibration_ids START 1",
        """CREATE TABLE IF NOT EXISTS tau_calibrations (
            calibration_id INTEGER PRIMARY KEY DEFAULT nextval('calibration_ids'),
            created_at TIMESTAMP NOT NULL,
            encoder VARCHAR NOT NULL,
            threshold DOUBLE NOT NULL,
            f1 DOUBLE NOT NULL,
            precision DOUBLE NOT NULL,
            recall DOUBLE NOT NULL,
            positives INTEGER NOT NULL,
            negatives INTEGER NOT NULL,
            curve JSON NOT NULL,
            detail JSON)""",
    ),
    # 7: the columns of an imported file that its mapping does not name (issue 32), kept under
    # their own names as text so that `s3kg export` carries them: per answer when the file
    # holds answers, per item (run_id 0: run ids start at 1) when it holds questions only.
    # ``pos`` is the column's place in the file (the export keeps the file's order).
    7: (
        """CREATE TABLE IF NOT EXISTS extra_columns (
            run_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            name VARCHAR NOT NULL,
            pos INTEGER NOT NULL,
            value VARCHAR,
            PRIMARY KEY (run_id, item_id, name))""",
    ),
    # 8: statuses named by the KG they are about (issue 31). ``empty_kg_1`` in ``gold_status``
    # read as "the gold KG is empty" where it meant the answer's: the stored pair statuses
    # become ``answer_kg_empty``, ``gold_kg_empty``, ``context_kg_empty``,
    # ``answer_and_gold_kgs_empty``, ``answer_kg_unparseable``... (s3kg_core.statuses).
    8: (_rename_statuses("gold_status", "gold"), _rename_statuses("ctx_status", "context")),
    # 9: TAU's roles swapped (a gold triple stated with head and tail exchanged) is a category
    # of its own, counted in ``n_roles_swapped``. A stored result filed it as an entity
    # mismatch with parts "swapped": those move from ``n_entity_mismatch`` to the new count
    # (the JSON stays as it is: TauResult.from_dict reads them as roles swapped). The WHERE
    # makes a second run a no-op: it moves counts only while they still equal the JSON's.
    9: (
        "ALTER TABLE tau_results ADD COLUMN IF NOT EXISTS n_roles_swapped INTEGER DEFAULT 0",
        f"""UPDATE tau_results SET n_roles_swapped = {_SWAPPED},
            n_entity_mismatch = n_entity_mismatch - {_SWAPPED}
            WHERE {_SWAPPED} > 0 AND n_entity_mismatch
                = coalesce(json_array_length(result, '$.entity_mismatch'), 0)""",
    ),
}


BENCH_COLUMNS = (
    "dataset",
    "n",
    "encoder",
    "mode",
    "triples",
    "method",
    "f1",
    "auroc",
    "alpha",
    "threshold",
    "f1_lo",
    "f1_hi",
    "auroc_lo",
    "auroc_hi",
    "detail",
)


"""The columns :meth:`Store.put_bench_results` expects, in order (``run_at`` is set on write)."""
