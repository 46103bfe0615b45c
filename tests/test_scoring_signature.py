"""Tests of s3kg_core.scoring.signature: format, parse, their round trip, and bad input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from s3kg_core.errors import InputFormatError
from s3kg_core.scoring.s3kg import S3KGConfig
from s3kg_core.scoring.signature import Signature

_NAME = st.text(st.characters(blacklist_characters="|:", blacklist_categories=("Cs",)), min_size=1)
SIGNATURES = st.builds(
    Signature,
    mode=st.sampled_from(["hybrid", "paper", "kgx"]),
    encoder=_NAME,
    tau=st.integers(0, 10_000).map(lambda i: i / 10_000),
    wl_iterations=st.integers(1, 50),
    align=st.booleans(),
    normalization=st.sampled_from(["lemma", "lower", "kgx-lower"]),
    version=_NAME,
    alpha=st.none() | st.integers(0, 100).map(lambda i: i / 100),
)


@settings(max_examples=200, derandomize=True, database=None)
@given(SIGNATURES)
def test_parse_inverts_format(sig: Signature):
    assert Signature.parse(sig.format()) == sig
    assert Signature.parse(sig.format()).format() == sig.format()


@pytest.mark.parametrize("mode", ["hybrid", "paper", "kgx"])
def test_config_signature_round_trips_to_the_same_config(mode):
    config = S3KGConfig(mode=mode, tau=0.7, wl_iterations=3, align=False, lemmatize=False)
    sig = Signature.parse(config.signature("minilm@0.1.0"))
    # regression: the dashboard's own parser fell back to mode "paper"; the mode is read, never
    # defaulted
    assert sig.mode == mode
    assert S3KGConfig(**sig.config_kwargs()).signature("minilm@0.1.0") == sig.format()


def test_the_documented_signature():
    text = "mode:hybrid|enc:minilm@0.1.0|tau:0.65|K:5|align:yes|norm:lemma|version:0.1.0|alpha:0.5"
    sig = Signature.parse(text)
    assert (sig.mode, sig.encoder, sig.tau, sig.wl_iterations) == (
        "hybrid",
        "minilm@0.1.0",
        0.65,
        5,
    )
    assert sig.components == text.removesuffix("|alpha:0.5")
    assert sig.differences(sig.with_alpha(0.8)) == {"alpha": (0.5, 0.8)}


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "is not key:value"),
        ("mode:hybrid", "lacks enc"),
        ("mode:hybrid|mode:kgx", "appears twice"),
        ("mode:hybrid|enc:m|tau:x|K:5|align:yes|norm:lemma|version:1", "could not convert"),
        ("mode:hybrid|enc:m|tau:0.6|K:5|align:maybe|norm:lemma|version:1", "align is yes or no"),
        ("mode:hybrid|enc:m|tau:0.6|K:5|align:yes|norm:lemma|version:1|colour:red", "unknown"),
    ],
)
def test_malformed_signatures_raise_a_named_error(text, message):
    with pytest.raises(InputFormatError, match=message):
        Signature.parse(text)


def test_a_field_may_not_hold_the_separators():
    with pytest.raises(InputFormatError, match="without"):
        Signature("hybrid", "a|b", 0.65, 5, True, "lemma", "0.1.0")


def test_a_signature_stored_before_scoring_versions_reads_and_differs_only_in_version() -> None:
    """Databases written by 0.1.0 hold ``version:0.1.0`` (the package version then)."""
    from s3kg_core import SCORING_VERSION, S3KGConfig

    old = Signature.parse(
        "mode:hybrid|enc:minilm@0.1.0|tau:0.65|K:5|align:yes|norm:lemma|version:0.1.0"
    )
    new = Signature.parse(S3KGConfig(mode="hybrid").signature("minilm@0.1.0"))
    assert old.differences(new) == {"version": ("0.1.0", SCORING_VERSION)}
    assert old.format().endswith("|version:0.1.0")
