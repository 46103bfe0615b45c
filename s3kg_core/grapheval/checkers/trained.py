"""The project's own triple checker: a cross-encoder fine-tuned on synthetic pairs.

``s3kg grapheval train-checker`` (:mod:`s3kg_core.checker_training.training`) fine-tunes a
packaged encoder (MiniLM) as a two-label cross-encoder (``unsupported`` / ``supported``) on the
pairs of :mod:`s3kg_core.checker_training.synthetic` and saves it, with a ``manifest.json``,
under the cache directory
(:func:`~s3kg_core.grapheval.checkers.model_format.trained_checker_dir`); nothing is committed
or downloaded. The folder's format is :mod:`.model_format`. A model whose manifest names the
``alignment`` head is read with :mod:`s3kg_core.grapheval.checkers.alignment`, an older
``classifier`` one as a Hugging Face sequence classifier.

Checking: the context is cut into the windows the checker was trained on (3 sentences every 2,
at most 110 words: :func:`~s3kg_core.grapheval.checkers.model_format.text_windows`); each claim
is paired with its ``top_windows`` windows of most shared words (all windows with
``top_windows=0``), and ``P(not supported) = 1 - max over those windows of P(supported)``, as
the NLI checker takes its best window.

Backends: ``torch`` runs the saved encoder; ``onnx`` runs its int8 ONNX export
(:data:`~s3kg_core.grapheval.checkers.model_format.ONNX_FILE`, made by ``s3kg grapheval
export-checker``, :mod:`s3kg_core.checker_training.export`) with onnxruntime, the alignment head
reading its hidden states; ``auto`` (the default) takes the int8 file when the manifest records
it and it still matches the model (:func:`onnx_problem`), else torch. The two backends'
probabilities differ (int8 weights): the backend enters the signature.

The dashboard (or any caller) asks :func:`trained_checker_available` and then
:func:`load_trained_checker`; without a trained model the support checker stays the default.

Examples
--------
>>> trained_checker_available("/no/such/folder")
False
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...encoders.export import sha256_file, weights_file
from ...encoders.runtime import runtime_threads
from ...errors import CheckerError, CheckerExportError, EncoderError
from ...scoring.signature import CheckerSignature
from ...text import STOP_WORDS
from .alignment import HEAD_FILE, HEAD_VERSION, alignment_features, alignment_logits, load_alignment
from .base import Checker, Claim, Verdict
from .model_format import (
    ONNX_FILE,
    read_manifest,
    text_windows,
    tokenize_pairs,
    trained_checker_dir,
)
from .nli import entailment_index, load_classifier

__all__ = [
    "CHECKER_BACKENDS",
    "DASHBOARD_MIN_HELDOUT",
    "TrainedChecker",
    "load_trained_checker",
    "manifest_summary",
    "onnx_problem",
    "resolve_backend",
    "trained_checker_available",
]

CHECKER_BACKENDS = ("auto", "torch", "onnx")
"""What runs the trained checker's encoder (see the module docstring)."""

_WORD = re.compile(r"[a-z0-9]+")


def trained_checker_available(
    model_dir: str | Path | None = None, *, min_heldout: float = 0.0
) -> bool:
    """Whether a trained checker (a model with a valid manifest) is in ``model_dir``.

    Default folder: :func:`trained_checker_dir`. Cheap: reads the manifest only. With
    ``min_heldout``, the manifest's held-out balanced accuracy must reach it too (a model still
    at chance, 0.5, is then not offered). A model whose alignment head is of another version
    than :data:`~s3kg_core.grapheval.checkers.alignment.HEAD_VERSION` is not available either (this
    code cannot read it: it must be trained again).

    Examples
    --------
    >>> trained_checker_available("/no/such/folder", min_heldout=0.6)
    False
    """
    try:
        path = Path(model_dir) if model_dir is not None else trained_checker_dir()
        manifest = read_manifest(path)
    except CheckerError:
        return False
    head = str(manifest.get("head", "classifier"))
    if head.startswith("alignment") and head != HEAD_VERSION:
        return False
    held = (manifest.get("heldout") or {}).get("balanced_accuracy")
    if min_heldout > 0 and (not isinstance(held, int | float) or held < min_heldout):
        return False
    return (path / "config.json").is_file()


def onnx_problem(model_dir: str | Path, manifest: Mapping[str, Any] | None = None) -> str | None:
    """Why the folder's int8 ONNX export cannot be used, or ``None`` when it can.

    It can when the manifest's ``onnx`` entry names a file that is there with the recorded
    sha256, and the encoder's weights and the head are those it was exported from (their sha256
    too): a model trained again, or a file copied over, is stale. Hashes about 110 MB.

    Examples
    --------
    >>> onnx_problem("/no/such/folder", {})
    'no int8 ONNX export in /no/such/folder: run `s3kg grapheval export-checker`'
    """
    path = Path(model_dir)
    manifest = read_manifest(path) if manifest is None else manifest
    entry = manifest.get("onnx")
    if not isinstance(entry, Mapping):
        return f"no int8 ONNX export in {path}: run `s3kg grapheval export-checker`"
    again = "run `s3kg grapheval export-checker` again"
    if entry.get("head") != manifest.get("head") or manifest.get("head") != HEAD_VERSION:
        return f"the ONNX export in {path} is of another head than {HEAD_VERSION!r}: {again}"
    file = path / str(entry.get("file", ONNX_FILE))
    if not file.is_file():
        return f"{file} is missing: {again}"
    try:
        checks = (
            (file, entry.get("sha256"), "the ONNX file changed"),
            (weights_file(path), entry.get("source_sha256"), "the model's weights changed"),
            (path / HEAD_FILE, entry.get("head_sha256"), "the model's head changed"),
        )
        for where, recorded, what in checks:
            if sha256_file(where) != recorded:
                return f"{what} since the ONNX export in {path}: {again}"
    except (OSError, EncoderError) as exc:
        return f"cannot check the ONNX export in {path}: {exc}"
    return None


def resolve_backend(
    backend: str, model_dir: str | Path, manifest: Mapping[str, Any] | None = None
) -> str:
    """``torch`` or ``onnx``: what ``backend`` (one of :data:`CHECKER_BACKENDS`) runs on here.

    ``auto`` is ``onnx`` when :func:`onnx_problem` finds none and onnxruntime is installed,
    else ``torch``.

    Raises
    ------
    CheckerError
        If ``backend`` is unknown.
    CheckerExportError
        If ``backend`` is ``onnx`` and the export cannot be used (missing, stale, no
        onnxruntime).

    Examples
    --------
    >>> resolve_backend("auto", "/no/such/folder", {})
    'torch'
    """
    import importlib.util

    if backend not in CHECKER_BACKENDS:
        raise CheckerError(
            f"unknown checker backend {backend!r}: use one of {', '.join(CHECKER_BACKENDS)}"
        )
    if backend == "torch":
        return "torch"
    problem = onnx_problem(model_dir, manifest)
    if problem is None and importlib.util.find_spec("onnxruntime") is None:
        problem = "onnxruntime is not installed (pip install -r requirements.txt)"
    if problem is None:
        return "onnx"
    if backend == "onnx":
        raise CheckerExportError(problem)
    return "torch"


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS}


class _Session:
    """An onnxruntime session of an int8 export, and the graph's input names."""

    def __init__(self, path: Path, threads: int | None) -> None:
        from ...encoders.runtime import onnx_runner

        try:
            import onnx

            graph = onnx.load(str(path), load_external_data=False).graph
            self.inputs = [i.name for i in graph.input]
            self.run = onnx_runner(path, threads)
        except Exception as exc:  # ImportError, onnx's and onnxruntime's own errors
            raise CheckerExportError(f"cannot load the ONNX export {path}: {exc}") from exc


def _int8_file(
    path: Path, manifest: Mapping[str, Any], backend: str, onnx_file: str | Path | None
) -> tuple[Path, str] | None:
    """The int8 export a checker runs, with its sha256; ``None``: torch."""
    if backend not in CHECKER_BACKENDS:
        raise CheckerError(
            f"unknown checker backend {backend!r}: use one of {', '.join(CHECKER_BACKENDS)}"
        )
    alignment = str(manifest.get("head", "classifier")).startswith("alignment")
    if not alignment and (onnx_file is not None or backend == "onnx"):
        raise CheckerExportError(f"{path}: a classifier-head checker has no ONNX export")
    if onnx_file is not None:
        file = Path(onnx_file)
        if not file.is_file():
            raise CheckerExportError(f"no ONNX file {file}")
        return file, sha256_file(file)
    if not alignment or resolve_backend(backend, path, manifest) == "torch":
        return None
    entry = manifest["onnx"]
    return path / str(entry.get("file", ONNX_FILE)), str(entry.get("sha256"))


class TrainedChecker(Checker):
    """Triple checker on the cross-encoder ``train-checker`` made (see the module docstring).

    Parameters
    ----------
    model_dir
        The trained model's folder (default :func:`trained_checker_dir`).
    top_windows
        Windows each claim is checked against (those sharing most words with it); 0: all.
    max_length
        Tokens per (window, claim) pair (default: the manifest's training length).
    batch_size, forward_batch
        Claims per job; pairs per forward pass.
    device
        A torch device string (the ``onnx`` backend's encoder runs on the CPU).
    backend
        ``auto``, ``torch`` or ``onnx`` (:func:`resolve_backend`); the one chosen is
        :attr:`backend`.
    onnx_file
        An int8 ONNX export to run instead of the manifest's (implies ``onnx``; not checked
        against the manifest: what ``export-checker`` measures before recording it).
    threads
        onnxruntime's intra-op threads (default ``$OMP_NUM_THREADS`` where set); torch's are
        the process's (``torch.set_num_threads``).

    Raises
    ------
    CheckerError
        If there is no trained model in the folder, or it does not load.
    CheckerExportError
        If ``backend="onnx"`` and the folder's export is missing or stale.

    Examples
    --------
    >>> TrainedChecker("/no/such/folder")
    Traceback (most recent call last):
    ...
    s3kg_core.errors.CheckerError: no trained checker in /no/such/folder ...
    """

    version = "trained-1"

    def __init__(
        self,
        model_dir: str | Path | None = None,
        *,
        top_windows: int = 2,
        max_length: int | None = None,
        batch_size: int = 32,
        forward_batch: int = 32,
        device: str = "cpu",
        backend: str = "auto",
        onnx_file: str | Path | None = None,
        threads: int | None = None,
    ) -> None:
        super().__init__(batch_size)
        if top_windows < 0:
            raise CheckerError(f"top_windows must be >= 0; got {top_windows}")
        path = Path(model_dir) if model_dir is not None else trained_checker_dir()
        self.manifest = read_manifest(path)
        self.head: Any = None
        alignment = str(self.manifest.get("head", "classifier")).startswith("alignment")
        chosen = _int8_file(path, self.manifest, backend, onnx_file)
        self.onnx_file: Path | None = chosen[0] if chosen else None
        self.onnx_sha256: str | None = chosen[1] if chosen else None
        self.backend = "torch" if chosen is None else "onnx"
        self._session: _Session | None = None
        if self.onnx_file is not None:
            self.tokenizer, self.model, self.head = load_alignment(path, device, encoder=False)
            self._session = _Session(self.onnx_file, runtime_threads(threads))
            self.supported = 1
        elif alignment:
            self.tokenizer, self.model, self.head = load_alignment(path, device)
            self.supported = 1
        else:
            self.tokenizer, self.model = load_classifier(path, device, "the trained checker")
            self.supported = entailment_index(self.model.config.id2label)
        self.device = device
        trained_len = int(self.manifest.get("config", {}).get("max_length", 256))
        self.max_length = max_length or trained_len
        self.top_windows = top_windows
        self.forward_batch = max(1, forward_batch)
        self.model_dir = path
        self.name = "trained"
        self._windows: dict[str, tuple[list[str], list[set[str]]]] = {}
        self._memo: dict[tuple[str, str], tuple[float, int]] = {}

    @property
    def signature(self) -> str:
        """Checker, base model, training data hash, seed, windows, version (and int8 export).

        The torch backend's signature is the one from before backends existed (results stored
        with it are reused); the int8 one adds ``|backend:onnx-int8:<sha256 of the file>``.
        """
        m = self.manifest
        settings = (
            ("base", m.get("base_model")),
            ("data", str(m.get("data_hash"))[:12]),
            ("seed", m.get("seed")),
            ("head", m.get("head", "classifier")),
            ("top", self.top_windows),
            ("max_length", self.max_length),
        )
        after = (
            (("backend", f"onnx-int8:{str(self.onnx_sha256)[:12]}"),)
            if self.backend == "onnx"
            else ()
        )
        return CheckerSignature("trained", self.version, settings, after).format()

    def _context_windows(self, context: str) -> tuple[list[str], list[set[str]]]:
        found = self._windows.get(context)
        if found is None:
            windows = text_windows(context) or [context.strip()]
            found = (windows, [_words(w) for w in windows])
            if len(self._windows) > 4096:
                self._windows.clear()
            self._windows[context] = found
        return found

    def _pick(self, claim: str, windows: list[str], stems: list[set[str]]) -> list[int]:
        if self.top_windows == 0 or len(windows) <= self.top_windows:
            return list(range(len(windows)))
        words = _words(claim)
        order = sorted(range(len(windows)), key=lambda i: (-len(words & stems[i]), i))
        return sorted(order[: self.top_windows])

    def support_many(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """``P(supported)`` of each ``(window, statement)`` pair (no windowing).

        Examples
        --------
        >>> # with a trained model: TrainedChecker().support_many([("Paris is in France.",
        >>> #                                                      "Paris is in France")])
        """
        import torch

        out: list[float] = []
        for lo in range(0, len(pairs), self.forward_batch):
            chunk = pairs[lo : lo + self.forward_batch]
            enc = tokenize_pairs(
                self.tokenizer, [w for w, _ in chunk], [s for _, s in chunk], self.max_length
            )
            with torch.inference_mode():
                if self._session is not None:
                    feed = {k: enc[k].numpy() for k in self._session.inputs}
                    hidden = torch.from_numpy(self._session.run(feed)).to(self.device)
                    types = enc["token_type_ids"].to(self.device)
                    mask = enc["attention_mask"].to(self.device)
                    logits = self.head(alignment_features(hidden, types, mask))
                    out.extend(torch.softmax(logits.float(), dim=-1)[:, 1].tolist())
                    continue
                inputs = {k: v.to(self.device) for k, v in enc.items()}
                if self.head is not None:
                    logits = alignment_logits(self.model, self.head, inputs)
                else:
                    logits = self.model(**inputs).logits
            out.extend(torch.softmax(logits.float(), dim=-1)[:, self.supported].tolist())
        return [float(p) for p in out]

    def _check(self, jobs: Sequence[tuple[Sequence[Claim], str]], raw: bool) -> list[list[Verdict]]:
        if len(self._memo) > 200_000:
            self._memo.clear()
        todo: dict[tuple[str, str], list[int]] = {}
        for claims, ctx in jobs:
            for c in claims:
                key = (c.text, ctx)
                if key not in self._memo and key not in todo:
                    windows, stems = self._context_windows(ctx)
                    todo[key] = self._pick(c.text, windows, stems)
        flat = [
            (self._context_windows(ctx)[0][i], text)
            for (text, ctx), idx in todo.items()
            for i in idx
        ]
        probs = self.support_many(flat) if flat else []
        k = 0
        for key, idx in todo.items():
            best, where = -1.0, idx[0]
            for i in idx:
                if probs[k] > best:
                    best, where = probs[k], i
                k += 1
            self._memo[key] = (best, where)
        out: list[list[Verdict]] = []
        for claims, ctx in jobs:
            verdicts = []
            for c in claims:
                best, where = self._memo.get((c.text, ctx)) or self._fresh(c.text, ctx)
                p = min(1.0, max(0.0, 1.0 - best))
                verdicts.append(Verdict(p, detail={"support": round(best, 6), "window": where}))
            out.append(verdicts)
        return out

    def _fresh(self, text: str, ctx: str) -> tuple[float, int]:
        windows, stems = self._context_windows(ctx)
        idx = self._pick(text, windows, stems)
        probs = self.support_many([(windows[i], text) for i in idx])
        best = max(range(len(idx)), key=lambda j: probs[j])
        return probs[best], idx[best]


DASHBOARD_MIN_HELDOUT = 0.6
"""Held-out balanced accuracy below which :func:`load_trained_checker` offers no checker."""


def load_trained_checker(
    model_dir: str | Path | None = None,
    *,
    min_heldout: float = DASHBOARD_MIN_HELDOUT,
    **options: Any,
) -> TrainedChecker | None:
    """The trained checker when one has been trained and is better than chance, else ``None``.

    For the dashboard: ``None`` when there is no trained model, or when its held-out balanced
    accuracy (manifest) is below ``min_heldout`` (default :data:`DASHBOARD_MIN_HELDOUT`); the
    demo then keeps the support checker. ``options`` go to :class:`TrainedChecker` (its
    ``backend`` is ``auto``: the int8 ONNX export when it is there and matches the model).

    Examples
    --------
    >>> load_trained_checker("/no/such/folder") is None
    True
    """
    if not trained_checker_available(model_dir, min_heldout=min_heldout):
        return None
    return TrainedChecker(model_dir, **options)


def manifest_summary(manifest: Mapping[str, Any]) -> str:
    """One line about a trained checker: base, pairs, held-out balanced accuracy."""
    held = manifest.get("heldout") or {}
    return (
        f"trained checker on {manifest.get('base_model')} (seed {manifest.get('seed')}, "
        f"{manifest.get('train_pairs')} pairs, data {str(manifest.get('data_hash'))[:12]}): "
        f"held-out balanced accuracy {held.get('balanced_accuracy')}"
    )
