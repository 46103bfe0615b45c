"""The score signature: everything that determines a stored S3KG score, as one string.

A signature reads ``mode:ot|enc:minilm@0.1.0|tau:0.65|K:5|align:yes|norm:lemma|version:3``,
optionally followed by ``|alpha:0.5`` where a blended number is printed. Publish it with your
numbers: the same triples give the same scores only under the same signature. This module is the
one place that writes and reads it (sacrebleu's ``Signature`` is the model).

The other results the project stores carry signatures of the same ``key:value|...`` form, each
written by a small typed class here: :class:`TauSignature` (TAU's analyses),
:class:`CheckerSignature` (GraphEval's checkers) and :class:`BaselineSignature` (the pair
benchmark's baselines). Their strings are the ones stored before these classes existed, byte
for byte, so stored results still match.

``version`` is the scoring version (:data:`s3kg_core.SCORING_VERSION`), which changes exactly when
a score for the same input changes. Signatures stored before 0.2.0 carry the package version
there (``version:0.1.0``): they parse as they are, and differ from today's in ``version``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from ..errors import InputFormatError
from .result import check_alpha
from .tau import COMPONENT_THRESHOLD, TRIPLE_THRESHOLD

__all__ = ["BaselineSignature", "CheckerSignature", "Signature", "TauSignature"]

_KEYS = ("mode", "enc", "tau", "K", "align", "norm", "version")
_RESERVED = frozenset("|:")


@dataclass(frozen=True, slots=True)
class Signature:
    """The parts of a score signature.

    Parameters
    ----------
    mode
        One of :data:`~s3kg_core.scoring.result.MODES` (``ot``, the default, ``hybrid``,
        ``paper``, ``kgx``, ``text``, ``wwl``).
    encoder
        The encoder's name with its version (``minilm@0.1.0``) or a local model's name.
    tau
        The soft-alignment threshold.
    wl_iterations
        WL iterations K.
    align
        Whether triple selection and soft alignment ran (``False``: the pure WL baseline).
    normalization
        Label normalisation: ``lemma``, ``lower`` or ``kgx-lower``.
    version
        The scoring version that computed the components (``SCORING_VERSION``; ``0.1.0``, the
        package version, in signatures written before 0.2.0).
    alpha
        The blend weight, where a blended score is meant; ``None`` for stored components (alpha
        can change without recomputing anything).

    Examples
    --------
    >>> s = Signature("hybrid", "minilm@0.1.0", 0.65, 5, True, "lemma", "0.1.0")
    >>> s.format()
    'mode:hybrid|enc:minilm@0.1.0|tau:0.65|K:5|align:yes|norm:lemma|version:0.1.0'
    >>> Signature.parse(s.format()) == s
    True
    >>> s.with_alpha(0.5).format().endswith("|alpha:0.5")
    True
    """

    mode: str
    encoder: str
    tau: float
    wl_iterations: int
    align: bool
    normalization: str
    version: str
    alpha: float | None = None

    def __post_init__(self) -> None:
        for name in ("mode", "encoder", "normalization", "version"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value or _RESERVED & set(value):
                raise InputFormatError(
                    f"signature field {name} must be a non-empty string without '|' or ':'; "
                    f"got {value!r}"
                )

    def format(self) -> str:
        """The signature as one string (``alpha`` appended when it is set)."""
        text = (
            f"mode:{self.mode}|enc:{self.encoder}|tau:{self.tau:g}|K:{self.wl_iterations}"
            f"|align:{'yes' if self.align else 'no'}|norm:{self.normalization}"
            f"|version:{self.version}"
        )
        return text if self.alpha is None else Signature.blended(text, self.alpha)

    def __str__(self) -> str:
        return self.format()

    def with_alpha(self, alpha: float | None) -> Signature:
        """The same signature for a score blended at ``alpha`` (``None``: components only)."""
        return replace(self, alpha=alpha)

    @classmethod
    def blended(cls, components: str, alpha: float) -> str:
        """The signature string of a score blended at ``alpha``: ``components`` with its alpha.

        The one way to write ``|alpha:A`` onto a stored signature: every signature printed or
        written with a blended number names its alpha. A caller that blends at each score's
        stored alpha passes that alpha (:func:`s3kg_core.stages.scored.blend_alpha`).

        Raises
        ------
        ConfigError
            If ``alpha`` is not a number in [0, 1] (``None`` included).

        Examples
        --------
        >>> stored = "mode:hybrid|enc:m@1|tau:0.65|K:5|align:yes|norm:lemma|version:2"
        >>> Signature.blended(stored, 0.5)
        'mode:hybrid|enc:m@1|tau:0.65|K:5|align:yes|norm:lemma|version:2|alpha:0.5'
        >>> Signature.blended(stored + "|alpha:0.8", 0.25).endswith("version:2|alpha:0.25")
        True
        >>> Signature.blended(stored, -0.0).endswith("|alpha:0")
        True
        """
        check_alpha(alpha)
        head, sep, tail = components.rpartition("|alpha:")
        base = head if sep and "|" not in tail else components
        return f"{base}|alpha:{float(alpha) + 0.0:g}"  # + 0.0: -0.0 signs as alpha:0

    @property
    def components(self) -> str:
        """The signature of the stored components: this one without alpha."""
        return self.with_alpha(None).format()

    def config_kwargs(self) -> dict[str, Any]:
        """The :class:`~s3kg_core.scoring.s3kg.S3KGConfig` arguments of this signature.

        ``alpha`` is among them only where the signature has one.
        """
        kwargs: dict[str, Any] = {
            "mode": self.mode,
            "tau": self.tau,
            "wl_iterations": self.wl_iterations,
            "align": self.align,
            "lemmatize": self.normalization != "lower",
        }
        if self.alpha is not None:
            kwargs["alpha"] = self.alpha
        return kwargs

    def differences(self, other: Signature) -> dict[str, tuple[Any, Any]]:
        """The fields in which two signatures differ: ``{field: (self's, other's)}``."""
        return {
            f.name: (getattr(self, f.name), getattr(other, f.name))
            for f in fields(self)
            if getattr(self, f.name) != getattr(other, f.name)
        }

    @classmethod
    def parse(cls, text: str) -> Signature:
        """Read a signature written by :meth:`format`.

        Raises
        ------
        InputFormatError
            If a field is missing, repeated, unknown or malformed.

        Examples
        --------
        >>> Signature.parse("mode:kgx|enc:mpnet@0.0.1|tau:0.7|K:3|align:no|norm:kgx-lower"
        ...                 "|version:0.1.0|alpha:0.8").alpha
        0.8
        >>> Signature.parse("mode:kgx|enc:m")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        s3kg_core.errors.InputFormatError: signature 'mode:kgx|enc:m' lacks tau, K, align, norm, ...
        """
        if not isinstance(text, str):
            raise InputFormatError(f"a signature is a string; got {type(text).__name__}")
        parts: dict[str, str] = {}
        for part in text.split("|"):
            key, sep, value = part.partition(":")
            if not sep or not value:
                raise InputFormatError(f"signature {text!r}: {part!r} is not key:value")
            if key not in (*_KEYS, "alpha"):
                raise InputFormatError(f"signature {text!r}: unknown field {key!r}")
            if key in parts:
                raise InputFormatError(f"signature {text!r}: field {key!r} appears twice")
            parts[key] = value
        missing = [k for k in _KEYS if k not in parts]
        if missing:
            raise InputFormatError(f"signature {text!r} lacks {', '.join(missing)}")
        if parts["align"] not in ("yes", "no"):
            raise InputFormatError(f"signature {text!r}: align is yes or no")
        try:
            tau = float(parts["tau"])
            k = int(parts["K"])
            alpha = float(parts["alpha"]) if "alpha" in parts else None
        except ValueError as exc:
            raise InputFormatError(f"signature {text!r}: {exc}") from exc
        return cls(
            mode=parts["mode"],
            encoder=parts["enc"],
            tau=tau,
            wl_iterations=k,
            align=parts["align"] == "yes",
            normalization=parts["norm"],
            version=parts["version"],
            alpha=alpha,
        )


def _joined(head: str, settings: Sequence[tuple[str, object]]) -> str:
    """``head|key:value|...``: the form of every signature."""
    return "|".join([head, *(f"{key}:{value}" for key, value in settings)])


@dataclass(frozen=True, slots=True)
class TauSignature:
    """What determines a TAU analysis: the encoder, both thresholds, the threshold's source.

    Parameters
    ----------
    encoder
        The encoder's full name (``minilm@0.1.0``).
    triple_threshold, component_threshold
        The sentence cosine for two triples to align, and the label cosine for two heads,
        relations or tails to match.
    source
        Where the triple threshold came from: ``default``, ``given`` or ``calibrated#<id>`` (a
        stored calibration).

    Examples
    --------
    >>> TauSignature("minilm@0.1.0", 0.81, 0.76, "calibrated#2").format()
    'tau|enc:minilm@0.1.0|triple:0.81|component:0.76|threshold:calibrated#2'
    >>> TauSignature.default("minilm@0.1.0").format()
    'tau|enc:minilm@0.1.0|triple:0.76|component:0.76|threshold:default'
    """

    encoder: str
    triple_threshold: float
    component_threshold: float
    source: str

    @classmethod
    def default(cls, encoder: str) -> TauSignature:
        """TAU with its default thresholds (:mod:`s3kg_core.scoring.tau`'s constants)."""
        return cls(encoder, TRIPLE_THRESHOLD, COMPONENT_THRESHOLD, "default")

    def format(self) -> str:
        """The signature as one string."""
        return _joined(
            "tau",
            [
                ("enc", self.encoder),
                ("triple", f"{self.triple_threshold:g}"),
                ("component", f"{self.component_threshold:g}"),
                ("threshold", self.source),
            ],
        )

    def __str__(self) -> str:
        return self.format()


@dataclass(frozen=True, slots=True)
class CheckerSignature:
    """What produced a checker's probabilities: ``checker:<name>|<settings>|version:<v>``.

    Parameters
    ----------
    checker
        The checker's name (``support``, ``nli``, ``llm``, ``trained``...).
    version
        The checker's version.
    settings
        ``(key, value)`` pairs between the name and the version, in order (model, prompt,
        calibration, windows...; never an endpoint's key).
    after
        ``(key, value)`` pairs after the version (the trained checker's int8 export, added
        after its torch signature so results stored with the torch one are reused).

    Examples
    --------
    >>> CheckerSignature("nli", "1", (("model", "m"), ("max_length", 512))).format()
    'checker:nli|model:m|max_length:512|version:1'
    >>> CheckerSignature("year", "2").format()
    'checker:year|version:2'
    """

    checker: str
    version: str
    settings: tuple[tuple[str, object], ...] = ()
    after: tuple[tuple[str, object], ...] = ()

    def format(self) -> str:
        """The signature as one string."""
        return _joined(
            f"checker:{self.checker}", [*self.settings, ("version", self.version), *self.after]
        )

    def __str__(self) -> str:
        return self.format()


@dataclass(frozen=True, slots=True)
class BaselineSignature:
    """A pair-benchmark baseline's settings and library versions: ``<name>|<settings>``.

    Parameters
    ----------
    name
        The baseline (``rouge1``, ``bleu``, ``minilm_cosine``, ``wl_kernel``...).
    settings
        The settings in order: ``(key, value)`` pairs, or a bare part (``F``: the F-measure; a
        baseline scored by S3KG itself: its component signature, :meth:`Signature.format`).

    Examples
    --------
    >>> BaselineSignature("minilm_cosine", (("enc", "minilm@0.1.0"), ("clip", 0))).format()
    'minilm_cosine|enc:minilm@0.1.0|clip:0'
    >>> BaselineSignature("rouge1", ("F", ("stem", "porter"))).format()
    'rouge1|F|stem:porter'
    >>> s = Signature("kgx", "m@1", 0.65, 5, True, "kgx-lower", "2")
    >>> BaselineSignature("wl_kernel", (s.format(),)).format()
    'wl_kernel|mode:kgx|enc:m@1|tau:0.65|K:5|align:yes|norm:kgx-lower|version:2'
    """

    name: str
    settings: tuple[str | tuple[str, object], ...] = ()

    def format(self) -> str:
        """The signature as one string."""
        parts = [p if isinstance(p, str) else f"{p[0]}:{p[1]}" for p in self.settings]
        return "|".join([self.name, *parts])

    def __str__(self) -> str:
        return self.format()
