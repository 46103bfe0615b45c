"""Tests of dashboard/run_page.py."""

from __future__ import annotations

import doctest

import dashboard.run_page as module


def test_the_module_doctests_pass():
    assert doctest.testmod(module).failed == 0


def test_every_signature_the_run_page_prints_ends_with_its_alpha():
    """Issue 58 (item 3): the Run page's tables printed stored signatures without alpha
    (``...|version:4``), while its numbers are blended at the sidebar's alpha; a signature
    stored with an alpha gets the one shown, not a second."""
    import pandas as pd

    stored = "mode:ot|enc:minilm@0.1.0|tau:0.65|K:5|align:yes|norm:lemma|version:4"
    info = {"name": "m", "model": "m", "dataset": "d", "settings": {}}
    for alpha in (0.0, 0.5, 1.0):
        row = module.identity(info, stored, alpha).set_index("field")["value"]
        assert row["score signature"] == f"{stored}|alpha:{alpha:g}"
        scored = pd.DataFrame({"signature": [stored, f"{stored}|alpha:0.8"], "scored": [3, 1]})
        assert (
            module.scored_table(scored, alpha)["signature"].tolist()
            == [f"{stored}|alpha:{alpha:g}"] * 2
        )
        assert scored["signature"].tolist()[0] == stored  # the stored frame is left as it was
    assert module.identity(info, None, 0.5).iloc[-1]["value"] == "not scored"
