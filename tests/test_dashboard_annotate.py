"""The Annotate page's rules (dashboard.annotate): units, verdicts, focus, keys, names, the URL."""

from __future__ import annotations

import pandas as pd
import pytest

from dashboard import annotate
from s3kg_core.kg import Triple

RESULT = {
    "aligned": [
        {"gold": ["paper", "publish in", "nature"], "answer": ["paper", "appear in", "nature"],
         "similarity": 0.8123},
    ],
    "relation_mismatch": [
        {"gold": ["curie", "win", "prize"], "answer": ["curie", "lose", "prize"],
         "kind": "relation", "parts": "relation", "similarity": 0.7712},
    ],
    "extra": [["moon", "be", "cheese"]],
    "missing": [["sun", "be", "star"]],
}  # fmt: skip
GOLD = [Triple("Paper", "published_in", "Nature"), Triple("Curie", "won", "prize"),
        Triple("Sun", "is", "star")]  # fmt: skip
ANSWER = [Triple("paper", "appeared in", "Nature")]


@pytest.fixture
def units():
    return annotate.units_from_tau(1, 7, RESULT, GOLD, ANSWER)


def test_every_unit_tau_gave_is_listed_in_its_order_with_its_cosine(units):
    assert [u.category for u in units] == ["aligned", "relation_mismatch", "extra", "missing"]
    assert [u.similarity for u in units] == [0.8123, 0.7712, None, None]
    assert units[0].gold_extracted == (("Paper", "published_in", "Nature"),)
    assert units[2].gold is None and units[3].answer is None


def test_every_unit_starts_undecided_and_only_the_annotator_s_verdicts_count(units):
    # regression (issue 16): every proposal started as "confirm"
    assert annotate.unit_verdicts(units, {}) == [None] * 4
    current = pd.DataFrame(
        {
            "gold_triple": [("paper", "publish in", "nature"), None, ("sun", "be", "star")],
            "answer_triple": [("paper", "appear in", "nature"), ("moon", "be", "cheese"), None],
            "verdict": ["reject", "skip", "add"],  # an add is no verdict on a unit
        }
    )
    verdicts = annotate.unit_verdicts(units, annotate.verdict_map(current))
    assert verdicts == ["reject", None, "skip", None]


@pytest.mark.parametrize(
    ("verdicts", "focus", "expected"),
    [
        ([None, None, None], -1, 0),  # opens on the first
        (["confirm", None, None], 0, 1),
        (["confirm", "reject", None], 1, 2),
        ([None, "confirm", "skip"], 2, 0),  # wraps to an undecided one
        (["confirm", "confirm", "confirm"], 0, 1),  # all decided: simply the next
        (["confirm", "confirm", "confirm"], 2, 2),  # and stays on the last
        ([], 0, 0),
    ],
)
def test_the_next_focus_is_the_next_undecided_pair(verdicts, focus, expected):
    assert annotate.next_focus(verdicts, focus) == expected


def test_the_table_marks_the_focused_unit_and_shows_triples_as_extracted(units):
    table = annotate.unit_rows(units, ["confirm", None, None, "skip"], 1)
    assert table[""].tolist() == ["", "▶", "", ""]
    assert table["Gold triple"].tolist()[0] == "Paper | published_in | Nature"
    assert table["Answer triple"].tolist()[2] == "moon | be | cheese"  # no extracted form known
    assert table["Gold triple"].tolist()[2] == "-"
    assert table["Your verdict"].tolist() == ["confirm", "", "", "skip"]
    assert table["TAU says"].tolist()[3] == "missing (gold only)"


def test_one_key_per_action_none_reserved_by_streamlit():
    keys = [a.key for a in annotate.ACTIONS]
    assert len(set(keys)) == len(keys) == 7
    assert not {"C", "R"} & set(keys)  # Streamlit keeps C and R for itself
    assert [a.name for a in annotate.ACTIONS] == [
        "confirm", "reject", "skip", "undo", "previous", "next", "next_item"
    ]  # fmt: skip
    assert all(f"{a.key} {a.label.lower()}" in annotate.key_hints() for a in annotate.ACTIONS)


def test_a_name_in_the_url_is_offered_until_confirmed():
    state: dict = {}
    offered = annotate.choose_name({"annotator": " bob "}, state)
    assert offered.name == "" and offered.offered == "bob" and offered.needs_confirming
    state["annotate.name"] = "ann"  # someone typed their own name: the link's is still offered
    assert annotate.choose_name({"annotator": "bob"}, state).needs_confirming is False
    assert annotate.choose_name({"annotator": "bob"}, state).offered == "bob"
    state["annotate.name"] = "bob"
    assert annotate.choose_name({"annotator": "bob"}, state).offered == ""
    assert annotate.choose_name({}, {}) == annotate.NameChoice("", "")


def test_a_name_this_browser_confirmed_is_kept_across_a_reload():
    """Issue 43 (item 8): a reload (a new session) asked "I am bob" again; the name this
    browser confirmed (its session cookie) is the name, and the link's is no longer offered;
    a name the session chose wins over it, and another's link is still offered."""
    reload = annotate.choose_name({"annotator": "bob"}, {}, remembered="bob")
    assert reload == annotate.NameChoice("bob", "") and not reload.needs_confirming
    assert annotate.choose_name({}, {}, remembered="bob").name == "bob"  # a new tab
    switched = annotate.choose_name({"annotator": "bob"}, {"annotate.name": "ann"}, "bob")
    assert switched.name == "ann" and switched.offered == "bob"
    other = annotate.choose_name({"annotator": "carl"}, {}, remembered="bob")
    assert other.name == "bob" and other.offered == "carl"


def test_the_pickers_show_the_question_id_the_page_shows():
    """Issue 43 (item 8): the picker said "item 13" while the page said "demo-13": typing the
    question's id found nothing."""
    assert "demo-13" in annotate.item_label(13, 2, 0.5, "Who?", "demo-13")
    assert "· demo-13 ·" in annotate.queue_label(0, 1, 13, 0, 2, "Who?", "demo-13")


def test_next_in_order_skips_answers_with_nothing_to_judge_and_wraps():
    counts = {1: 2, 2: 0, 3: 1}
    assert annotate.next_in_order([1, 2, 3], 1, counts) == 3
    assert annotate.next_in_order([1, 2, 3], 3, counts) == 1
    assert annotate.next_in_order([1, 2, 3], 9, counts) == 1  # not listed: the first
    assert annotate.next_in_order([1, 2], 1, {1: 0, 2: 0}) is None
    assert annotate.first_with_units([2, 3], counts) == 3


def test_a_case_link_opens_once_and_the_page_s_own_case_is_not_new():
    state: dict = {}
    assert annotate.case_from_query({"run": "2", "item": "14"}, state) == (2, 14)
    assert annotate.case_from_query({"run": "2", "item": "14"}, state) == (None, None)
    annotate.note_case(state, 2, 15)
    assert annotate.case_from_query({"run": "2", "item": "15"}, state) == (None, None)
    assert annotate.case_from_query({"run": "2", "item": "x"}, state) == (None, None)


@pytest.mark.parametrize(
    "params",
    [
        {"run": "2", "item": str(2**127)},  # issue 59: DuckDB's ConversionException
        {"run": "9" * 400, "item": "3"},
        {"run": "2", "item": "9" * 5000},
        {"run": "2", "item": str(2**31)},
        {"run": "-1", "item": "3"},
    ],
)
def test_a_case_id_past_its_column_names_no_case(params):
    state: dict = {}
    assert annotate.case_from_query(params, state) == (None, None)
    assert state == {}
    assert annotate.case_from_query({"run": "2", "item": str(2**31 - 1)}, state) == (2, 2**31 - 1)


def test_a_queue_answer_names_its_categories_and_the_precision_line_each_category():
    """Issue 58.7: the queue is dealt out across TAU's categories; the page says so per answer
    and gives each category's precision so far with its interval."""
    from s3kg_core.annotation.quality import tau_quality

    label = annotate.queue_label(2, 1, 13, 0, 4, "Who?", "demo-13", ("aligned", "roles_swapped"))
    assert label == "3. run 1 · item 13 · demo-13 · aligned, roles swapped · 0 of 4 decided · Who?"
    labels = pd.DataFrame(
        [("aligned", "confirm", "majority"), ("aligned", "reject", "majority"),
         ("extra", "confirm", "majority")],
        columns=["category", "label", "source"],
    )  # fmt: skip
    found = tau_quality(labels, bootstrap=0).confirmed
    line = annotate.precision_line(found, ["missing", "aligned"])
    a, e = found["aligned"], found["extra"]
    assert line == (
        f"aligned **0.500** ({a.low:.3f} to {a.high:.3f}, n = 2) · "
        f"extra **1.000** ({e.low:.3f} to {e.high:.3f}, n = 1) · missing: none judged yet"
    )  # TAU's order; a judged category shows though no answer of the queue holds it
    assert "none judged" not in annotate.precision_line(found, [])
