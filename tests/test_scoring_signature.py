"""Tests of s3kg_core.scoring.signature: format, parse, their round trip, and bad input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from s3kg_core.errors import ConfigError, InputFormatError
from s3kg_core.scoring.s3kg import S3KGConfig
from s3kg_core.scoring.signature import BaselineSignature, Signature, TauSignature
from s3kg_core.scoring.tau import COMPONENT_THRESHOLD, TRIPLE_THRESHOLD
from s3kg_core.stages.tau import tau_signature

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


@pytest.mark.parametrize("alpha", [None, -0.1, 1.5, "0.5"])
def test_a_blended_signature_needs_its_alpha_issue_58(alpha):
    """Issue 58: ``blended(components, None)`` returned the signature without alpha, and the
    report, the check and ``s3kg cus`` printed that; the alpha is required."""
    stored = "mode:ot|enc:minilm@0.1.0|tau:0.65|K:5|align:yes|norm:lemma|version:4"
    with pytest.raises(ConfigError, match="alpha must be a number in"):
        Signature.blended(stored, alpha)
    assert Signature.blended(stored, 0.0) == stored + "|alpha:0"


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


# -- TAU's, checkers' and baselines' signatures: the strings stored before, byte for byte ---------


def _old_tau(encoder: str, triple: float, component: float, source: str) -> str:
    """stages.tau.tau_signature before TauSignature (the f-string that wrote stored rows)."""
    return f"tau|enc:{encoder}|triple:{triple:g}|component:{component:g}|threshold:{source}"


@pytest.mark.parametrize(
    ("encoder", "triple", "component", "source"),
    [
        ("minilm@0.1.0", 0.76, 0.76, "default"),
        ("minilm@0.1.0+onnx", 0.8100000001, 1 / 3, "calibrated#12"),
        ("mpnet@0.0.1", 0.0, 1.0, "given"),
        ("local-model", 0.5, 0.76, "given"),
    ],
)
def test_tau_signatures_are_the_strings_stored_before(encoder, triple, component, source):
    new = TauSignature(encoder, triple, component, source)
    assert new.format() == str(new) == _old_tau(encoder, triple, component, source)
    assert tau_signature(encoder, triple, component, source) == new.format()


def test_the_default_tau_signature_reads_tau_s_constants():
    assert TauSignature.default("minilm@0.1.0").format() == _old_tau(
        "minilm@0.1.0", 0.76, 0.76, "default"
    )
    assert (TRIPLE_THRESHOLD, COMPONENT_THRESHOLD) == (0.76, 0.76)


def test_checker_signatures_are_the_strings_stored_before():
    from types import SimpleNamespace

    from s3kg_core.grapheval.checkers.base import Checker
    from s3kg_core.grapheval.checkers.llm import CHECK_PROMPT_VERSION, LLMChecker
    from s3kg_core.grapheval.checkers.nli import NLIChecker
    from s3kg_core.grapheval.checkers.support import SupportChecker
    from s3kg_core.grapheval.checkers.trained import TrainedChecker

    def sig(cls: type, **attrs: object) -> str:
        return cls.signature.fget(SimpleNamespace(**attrs))  # type: ignore[attr-defined]

    assert sig(Checker, name="year", version="1") == "checker:year|version:1"
    client = SimpleNamespace(settings=SimpleNamespace(model="org/m"))
    assert sig(LLMChecker, client=client, batch_size=8, version="llm-1") == (
        f"checker:llm|model:org/m|prompt:{CHECK_PROMPT_VERSION}|batch:8|version:llm-1"
    )
    model = SimpleNamespace(config=SimpleNamespace(id2label={2: "entailment"}))
    nli = sig(
        NLIChecker, model=model, entail=2, model_dir=SimpleNamespace(name="deberta"),
        max_length=512, stride=128, version="nli-1",
    )  # fmt: skip
    assert nli == (
        "checker:nli|model:deberta|entail:entailment|max_length:512|stride:128|version:nli-1"
    )
    for calibration in (None, 3):
        support = sig(
            SupportChecker,
            encoder=SimpleNamespace(name="minilm@0.1.0"),
            calibration_id=calibration,
            top_windows=2,
            version="support-1",
        )
        assert support == (
            f"checker:support|encoder:minilm@0.1.0|calibration:{calibration}|top:2"
            "|version:support-1"
        )
    manifest = {"base_model": "minilm@0.1.0", "data_hash": "0123456789abcdef", "seed": 7}
    trained = {
        "manifest": manifest, "top_windows": 3, "max_length": 256, "version": "trained-1",
        "onnx_sha256": "fedcba9876543210ff",
    }  # fmt: skip
    torch_sig = (
        "checker:trained|base:minilm@0.1.0|data:0123456789ab|seed:7|head:classifier|top:3"
        "|max_length:256|version:trained-1"
    )
    assert sig(TrainedChecker, backend="torch", **trained) == torch_sig
    onnx = sig(TrainedChecker, backend="onnx", **trained)
    assert onnx == torch_sig + "|backend:onnx-int8:fedcba987654"


def test_baseline_signatures_are_the_strings_stored_before():
    from s3kg_core.evaluation.baselines import baseline_signature

    rouge = baseline_signature("rouge1").split("|")
    assert rouge[:4] == ["rouge1", "F", "stem:porter", "ref:text_1"]
    assert rouge[4].startswith("rouge-score:") and len(rouge) == 5
    bleu = baseline_signature("bleu").rsplit("|", 1)[0]
    assert bleu == "bleu|tok:13a|smooth:exp|effective_order:yes|ref:text_1"
    bert = baseline_signature("bertscore").rsplit("|", 1)[0]
    assert bert == "bertscore|F1|model:minilm@0.1.0|layer:6|idf:no|rescale:no"
    components = S3KGConfig(mode="kgx", align=False).signature("m@1")
    assert BaselineSignature("wl_kernel", (components,)).format() == f"wl_kernel|{components}"
    assert BaselineSignature("x_cosine", (("enc", "m@1"), ("clip", 0))).format() == (
        "x_cosine|enc:m@1|clip:0"
    )
