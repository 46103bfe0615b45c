"""Search: every stored answer by its words, run and statuses, each linked to the explorer.

The words are looked for in the answer (the default: the page searches answers) or in the
answer, question, gold answer and context; each row says which texts hold a word, and the
page's rows show the words marked in a snippet (:mod:`dashboard.search_snippet`, escaped).
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from dashboard import live_alpha, navigation, url_state, views, widgets
from dashboard.data import reads, search
from dashboard.search_snippet import match_row_html
from s3kg_core.store.search_queries import SCORE_FILTERS, TAU_FILTERS, ScoreRange

PAGE_SIZE = 50
ANY = "any"
ANSWER_STATUSES = (ANY, "ok", "empty", "error", "truncated")
KG_STATUSES = (ANY, "ok", "empty", "failed", "truncated", "missing")
TAU_CHOICES = (ANY, *TAU_FILTERS)
SCORE_NAMES = {"cus": "CUS", "gold_sim": "GoldSim (S3KG vs gold)"}
FULL = (0.0, 1.0)
# where the words are looked for (?in=all in the URL; answers only by default)
SCOPES = {"answer": "answers only", "all": "answers, questions, contexts"}


def _range(value: str) -> tuple[float, float]:
    """``"0.2-0.5"`` from a URL as a score range inside [0, 1] (the full range otherwise)."""
    try:
        low, high = sorted(min(1.0, max(0.0, float(v))) for v in value.split("-", 1))
    except ValueError:
        return FULL
    return (round(low, 2), round(high, 2))


widgets.page_setup("Search answers")
url_state.adopt_alpha("search")
controls = widgets.sidebar()  # alpha: the score range filters scores at it
runs = reads.load_runs(controls.view)
labels = {str(run_id): label for label, run_id in views.run_choices(runs).items()}

found = url_state.adopt(
    "search",
    {
        "q": str,
        "in": lambda v: v if v in SCOPES else "answer",
        "runs": lambda v: [r for r in v.split(",") if r in labels],
        "status": lambda v: v if v in ANSWER_STATUSES else ANY,
        "kg": lambda v: v if v in KG_STATUSES else ANY,
        "page": url_state.parse_page,
        "tau": lambda v: v if v in TAU_CHOICES else ANY,
        "score": lambda v: v if v in SCORE_FILTERS else "cus",
        "range": _range,
    },
)
for param, key in (("q", "search.q"), ("in", "search.scope"), ("runs", "search.runs"),
                   ("status", "search.status"), ("kg", "search.kg"), ("page", "search.page"),
                   ("tau", "search.tau"), ("score", "search.score"),
                   ("range", "search.range")):  # fmt: skip
    if param in found:
        st.session_state[key] = found[param]

cols = st.columns([4, 4, 2, 2], vertical_alignment="bottom")
scope = str(st.session_state.get("search.scope", "answer"))
text = cols[0].text_input(
    "Words", key="search.q",
    placeholder="in the answer" if scope == "answer" else "in the answer, question or context",
    help="Every word must occur (any case) in the answer, or, with **Words in** set to "
    "answers, questions, contexts, in any of the answer, the question, the gold answer and "
    "the context.",
)  # fmt: skip
chosen = cols[1].multiselect(
    "Runs", list(labels), format_func=labels.__getitem__, key="search.runs", placeholder="all runs"
)
status = cols[2].selectbox("Answer status", ANSWER_STATUSES, key="search.status")
kg = cols[3].selectbox(
    "Answer KG", KG_STATUSES, key="search.kg",
    help="The status of the answer's KG (missing: not extracted yet).",
)  # fmt: skip
more = st.columns([4, 3, 3, 3], vertical_alignment="bottom")  # "Words in" whole at 1280
scope = more[0].selectbox(
    "Words in", list(SCOPES), key="search.scope", format_func=SCOPES.__getitem__,
    help="Answers only: the words are looked for in the model's answer. Answers, questions, "
    "contexts: in the answer, the question, the gold answer and the context.",
)  # fmt: skip
tau_category = more[1].selectbox(
    "TAU category", TAU_CHOICES, key="search.tau", format_func=lambda v: v.replace("_", " "),
    help="Answers TAU analysed (`s3kg tau`: the lowest-scoring share of each run) with at least "
    "one gold triple in this category.",
)  # fmt: skip
score = more[2].selectbox(
    "Score", list(SCORE_NAMES), key="search.score", format_func=SCORE_NAMES.__getitem__,
    disabled=controls.signature is None, help="The score the range below bounds, at the "
    "sidebar's alpha and signature.",
)  # fmt: skip
low, high = more[3].slider(
    f"{SCORE_NAMES[score].split(' ')[0]} between", 0.0, 1.0, FULL, step=0.05,
    key="search.range", disabled=controls.signature is None,
)  # fmt: skip
bounded = controls.signature is not None and (low, high) != FULL
score_range = (
    ScoreRange(controls.signature, controls.alpha, score, low, high)
    if bounded and controls.signature is not None
    else None
)
filters = (text, scope, tuple(chosen), status, kg, tau_category, score_range)
if st.session_state.get("search._filters") != filters:  # new filters: back to page 1
    st.session_state["search._filters"] = filters
    if "page" not in found:
        st.session_state["search.page"] = 0
page = int(st.session_state.get("search.page", 0))

hits, total = search.search(
    controls.view,
    text.strip(),
    tuple(int(r) for r in chosen) or None,
    None if status == ANY else status,
    None if kg == ANY else kg,
    page,
    PAGE_SIZE,
    tau_category=None if tau_category == ANY else tau_category,
    score_range=score_range,
    scope=scope,
)
pages = max(1, -(-total // PAGE_SIZE))
url_state.write(
    "search",
    {
        "q": text.strip() or None,
        "in": None if scope == "answer" else scope,
        "runs": ",".join(chosen) or None,
        "status": None if status == ANY else status,
        "kg": None if kg == ANY else kg,
        "page": str(page + 1) if page else None,
        "tau": None if tau_category == ANY else tau_category,
        "score": score if bounded and score != "cus" else None,
        "range": f"{low:g}-{high:g}" if bounded else None,
        "alpha": f"{controls.alpha:g}" if bounded else None,
    },
)

if score_range is not None:
    # issue 60: how many answers the range keeps at every stop of the alpha slider, shown by
    # the browser as it moves; the rows below are the server's (they follow on release)
    counts = search.counts_by_alpha(
        controls.view, text.strip(), tuple(int(r) for r in chosen) or None,
        None if status == ANY else status, None if kg == ANY else kg, live_alpha.GRID,
        replace(score_range, alpha=0.0),  # the counts do not depend on it: one cache entry
        tau_category=None if tau_category == ANY else tau_category, scope=scope,
    )  # fmt: skip
    name = SCORE_NAMES[score].split(" ")[0]
    live_alpha.mount(
        live_alpha.note(
            [
                f"{name} between {low:g} and {high:g} at alpha {stop:g}: "
                + (f"{n:,} answer" if n == 1 else f"{n:,} answers")
                for stop, n in zip(live_alpha.GRID, counts, strict=True)
            ],
            "the rows below follow when you release the slider",
            caption=True,
        ),
        alpha=controls.alpha,
        key="search.in_range",
    )

head, prev, nxt = st.columns([6, 2, 2], vertical_alignment="bottom")
where = "in the answer" if scope == "answer" else "in the answer, question, gold answer or context"
head.markdown(
    (f"**{total:,} answer** matches" if total == 1 else f"**{total:,} answers** match")
    + (f" (words {where})" if text.strip() else "")
    + f" · page {min(page + 1, pages)} of {pages} · the link opens the answer in the Sample "
    "explorer"
)  # fmt: skip
if prev.button("Previous", key="search.prev", disabled=page == 0, width="stretch"):
    st.session_state["search.page"] = page - 1
    st.rerun()
if nxt.button("Next", key="search.next", disabled=page + 1 >= pages, width="stretch"):
    st.session_state["search.page"] = page + 1
    st.rerun()
table = hits.assign(
    run=[labels.get(str(r), n) for r, n in zip(hits["run_id"], hits["run"], strict=True)],
    explorer=[
        navigation.case_url("explorer", int(r), int(i))
        for r, i in zip(hits["run_id"], hits["item_id"], strict=True)
    ],
)
st.dataframe(
    table,
    hide_index=True,
    width="stretch",
    # every column fits at 1280 px (issue 43: run and the statuses ran off the right edge);
    # the run's label names its temperature, a long text shows whole on hover
    column_order=[
        "explorer", "ext_id", "question", "answer", "run", "answer_status", "answer_kg_status",
    ],
    column_config={
        "explorer": st.column_config.LinkColumn("open", display_text="explorer", width=66),
        "ext_id": st.column_config.TextColumn("item", width=72),
        "question": st.column_config.TextColumn("question", width=150),
        "answer": st.column_config.TextColumn("answer", width=170),
        "run": st.column_config.TextColumn("run", width=200),
        "answer_status": st.column_config.TextColumn("status", width=60),
        "answer_kg_status": st.column_config.TextColumn("answer KG", width=82),
    },
    key="search.results",
)  # fmt: skip
words = text.split()
if words and len(table):
    # where the words are: each row's first matched text around its first match, the words
    # marked; every text escaped (dashboard.search_snippet), no Markdown
    st.markdown("**Where the words are** (this page's answers)")
    rows = "".join(
        match_row_html(url, str(ext_id), str(run), str(matched), str(field), str(hit or ""), words)
        for url, ext_id, run, matched, field, hit in zip(
            table["explorer"], table["ext_id"], table["run"], table["matched"],
            table["match_field"], table["match_text"], strict=True,
        )
    )  # fmt: skip
    st.html(
        '<table style="width:100%;border-collapse:collapse;font-size:0.9rem;line-height:1.45">'
        "<thead><tr>"
        + "".join(
            f'<th style="text-align:left;padding:4px 8px;font-weight:600">{h}</th>'
            for h in ("item", "run", "matched in", "the words in their text")
        )
        + f"</tr></thead><tbody>{rows}</tbody></table>"
    )
