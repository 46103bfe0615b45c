"""Tests of s3kg_core.amr: PENMAN graphs read with penman's AMR model, and the AMR-to-KG mapping."""

from __future__ import annotations

import pytest

from s3kg_core.amr import (
    SINGLE_NODE_RELATION,
    AMRGraph,
    amr_to_triples,
    concept_label,
    parse_penman,
    read_penman,
    read_penman_pairs,
)
from s3kg_core.errors import InputFormatError, PenmanFormatError
from s3kg_core.kg import Triple


def _triples(text: str) -> list[tuple[str, str, str]]:
    [graph] = parse_penman(text)
    return [(t.head, t.relation, t.tail) for t in amr_to_triples(graph)]


@pytest.mark.parametrize(
    ("concept", "label"),
    [
        ("dance-01", "dance"),
        ("have-org-role-91", "have-org-role"),
        ("man", "man"),
        ("string-entity", "string-entity"),
        ("rate-entity-91", "rate-entity"),
    ],
)
def test_the_sense_suffix_is_dropped(concept, label):
    assert concept_label(concept) == label


def test_a_bamboo_graph_with_an_inverse_role():
    text = """# ::id 0
# ::snt A man with a hard hat is dancing.
(xv0 / dance-01
      :ARG0 (xv4 / man
            :ARG0-of (xv1 / have-03
                  :ARG1 (xv2 / hat
                        :mod (xv3 / hard)))))
"""
    assert _triples(text) == [
        ("dance", "ARG0", "man"),
        ("have", "ARG0", "man"),  # (m :ARG0-of h) is h's ARG0 edge to m
        ("have", "ARG1", "hat"),
        ("hat", "mod", "hard"),
    ]


def test_inverse_roles_are_de_inverted_but_consist_of_is_a_role():
    text = "(e / erase-01 :ARG0 (b / board :consist-of (c / chalk)) :ARG1-of (w / want-01))"
    assert _triples(text) == [
        ("erase", "ARG0", "board"),
        ("board", "consist-of", "chalk"),
        ("want", "ARG1", "erase"),
    ]


def test_mod_of_is_de_inverted_and_reification_is_left_as_it_comes():
    text = "(b / be-located-at-91 :ARG1 (c / cat) :ARG2 (m / mat) :mod-of (t / time))"
    assert _triples(text) == [
        ("be-located-at", "ARG1", "cat"),
        ("be-located-at", "ARG2", "mat"),
        ("time", "mod", "be-located-at"),
    ]


def test_constants_are_unquoted_and_polarity_and_numbers_stay_text():
    text = (
        '(s / say-01 :polarity - :ARG0 (c / country :name (n / name :op1 "United" :op2 "States"))'
        ' :quant 5 :value 2.5 :li -1 :op3 "say \\"hi\\"" :mode imperative)'
    )
    assert _triples(text) == [
        ("say", "polarity", "-"),
        ("say", "ARG0", "United States"),
        ("United States", "instance", "country"),
        ("say", "quant", "5"),
        ("say", "value", "2.5"),
        ("say", "li", "-1"),
        ("say", "op3", 'say "hi"'),
        ("say", "mode", "imperative"),
    ]


def test_a_named_entity_is_named_by_its_name_and_keeps_its_concept_in_one_triple():
    # issue 57: every name was one `name` node, so two people swapped in their roles gave the
    # same KG (BAMBOO's role confusion pairs tied); the op parts join in their numbered order
    text = (
        '(b / beat-03 :ARG0 (p / person :name (n / name :op2 "Furlan" :op1 "Renzo"))'
        ' :ARG1 (p2 / person :wiki - :name (n2 / name :op1 "A" :op10 "C" :op2 "B")))'
    )
    assert _triples(text) == [
        ("beat", "ARG0", "Renzo Furlan"),
        ("Renzo Furlan", "instance", "person"),
        ("beat", "ARG1", "A B C"),
        ("A B C", "wiki", "-"),
        ("A B C", "instance", "person"),
    ]
    swapped = text.replace(":ARG0 (p /", ":ARG1 (p /").replace(":ARG1 (p2", ":ARG0 (p2")
    assert set(_triples(swapped)) != set(_triples(text))


def test_a_name_node_that_is_no_variable_s_name_stays_as_written():
    # only a `name` node some variable's :name points at is read as that variable's name
    assert _triples('(s / say-01 :ARG1 (n / name :op1 "Obama"))') == [
        ("say", "ARG1", "name"),
        ("name", "op1", "Obama"),
    ]
    # a :name whose target is no `name` concept, or has no constant parts, changes nothing
    assert _triples("(c / city :name (n / name :op1 (x / thing)))") == [
        ("city", "name", "name"),
        ("name", "op1", "thing"),
    ]


def test_two_variables_with_one_concept_are_one_node_and_reentrancy_keeps_the_concept():
    text = "(s / see-01 :ARG0 (m / man) :ARG1 (m2 / man) :ARG2 (g / go-02 :ARG0 m))"
    triples = _triples(text)
    assert triples == [
        ("see", "ARG0", "man"),
        ("see", "ARG1", "man"),
        ("see", "ARG2", "go"),
        ("go", "ARG0", "man"),
    ]
    nodes = {t[0] for t in triples} | {t[2] for t in triples}
    assert nodes == {"see", "man", "go"}


def test_duplicate_triples_are_kept():
    text = "(a / and :op1 (b / boy :mod (y / young)) :op2 (b2 / boy :mod (y2 / young)))"
    assert _triples(text).count(("boy", "mod", "young")) == 2


def test_a_graph_of_one_node_gives_one_instance_triple():
    assert _triples("(l / line)") == [("line", SINGLE_NODE_RELATION, "line")]
    assert _triples("(d / dance-01)") == [("dance", "instance", "dance")]
    # one node with an attribute is no longer a lone node: only the attribute
    assert _triples("(d / dance-01 :polarity -)") == [("dance", "polarity", "-")]


def test_two_identical_one_node_graphs_score_as_identical(scorer_hybrid):
    a, b = (amr_to_triples(g) for g in parse_penman("(l / line)\n\n(x / line)"))
    [result] = scorer_hybrid.score_pairs([(a, b)])
    assert result.status == "ok"
    assert result.score == pytest.approx(1.0, abs=1e-6)


def test_metadata_ids_indexes_and_lines():
    text = """# AMR corpus header: a block of comments only

# ::id first ::date 2021
# ::snt One.
(o / one)

(t / two)
"""
    graphs = parse_penman(text)
    assert [(g.id, g.index, g.line, g.sentence) for g in graphs] == [
        ("first", 0, 3, "One."),
        ("1", 1, 7, None),
    ]
    assert graphs[0].metadata["date"] == "2021"
    assert graphs[0].source == "<text>"


def test_a_graph_round_trips_through_its_dict():
    [g] = parse_penman('# ::id 7\n# ::snt Yes.\n(y / yes-01 :ARG0-of (s / say-01 :op1 "x"))')
    back = AMRGraph.from_dict(g.to_dict())
    assert back == g
    assert back.triples() == g.triples() == amr_to_triples(g.graph)
    assert "yes-01" in g.penman()


def test_triples_are_the_project_triples():
    [g] = parse_penman("(a / b-01 :ARG0 (c / d))")
    assert amr_to_triples(g) == [Triple("b", "ARG0", "d")]


@pytest.mark.parametrize(
    ("text", "block", "line", "message"),
    [
        ("(a / b)\n\n(c / d :ARG0 (e / f)", 2, 3, "unbalanced parentheses: 1 not closed"),
        ("(a / b)\n\n(c / d) (e / f)", 2, 3, "text after the graph: '(e / f)'"),
        ("(a / b)\n\n# ::id 2\njunk (c / d)", 2, 3, "text before the graph: 'junk (c / d)'"),
        ("(a / b / c)", 1, 1, "Expected: ROLE"),
        ('(a / b :op1 "open)', 1, 1, "a quoted constant is not closed"),
        ("(a / b)\n\n\n(c / d :ARG0 )", 2, 4, "role :ARG0 of c has no target"),
        ("(a :ARG0 (b / c))", 1, 1, "variable a has no concept"),
        ("()", 1, 1, "has no concept"),
    ],
)
def test_a_malformed_block_is_a_named_error_with_its_block_and_line(text, block, line, message):
    with pytest.raises(PenmanFormatError) as info:
        parse_penman(text, source="x.amr")
    text_of = str(info.value)
    assert text_of.startswith(f"x.amr, block {block} (line {line})"), text_of
    assert message in text_of
    assert "\n" not in text_of
    assert isinstance(info.value, InputFormatError)


def test_penman_logs_nothing_for_a_block_it_would_warn_about(caplog):
    with pytest.raises(PenmanFormatError):
        parse_penman("(a / b :ARG0 )")
    assert not [r for r in caplog.records if r.name.startswith("penman")]


def test_read_penman_names_the_file(tmp_path):
    path = tmp_path / "src.amr"
    path.write_bytes(b"# ::snt caf\xe9\n(c / cafe)\n\n(d / dog :ARG0 )\n")
    with pytest.raises(PenmanFormatError, match=r"^src\.amr, block 2 \(line 4\)"):
        read_penman(path)
    path.write_bytes(b"# ::snt caf\xe9\n(c / cafe)\n")
    [g] = read_penman(path)
    assert g.sentence == "caf\ufffd" and g.source == "src.amr"
    with pytest.raises(InputFormatError, match="cannot read"):
        read_penman(tmp_path / "absent.amr")


def test_parallel_files_pair_up_or_name_both_counts(tmp_path):
    one = tmp_path / "src.amr"
    two = tmp_path / "tgt.amr"
    one.write_text("# ::id a\n(x / dog)\n\n# ::id b\n(y / cat)\n", encoding="utf-8")
    two.write_text("(x / dog)\n\n(y / cow)\n", encoding="utf-8")
    pairs = read_penman_pairs(one, two)
    assert [(a.id, b.id) for a, b in pairs] == [("a", "0"), ("b", "1")]
    two.write_text("(x / dog)\n", encoding="utf-8")
    with pytest.raises(InputFormatError) as info:
        read_penman_pairs(one, two)
    assert str(info.value).startswith("src.amr has 2 graphs and tgt.amr has 1")


# -- deep nesting (issue 59, item 4) ---------------------------------------------------------------


def nested_penman(levels: int, graph_id: str = "deep") -> str:
    """One graph of ``levels`` nodes, each the ARG0 of the one before."""
    inner = "".join(f" :ARG0 (a{i} / x" for i in range(1, levels))
    return f"# ::id {graph_id}\n(a0 / x{inner}{')' * levels}\n"


@pytest.mark.parametrize("levels", [101, 500, 5_000])
def test_a_graph_nested_past_the_limit_is_one_error_naming_file_and_block(levels):
    """Regression: 500 levels and more gave a 2,996-line RecursionError traceback."""
    from s3kg_core.limits import MAX_PENMAN_DEPTH

    text = "(a / b)\n\n" + nested_penman(levels)
    with pytest.raises(PenmanFormatError) as info:
        parse_penman(text, source="deep.amr")
    assert str(info.value) == (
        f"deep.amr, block 2 (line 3): malformed PENMAN: nested more than {MAX_PENMAN_DEPTH} "
        "parentheses deep (the limit)"
    )


def test_a_graph_at_the_limit_is_read():
    from s3kg_core.limits import MAX_PENMAN_DEPTH

    [graph] = parse_penman(nested_penman(MAX_PENMAN_DEPTH))
    assert len(graph.triples()) == MAX_PENMAN_DEPTH - 1
    assert AMRGraph.from_dict(graph.to_dict()).triples() == graph.triples()


def test_a_stack_too_shallow_for_the_reader_is_a_format_error_too():
    """What penman cannot read by recursion within the limit (a caller deep in its own stack)
    is the same one-line error, never a RecursionError."""
    import inspect
    import sys

    from s3kg_core.limits import MAX_PENMAN_DEPTH

    text = nested_penman(MAX_PENMAN_DEPTH)
    [graph] = parse_penman(text)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + 60)  # room for a few levels, not a hundred
    try:
        with pytest.raises(PenmanFormatError, match=r"^x\.amr, block 1 \(line 1\): .*too deeply"):
            parse_penman(text, source="x.amr")
        with pytest.raises(PenmanFormatError, match=r"block 1 \(line 1\): nested too deeply"):
            graph.penman()
    finally:
        sys.setrecursionlimit(limit)


# -- large input: capped before it is read, counted before it is decoded (issue 59, item 8) ------


def test_a_penman_file_past_the_cap_is_refused_before_it_is_read(tmp_path, monkeypatch):
    """Regression: 45 MB of one graph took 59 s and 2.67 GB before any limit applied."""
    import s3kg_core.amr as amr
    import s3kg_core.limits as limits

    path = tmp_path / "big.amr"
    path.write_text("(a / b :ARG0 \n" * 10, encoding="utf-8")  # malformed: never parsed
    monkeypatch.setattr(limits, "MAX_IMPORT_BYTES", path.stat().st_size - 1)
    for read in (lambda: read_penman(path), lambda: amr.penman_pair_rows(path, path)):
        with pytest.raises(InputFormatError) as info:
            read()
        assert not isinstance(info.value, PenmanFormatError)
        assert str(info.value).startswith("big.amr holds 0 MB; a PENMAN file takes at most 0 MB")
    monkeypatch.setattr(limits, "MAX_IMPORT_BYTES", path.stat().st_size)
    with pytest.raises(PenmanFormatError):  # at the cap: read (and found malformed)
        read_penman(path)


def test_parallel_files_are_counted_before_any_graph_is_decoded(tmp_path):
    """Regression: 695,988 graphs against one were all decoded (81 s, 2.53 GB) before the
    counts were compared; a malformed graph past the shorter file's end is never reached."""
    from s3kg_core.amr import penman_pair_rows

    many, one = tmp_path / "many.amr", tmp_path / "one.amr"
    many.write_text("(a / dog)\n\n(b / cat :ARG0 \n\n(c / cow)\n", encoding="utf-8")
    one.write_text("# a header\n\n(a / dog)\n", encoding="utf-8")
    for read in (read_penman_pairs, penman_pair_rows):
        with pytest.raises(InputFormatError) as info:
            read(many, one)
        assert str(info.value).startswith("many.amr has 3 graphs and one.amr has 1: parallel")


def test_a_graph_with_more_roles_than_triples_allowed_is_oversized_without_decoding(
    tmp_path, monkeypatch
):
    import s3kg_core.amr as amr

    monkeypatch.setattr(amr, "MAX_TRIPLES", 10)
    src, tgt = tmp_path / "src.amr", tmp_path / "tgt.amr"
    roles = "".join(f' :mod "x{i}"' for i in range(20))
    names = "".join(f' :op{i} "n"' for i in range(40))  # a name's parts give no triple
    src.write_text(
        f"# ::id big\n(a / b{roles}\n\n# ::id names\n(c / d :name (n / name{names}))\n",
        encoding="utf-8",
    )  # the first is malformed too (no closing parenthesis): it is never decoded
    tgt.write_text("(a / b)\n\n(c / d)\n", encoding="utf-8")
    rows = amr.penman_pair_rows(src, tgt)
    assert [(r.id, r.status) for r in rows] == [("big", "oversized_kg_1"), ("names", "ok")]
    assert rows[0].problem == "kg_1: more than 10 triples (20 roles; the limit is 10)"
    assert rows[0].kg_1 == [] and len(rows[1].kg_1) == 1  # (name, instance, concept)


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="needs a FIFO")
def test_a_penman_fifo_is_stopped_at_the_input_cap(tmp_path, monkeypatch):
    """Issue 59: a PENMAN file was size-checked, then opened as it is: a FIFO (whose size says
    nothing) was read without bound. It is read through the capped stream now."""
    from fifo_helpers import flooded_fifo

    from s3kg_core.errors import InputTooLargeError
    from s3kg_core.limits import MAX_INPUT_ENV

    monkeypatch.setenv(MAX_INPUT_ENV, "1")
    fifo = tmp_path / "graphs.amr"
    with (
        flooded_fifo(fifo, b"(d / dog)\n\n" * 10_000) as wrote,
        pytest.raises(InputTooLargeError, match="more than 1"),
    ):
        read_penman(fifo)
    assert len(wrote) < 40  # the reader stopped before the writer was done
