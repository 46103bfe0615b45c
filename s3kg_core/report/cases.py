"""The questions a report shows: each answer explained by the scorer, and the triple-level diff.

A report lists a run's worst answers (or, against a baseline, its biggest regressions). For
each, :func:`explain_cases` asks :meth:`KGScorer.explain_pairs
<s3kg_core.scoring.s3kg.KGScorer.explain_pairs>` for the answer against its gold and its
context KG, with the signature's settings and the vectors the database stores (the encoder
only embeds what is not stored). Everything shown per triple is read off those
:class:`~s3kg_core.scoring.explain.Explanation` objects: the pick of every answer triple, its
cosine, the alignment of its parts at tau (:func:`answer_rows`), and which gold triples each
run's answer matched (:func:`gold_diff`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..encoders.cache import EmbeddingCache
from ..errors import ConfigError
from ..kg import Triple
from ..scoring.explain import Explanation
from ..scoring.s3kg import KGScorer, S3KGConfig
from ..scoring.signature import Signature
from ..store import queries
from ..store.store import Store

__all__ = [
    "CaseSide",
    "GoldDiffRow",
    "ReportCase",
    "TripleRow",
    "answer_rows",
    "entity_badges",
    "explain_cases",
    "gold_diff",
]


@dataclass(frozen=True)
class CaseSide:
    """One run's answer to a question, explained.

    Attributes
    ----------
    run_id
        The run.
    answer, status
        The answer text and its collection status.
    scores
        ``gold_sim``, ``ctx_sim``, ``cus`` as stored (re-blended at the report's alpha).
    gold, context
        The scorer's explanation of the answer KG against the gold and the context KG.
    """

    run_id: int
    answer: str
    status: str
    scores: dict[str, float]
    gold: Explanation
    context: Explanation


@dataclass(frozen=True)
class ReportCase:
    """A question of the report: its texts and the new (and baseline) run's explained answer."""

    item_id: int
    ext_id: str
    question: str
    context: str
    gold_answer: str
    new: CaseSide
    baseline: CaseSide | None = None

    @property
    def change(self) -> float | None:
        """CUS of the new run minus the baseline's (``None`` without a baseline)."""
        if self.baseline is None:
            return None
        return self.new.scores["cus"] - self.baseline.scores["cus"]


@dataclass(frozen=True)
class TripleRow:
    """One answer triple and the triples S3KG picked for it in the gold and the context KG.

    ``gold`` and ``context`` are ``None`` where there is no pick (that side was not scored);
    ``*_cosine`` is the pick's cosine; ``*_aligned`` says, for head, relation and tail,
    whether the part was aligned to that part of the picked triple at tau.
    """

    answer: Triple
    gold: Triple | None
    gold_cosine: float | None
    gold_aligned: tuple[bool, bool, bool]
    context: Triple | None
    context_cosine: float | None
    context_aligned: tuple[bool, bool, bool]


@dataclass(frozen=True)
class GoldDiffRow:
    """One gold triple and how each run's answer matched it.

    ``baseline`` and ``new`` are the best cosine of an answer triple that picked it (``None``:
    no answer triple picked it); ``*_aligned`` whether such a pick had all three parts aligned
    at tau, as the WL kernel sees them: the gold triple counts as matched. ``change`` is
    ``lost``, ``gained``, ``kept`` or ``unmatched``.
    """

    gold: Triple
    baseline: float | None
    baseline_aligned: bool
    new: float | None
    new_aligned: bool

    @property
    def change(self) -> str:
        """``lost`` (matched by the baseline only), ``gained``, ``kept`` or ``unmatched``."""
        old, new = self.baseline_aligned, self.new_aligned
        return {(True, False): "lost", (False, True): "gained", (True, True): "kept"}.get(
            (old, new), "unmatched"
        )


_NO = (False, False, False)


def _aligned(ex: Explanation, one: int, two: int) -> tuple[bool, bool, bool]:
    a, m = ex.triples_1[one].key, ex.triples_2[two].key
    head, rel, tail = ex.entity(a.head), ex.relation(a.relation), ex.entity(a.tail)
    return (
        head is not None and head.partner == m.head,
        rel is not None and rel.partner == m.relation,
        tail is not None and tail.partner == m.tail,
    )


def _pick(ex: Explanation, i: int) -> tuple[Triple | None, float | None, tuple[bool, bool, bool]]:
    pick = ex.pick_of(i)
    if pick is None or i >= len(ex.triples_1):
        return None, None, _NO
    return ex.triples_2[pick.two].key, pick.cosine, _aligned(ex, i, pick.two)


def answer_rows(gold: Explanation, context: Explanation) -> list[TripleRow]:
    """One :class:`TripleRow` per answer triple (as the scorer keyed it), in the scorer's order.

    Examples
    --------
    >>> scorer = KGScorer("minilm", tau=0.65)
    >>> g, c = scorer.explain_pairs([([["Curie", "discovered", "radium"]],
    ...                               [["Marie Curie", "discovered", "radium"]]),
    ...                              ([["Curie", "discovered", "radium"]], [])])
    >>> row = answer_rows(g, c)[0]
    >>> row.gold.head, row.gold_aligned, row.context
    ('marie curie', (True, True, True), None)
    """
    rows = []
    for i, keyed in enumerate(gold.triples_1):
        g, g_cos, g_al = _pick(gold, i)
        c, c_cos, c_al = _pick(context, i)
        rows.append(TripleRow(keyed.key, g, g_cos, g_al, c, c_cos, c_al))
    return rows


def _coverage(ex: Explanation) -> dict[Triple, tuple[float, bool]]:
    out: dict[Triple, tuple[float, bool]] = {}
    for pick in ex.picks:
        key = ex.triples_2[pick.two].key
        aligned = all(_aligned(ex, pick.one, pick.two))
        best, was = out.get(key, (float("-inf"), False))
        out[key] = (max(best, pick.cosine), was or aligned)
    return out


def gold_diff(baseline: Explanation | None, new: Explanation) -> list[GoldDiffRow]:
    """Every gold triple with each run's best match of it: the triple-level diff of two answers.

    Gold triples in the new run's order, then those only the baseline's comparison kept;
    without a baseline every ``baseline`` is ``None``.

    Examples
    --------
    >>> scorer = KGScorer("minilm", tau=0.65)
    >>> gold = [["Curie", "discovered", "radium"], ["radium", "is", "metal"]]
    >>> old, new = scorer.explain_pairs([([["Curie", "discovered", "radium"]], gold),
    ...                                  ([["radium", "is", "metal"]], gold)])
    >>> [(r.gold.head, r.change) for r in gold_diff(old, new)]
    [('curie', 'lost'), ('radium', 'gained')]
    >>> [r.change for r in gold_diff(None, new)]
    ['unmatched', 'gained']
    """
    ours = _coverage(new)
    theirs = _coverage(baseline) if baseline is not None else {}
    keys = [t.key for t in new.triples_2]
    if baseline is not None:
        keys += [t.key for t in baseline.triples_2]
    rows = []
    for key in dict.fromkeys(keys):
        old, now = theirs.get(key), ours.get(key)
        rows.append(
            GoldDiffRow(
                key,
                None if old is None else old[0],
                old is not None and old[1],
                None if now is None else now[0],
                now is not None and now[1],
            )
        )
    return rows


def entity_badges(case: ReportCase) -> dict[str, dict[str, str]]:
    """Badge ``E1, E2, ...`` of every entity label, per KG: one badge for aligned partners.

    The new run's answer entities are numbered by first appearance among its keyed triples;
    a gold or context label takes the badge of the answer entity aligned to it (the
    explanations' :attr:`~s3kg_core.scoring.explain.LabelMatch.partner`). The baseline's
    answer labels take the badge of the same label in the new answer, else a new one, and
    gold labels aligned only to a baseline label take that label's badge.
    Keys: ``answer``, ``gold``, ``context``, ``baseline``.
    """
    side = case.new
    answer: dict[str, str] = {}
    for t in side.gold.triples_1:
        for label in (t.key.head, t.key.tail):
            answer.setdefault(label, f"E{len(answer) + 1}")
    out: dict[str, dict[str, str]] = {"answer": answer, "gold": {}, "context": {}, "baseline": {}}
    for name, ex in (("gold", side.gold), ("context", side.context)):
        for match in ex.entities:
            if match.partner is not None and match.label in answer:
                out[name].setdefault(match.partner, answer[match.label])
    if case.baseline is not None:
        extra = len(answer)
        for t in case.baseline.gold.triples_1:
            for label in (t.key.head, t.key.tail):
                if label not in out["baseline"]:
                    if label in answer:
                        out["baseline"][label] = answer[label]
                    else:
                        extra += 1
                        out["baseline"][label] = f"E{extra}"
        for match in case.baseline.gold.entities:
            if match.partner is not None and match.label in out["baseline"]:
                out["gold"].setdefault(match.partner, out["baseline"][match.label])
    return out


def _scorer(store: Store, signature: str, encoder: Any | None) -> KGScorer:
    from ..encoders.registry import load_encoder
    from ..stages.scored import encoder_for

    config = Signature.parse(signature).config_kwargs()
    enc = encoder if encoder is not None else load_encoder(encoder_for(store, signature))
    return KGScorer(enc, S3KGConfig(**config), cache=EmbeddingCache(enc))


def explain_cases(
    store: Store,
    signature: str,
    picks: Sequence[tuple[int, dict[str, float], dict[str, float] | None]],
    new_run: int,
    baseline_run: int | None = None,
    *,
    encoder: Any | None = None,
) -> list[ReportCase]:
    """Explain the answers of ``picks``: ``(item_id, new scores, baseline scores or None)``.

    One scorer with the signature's mode, tau, K and normalisation explains every answer
    against its gold and context KG, all in one batch; its cache is filled from the vectors
    stored for the signature's encoder first (``encoder``: an encoder object to use instead of
    loading the one the database records).

    Raises
    ------
    ConfigError
        If the signature's encoder cannot be found (pass ``encoder``).
    """
    if not picks:
        return []
    scorer = _scorer(store, signature, encoder)
    runs = [new_run] + ([baseline_run] if baseline_run is not None else [])
    texts: dict[tuple[int, int], tuple[Any, ...]] = {}
    with store.connect() as con:
        kgs = Store.load_kgs(con, runs)
        for run in runs:
            for item, *_ in picks:
                row = queries.item_answer_texts(con, run, item)
                if row is None:
                    raise ConfigError(f"run {run} has no answer to item {item}")
                texts[(run, item)] = row

    def triples(run: int, item: int, source: str) -> tuple[Triple, ...]:
        record = kgs.get((run, item, source))
        return record.triples if record is not None else ()

    keys = [(run, item) for item, *_ in picks for run in runs]
    pairs, pair_texts = [], []
    for run, item in keys:
        answer = triples(run, item, "answer")
        _, _, context, gold, text, _ = texts[(run, item)]
        pairs += [(answer, triples(run, item, "gold")), (answer, triples(run, item, "context"))]
        pair_texts += [(text, gold), (text, context)]
    needs = scorer.strings_needed(pairs, texts=pair_texts)
    with store.connect() as con:
        scorer.cache.update(queries.embeddings_of(con, scorer.cache.encoder.name, needs))
    explained = scorer.explain_pairs(pairs, texts=pair_texts)
    sides = {key: (explained[2 * i], explained[2 * i + 1]) for i, key in enumerate(keys)}

    def side(run: int, item: int, scores: dict[str, float]) -> CaseSide:
        _, _, _, _, answer, status = texts[(run, item)]
        gold_ex, ctx_ex = sides[(run, item)]
        return CaseSide(run, answer or "", status or "", scores, gold_ex, ctx_ex)

    cases = []
    for item, new_scores, old_scores in picks:
        ext_id, question, context, gold, _, _ = texts[(new_run, item)]
        baseline = None
        if baseline_run is not None and old_scores is not None:
            baseline = side(baseline_run, item, old_scores)
        cases.append(
            ReportCase(
                item,
                str(ext_id),
                question or "",
                context or "",
                gold or "",
                side(new_run, item, new_scores),
                baseline,
            )
        )
    return cases
