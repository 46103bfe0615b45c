"""Search over every stored answer: words in its texts, its run, its statuses; paged in DuckDB.

The words are matched case-insensitively (``ILIKE``): every word somewhere in the answer
(``scope="answer"``) or in any of the question, the answer, the gold answer and the context
(``scope="all"``); each row says which of those texts hold a word (``matched``) and carries the
first of them (``match_field``, ``match_text``) for a snippet. The filters and the page are
applied in the same statement, so a search returns one page of rows and the total, never every
answer.

Examples
--------
>>> import os, tempfile
>>> from s3kg_core.store.records import AnswerRecord, ItemRecord
>>> from s3kg_core.store.store import Store
>>> db = Store(os.path.join(tempfile.mkdtemp(), "s.duckdb"))
>>> with db.transaction() as con:
...     ds = db.ensure_dataset(con, "toy")
...     ids = db.upsert_items(con, ds, [ItemRecord("q1", "Who found radium?", "C.", "Curie."),
...                                     ItemRecord("q2", "Why 100%?", "C.", "G.")])
...     run = db.ensure_run(con, ds, "m", 0.0, "none")
...     _ = db.put_answers(con, run, [AnswerRecord(ids["q1"], "Marie Curie did."),
...                                   AnswerRecord(ids["q2"], None, error="HTTP 500")])
...     hits, total = search_answers(con, "curie RADIUM")
...     errors, _ = search_answers(con, "", answer_status="error")
...     literal, _ = search_answers(con, "100%")
...     answers_only, _ = search_answers(con, "curie RADIUM", scope="answer")
>>> total, hits["ext_id"].tolist(), errors["ext_id"].tolist(), literal["ext_id"].tolist()
(1, ['q1'], ['q2'], ['q2'])
>>> hits["matched"].tolist(), hits["match_field"].tolist(), len(answers_only)
(['question, answer, gold answer'], ['answer'], 0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import duckdb
import pandas as pd

from ..errors import ConfigError
from ..scoring.result import check_alpha
from ..scoring.tau import TAU_CATEGORIES
from .blend_queries import blend_sql, harmonic_mean_sql

__all__ = [
    "PAGE_COLUMNS",
    "SCORE_FILTERS",
    "SEARCH_COLUMNS",
    "SEARCH_FIELDS",
    "SEARCH_SCOPES",
    "TAU_FILTERS",
    "ScoreRange",
    "count_by_alpha",
    "like_pattern",
    "question_page",
    "question_position",
    "search_answers",
]

SEARCH_COLUMNS = (
    "run_id",
    "item_id",
    "dataset",
    "run",
    "temperature",
    "ext_id",
    "question",
    "answer",
    "answer_status",
    "answer_kg_status",
    "matched",
    "match_field",
    "match_text",
)
"""The columns of :func:`search_answers`'s rows: ``matched`` names the texts that hold a word
(``"answer, context"``, in :data:`SEARCH_FIELDS`' order), ``match_field`` the one of them a
snippet shows (the answer first, then the question, the gold answer, the context) and
``match_text`` its text (``None`` without words)."""

SEARCH_FIELDS = {
    "answer": "a.answer",
    "question": "i.question",
    "gold answer": "i.gold_answer",
    "context": "i.context",
}
"""The texts a search looks in, by name, with their SQL: the order a snippet prefers them in."""

SEARCH_SCOPES = {"answer": ("answer",), "all": tuple(SEARCH_FIELDS)}
"""Where the words are looked for: ``answer`` (the answer only) or ``all`` (its four texts)."""

_LISTED = ("question", "answer", "gold answer", "context")
"""The order ``matched`` names the texts in: as a case reads."""


TAU_FILTERS = TAU_CATEGORIES
"""TAU's categories a search can ask for (a count column ``n_<category>`` of ``tau_results``)."""

SCORE_FILTERS = ("cus", "gold_sim")
"""The scores a search can bound: CUS and GoldSim (S3KG of the answer KG against the gold)."""


def _blended(side: str, alpha: str) -> str:
    """SQL of one side's S3KG of score ``s`` at alpha ``alpha`` (:func:`blend_sql`)."""
    return blend_sql(f"s.{side}_s_wl", f"s.{side}_s_sbert", alpha, "s.mode")


@dataclass(frozen=True)
class ScoreRange:
    """Answers whose ``score`` (``cus`` or ``gold_sim``) at ``alpha`` lies in ``[low, high]``.

    Examples
    --------
    >>> ScoreRange("signature", 0.5, "cus", 0.0, 0.3).low
    0.0
    """

    signature: str
    alpha: float
    score: str = "cus"
    low: float = 0.0
    high: float = 1.0

    def condition(self, alpha_sql: str | None = None) -> tuple[str, list[Any]]:
        """The ``WHERE`` part (an ``EXISTS`` over ``scores``) and its parameters.

        ``alpha_sql``: SQL of the alpha to blend at (a column of the outer query, for one
        count per alpha); ``None``: this range's ``alpha``, as a parameter.
        """
        if self.score not in SCORE_FILTERS:
            raise ConfigError(f"score must be one of {SCORE_FILTERS}; got {self.score!r}")
        check_alpha(self.alpha)
        value = "gold_sim" if self.score == "gold_sim" else harmonic_mean_sql("gold_sim", "ctx_sim")
        blended = (
            f"SELECT {_blended('gold', 'p.alpha')} AS gold_sim, "
            f"{_blended('ctx', 'p.alpha')} AS ctx_sim "
            f"FROM (SELECT {alpha_sql or 'CAST(? AS DOUBLE)'} AS alpha) p, scores s "
            "WHERE s.run_id = a.run_id AND s.item_id = a.item_id AND s.signature = ?"
        )
        sql = f"EXISTS (SELECT 1 FROM ({blended}) WHERE {value} BETWEEN ? AND ?)"
        eps = 1e-9
        given = [] if alpha_sql else [float(self.alpha)]
        return sql, [*given, self.signature, self.low - eps, self.high + eps]


def like_pattern(word: str) -> str:
    r"""``word`` as an ``ILIKE ... ESCAPE '\'`` pattern: anywhere, ``%``, ``_`` and ``\`` literal.

    Examples
    --------
    >>> like_pattern("100%_a")
    '%100\\%\\_a%'
    """
    escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def search_answers(
    con: duckdb.DuckDBPyConnection,
    text: str,
    *,
    run_ids: Sequence[int] | None = None,
    answer_status: str | None = None,
    answer_kg_status: str | None = None,
    tau_category: str | None = None,
    score_range: ScoreRange | None = None,
    limit: int = 100,
    offset: int = 0,
    scope: str = "all",
) -> tuple[pd.DataFrame, int]:
    """One page of the answers that match, and how many match in all.

    ``text`` is split into words; an answer matches when each word occurs (any case) in one of
    the texts of ``scope`` (:data:`SEARCH_SCOPES`: ``"answer"``, the answer only; ``"all"``, its
    question, answer, gold answer or context). ``run_ids`` keeps those runs, ``answer_status``
    answers of that status (``ok``, ``error``, ``empty``...), ``answer_kg_status`` answers whose
    KG has that status (``ok``, ``empty``, ``failed``: the part before a colon; ``missing``:
    no KG stored). ``tau_category`` keeps answers that TAU analysed (``s3kg tau``: the
    lowest-scoring share of each run) with at least one triple in that category
    (:data:`TAU_FILTERS`); ``score_range`` answers whose CUS or GoldSim, re-blended at its
    alpha, lies in its bounds under its signature. Rows (:data:`SEARCH_COLUMNS`) by dataset,
    run and item.

    Raises
    ------
    ConfigError
        ``tau_category`` is not one of :data:`TAU_FILTERS`, ``score_range`` names another
        score than ``cus`` or ``gold_sim``, or ``scope`` is not one of :data:`SEARCH_SCOPES`.
    """
    condition, params = _filters(
        text, run_ids, answer_status, answer_kg_status, tau_category, score_range, scope
    )
    fields, words = SEARCH_SCOPES[scope], text.split()
    # per text of the scope: does it hold any of the words (for `matched` and the snippet)
    holds, hold_params = [], []
    for field in fields:
        any_word = " OR ".join(f"{SEARCH_FIELDS[field]} ILIKE ? ESCAPE '\\'" for _ in words)
        holds.append(f'coalesce({any_word or "false"}, false) AS "hit:{field}"')
        hold_params += [like_pattern(word) for word in words]
    frame = con.execute(
        "SELECT a.run_id, a.item_id, d.name AS dataset, coalesce(r.name, r.model) AS run, "
        "r.temperature, i.ext_id, i.question, a.answer, a.status AS answer_status, "
        'k.status AS answer_kg_status, i.gold_answer AS "text:gold answer", '
        f'i.context AS "text:context", {", ".join(holds)}, count(*) OVER () AS total '
        "FROM answers a JOIN items i USING (item_id) JOIN runs r ON r.run_id = a.run_id "
        "JOIN datasets d ON d.dataset_id = r.dataset_id "
        "LEFT JOIN kgs k ON k.run_id = a.run_id AND k.item_id = a.item_id "
        "AND k.source = 'answer' "
        f"WHERE {condition} ORDER BY d.name, a.run_id, a.item_id LIMIT ? OFFSET ?",
        [*hold_params, *params, int(limit), int(offset)],
    ).df()
    _where_matched(frame, fields)
    total = int(frame["total"].iloc[0]) if len(frame) else 0
    if not len(frame) and offset > 0:  # past the last page: count without it
        total = int(
            con.execute(
                "SELECT count(*) FROM answers a JOIN items i USING (item_id) "
                "LEFT JOIN kgs k ON k.run_id = a.run_id AND k.item_id = a.item_id "
                f"AND k.source = 'answer' WHERE {condition}",
                params,
            ).fetchall()[0][0]
        )
    return frame.drop(columns="total").loc[:, list(SEARCH_COLUMNS)], total


def _filters(
    text: str,
    run_ids: Sequence[int] | None,
    answer_status: str | None,
    answer_kg_status: str | None,
    tau_category: str | None,
    score_range: ScoreRange | None,
    scope: str,
    alpha_sql: str | None = None,
) -> tuple[str, list[Any]]:
    """The ``WHERE`` condition of a search (over ``a``, ``i`` and ``k``) and its parameters."""
    if scope not in SEARCH_SCOPES:
        raise ConfigError(f"scope must be one of {tuple(SEARCH_SCOPES)}; got {scope!r}")
    fields = SEARCH_SCOPES[scope]
    where: list[str] = []
    params: list[Any] = []
    for word in text.split():
        where.append(
            "(" + " OR ".join(f"{SEARCH_FIELDS[f]} ILIKE ? ESCAPE '\\'" for f in fields) + ")"
        )
        params += [like_pattern(word)] * len(fields)
    if run_ids is not None:
        where.append(f"a.run_id IN ({', '.join('?' for _ in run_ids) or 'NULL'})")
        params += [int(r) for r in run_ids]
    if answer_status is not None:
        where.append("a.status = ?")
        params.append(answer_status)
    if answer_kg_status == "missing":
        where.append("k.status IS NULL")
    elif answer_kg_status is not None:
        where.append("split_part(k.status, ':', 1) = ?")
        params.append(answer_kg_status)
    if tau_category is not None:
        if tau_category not in TAU_FILTERS:
            raise ConfigError(f"TAU category must be one of {TAU_FILTERS}; got {tau_category!r}")
        where.append(
            "EXISTS (SELECT 1 FROM tau_results t WHERE t.run_id = a.run_id AND "
            f"t.item_id = a.item_id AND t.n_{tau_category} > 0)"
        )
    if score_range is not None:
        sql, values = score_range.condition(alpha_sql)
        where.append(sql)
        params += values
    return " AND ".join(where) or "true", params


def count_by_alpha(
    con: duckdb.DuckDBPyConnection,
    text: str,
    alphas: Sequence[float],
    *,
    score_range: ScoreRange,
    run_ids: Sequence[int] | None = None,
    answer_status: str | None = None,
    answer_kg_status: str | None = None,
    tau_category: str | None = None,
    scope: str = "all",
) -> list[int]:
    """How many answers :func:`search_answers` finds with ``score_range`` at each of ``alphas``.

    One query: the same filters, the range's score re-blended at every alpha (its own
    ``alpha`` is not used). For a page that shows the count at every stop of its alpha slider.

    Raises
    ------
    ConfigError
        As :func:`search_answers`.

    Examples
    --------
    >>> import os, tempfile
    >>> from s3kg_core.store.store import Store
    >>> db = Store(os.path.join(tempfile.mkdtemp(), "c.duckdb"))
    >>> with db.connect() as con:
    ...     count_by_alpha(con, "", [0.0, 1.0], score_range=ScoreRange("sig", 0.5))
    [0, 0]
    """
    for alpha in alphas:
        check_alpha(alpha)
    condition, params = _filters(
        text, run_ids, answer_status, answer_kg_status, tau_category, score_range, scope,
        alpha_sql="g.alpha",
    )  # fmt: skip
    counted = dict(
        con.execute(
            "SELECT g.alpha, count(*) FROM (SELECT unnest(CAST(? AS DOUBLE[])) AS alpha) g, "
            "answers a JOIN items i USING (item_id) "
            "LEFT JOIN kgs k ON k.run_id = a.run_id AND k.item_id = a.item_id "
            f"AND k.source = 'answer' WHERE {condition} GROUP BY g.alpha",
            [[float(x) for x in alphas], *params],
        ).fetchall()
    )
    return [int(counted.get(float(x), 0)) for x in alphas]


def _where_matched(frame: pd.DataFrame, fields: tuple[str, ...]) -> None:
    """Add ``matched``, ``match_field`` and ``match_text`` from the ``hit:`` columns, in place."""
    texts = {
        "answer": frame["answer"],
        "question": frame["question"],
        "gold answer": frame["text:gold answer"],
        "context": frame["text:context"],
    }
    hit = {f: frame[f"hit:{f}"].astype(bool).tolist() for f in fields}
    matched, field_of, text_of = [], [], []
    for row in range(len(frame)):
        found = [f for f in _LISTED if f in hit and hit[f][row]]
        first = next((f for f in SEARCH_FIELDS if f in found), None)
        matched.append(", ".join(found))
        field_of.append(first)
        text_of.append(None if first is None else texts[first].iloc[row])
    frame["matched"], frame["match_field"], frame["match_text"] = matched, field_of, text_of


PAGE_COLUMNS = ("item_id", "ext_id", "question", "gold_sim", "ctx_sim", "cus")
"""The columns of :func:`question_page`'s rows."""


def question_page(
    con: duckdb.DuckDBPyConnection,
    signature: str,
    run_id: int,
    alpha: float,
    text: str = "",
    *,
    low: float = 0.0,
    high: float = 1.0,
    limit: int = 50,
    offset: int = 0,
) -> tuple[pd.DataFrame, int]:
    """One page of a run's scored questions, lowest CUS at ``alpha`` first, and how many match.

    A question matches when each word of ``text`` occurs (any case) in its external id or its
    question, and its CUS at ``alpha`` lies in ``[low, high]``. Blended in DuckDB as
    :func:`~s3kg_core.stages.scored.reblend` does; rows (:data:`PAGE_COLUMNS`) by CUS, then
    item. For pickers: one page of a run of thousands of answers, never all of them.

    Examples
    --------
    >>> import os, tempfile
    >>> from s3kg_core.store.records import ItemRecord
    >>> from s3kg_core.store.store import Store
    >>> db = Store(os.path.join(tempfile.mkdtemp(), "p.duckdb"))
    >>> with db.transaction() as con:
    ...     ds = db.ensure_dataset(con, "toy")
    ...     ids = db.upsert_items(con, ds, [ItemRecord(f"q{i}", f"Question {i}?", "C.", "G.")
    ...                                     for i in range(5)])
    ...     run = db.ensure_run(con, ds, "m", 0.0, "none")
    ...     _ = con.executemany(
    ...         "INSERT INTO scores (run_id, item_id, signature, mode, alpha, gold_s_wl, "
    ...         "gold_s_sbert, gold_status, ctx_s_wl, ctx_s_sbert, ctx_status) "
    ...         "VALUES (?, ?, 'sig', 'paper', 0.5, ?, ?, 'ok', ?, ?, 'ok')",
    ...         [[run, ids[f"q{i}"], i / 4, 1.0, i / 4, 1.0] for i in range(5)])
    ...     rows, total = question_page(con, "sig", run, 0.0, limit=2, offset=1)
    ...     found, one = question_page(con, "sig", run, 0.5, "QUESTION 3")
    >>> total, rows["ext_id"].tolist(), rows["cus"].tolist()
    (5, ['q1', 'q2'], [0.25, 0.5])
    >>> one, found["ext_id"].tolist()
    (1, ['q3'])
    >>> with db.connect() as con:
    ...     question_position(con, "sig", run, 0.0, ids["q3"]), question_position(
    ...         con, "sig", run, 0.0, ids["q3"], high=0.5)
    (3, None)
    """
    matches, params = _matches(signature, run_id, alpha, text, low, high)
    frame = con.execute(
        f"{matches} SELECT *, count(*) OVER () AS total FROM matches "
        "ORDER BY cus, item_id LIMIT ? OFFSET ?",
        [*params, int(limit), int(offset)],
    ).df()
    total = int(frame["total"].iloc[0]) if len(frame) else 0
    if not len(frame) and offset > 0:  # past the last page: count the matches again
        total = question_page(con, signature, run_id, alpha, text, low=low, high=high, limit=1)[1]
    return frame.drop(columns="total").loc[:, list(PAGE_COLUMNS)], total


def question_position(
    con: duckdb.DuckDBPyConnection,
    signature: str,
    run_id: int,
    alpha: float,
    item_id: int,
    text: str = "",
    *,
    low: float = 0.0,
    high: float = 1.0,
) -> int | None:
    """Where ``item_id`` stands (from 0) in :func:`question_page`'s order, or ``None``.

    ``None`` when the question does not match; the position gives the page a link's question
    is on.
    """
    matches, params = _matches(signature, run_id, alpha, text, low, high)
    found = con.execute(
        f"{matches} SELECT position FROM (SELECT item_id, row_number() OVER "
        "(ORDER BY cus, item_id) - 1 AS position FROM matches) WHERE item_id = ?",
        [*params, int(item_id)],
    ).fetchall()
    return int(found[0][0]) if found else None


def _matches(
    signature: str, run_id: int, alpha: float, text: str, low: float, high: float
) -> tuple[str, list[Any]]:
    """The ``WITH ... matches AS (...)`` of a run's questions that match, and its parameters."""
    where = ["s.signature = ?", "s.run_id = ?"]
    params: list[Any] = [signature, int(run_id)]
    for word in text.split():
        where.append("(i.ext_id ILIKE ? ESCAPE '\\' OR i.question ILIKE ? ESCAPE '\\')")
        params += [like_pattern(word)] * 2
    check_alpha(alpha)
    sql = (
        "WITH p AS (SELECT CAST(? AS DOUBLE) AS alpha), "
        f"blended AS (SELECT s.item_id, i.ext_id, i.question, {_blended('gold', 'p.alpha')} "
        f"AS gold_sim, {_blended('ctx', 'p.alpha')} AS ctx_sim "
        "FROM p, scores s JOIN items i USING (item_id) "
        f"WHERE {' AND '.join(where)}), "
        f"scored AS (SELECT *, {harmonic_mean_sql('gold_sim', 'ctx_sim')} AS cus FROM blended), "
        "matches AS (SELECT * FROM scored WHERE cus BETWEEN ? AND ?)"
    )
    return sql, [float(alpha), *params, float(low) - 1e-9, float(high) + 1e-9]
