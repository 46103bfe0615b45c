"""``minilm-static``: a static screening encoder distilled locally from the packaged MiniLM.

What model2vec's ``distill`` does, in NumPy and torch (model2vec's distill extra pins
transformers < 5.4): every token of MiniLM's vocabulary goes through MiniLM alone
(``[CLS] token [SEP]``, mean pooling), the 30,522 vectors are reduced to 256 dimensions by PCA
and weighted down for frequent tokens (model2vec's SIF weight ``1e-4 / (1e-4 + p)``, ``p`` a
Zipf law over the vocabulary order). A text's vector is then the mean of its tokens' vectors,
L2-normalised: no network at encode time, about two orders of magnitude faster than MiniLM. Its
vectors live in another space than MiniLM's (so it has its own name and signature) and its
scores are coarser: it is for screening bulk runs, not for the published numbers
(``bench/README.md``, "Encoder backends", has its AUROC beside MiniLM's).

The distillation runs once (about a minute on two cores) into
``<cache>/static/minilm-static-<key>/`` (temporary folder, then rename), with a manifest.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..config import cache_dir
from ..errors import EncoderError
from .export import build_once, dist_version, export_key, read_manifest, sha256_file

__all__ = ["STATIC_DIM", "STATIC_ENCODER", "StaticEncoder", "distill_static", "load_static_encoder"]

STATIC_ENCODER = "minilm-static"

STATIC_DIM = 256

_SIF = 1e-4

_DISTILL_VERSION = 1  # bump when the procedure changes: a new folder, a new name


def _token_vectors(model_dir: Path, batch_size: int = 512) -> tuple[np.ndarray, dict[str, Any]]:
    """MiniLM's vector of every vocabulary token, each run alone as ``[CLS] token [SEP]``."""
    import torch
    from sentence_transformers import SentenceTransformer

    model: Any = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
    tokenizer = model[0].tokenizer
    hf = model[0].auto_model.eval()
    n_vocab = int(tokenizer.vocab_size)
    cls_id, sep_id = tokenizer.cls_token_id, tokenizer.sep_token_id
    out = np.zeros((n_vocab, hf.config.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for lo in range(0, n_vocab, batch_size):
            ids = torch.arange(lo, min(lo + batch_size, n_vocab))
            batch = torch.stack(
                [torch.full_like(ids, cls_id), ids, torch.full_like(ids, sep_id)], dim=1
            )
            hidden = hf(input_ids=batch, attention_mask=torch.ones_like(batch)).last_hidden_state
            out[lo : lo + len(ids)] = hidden.mean(dim=1).numpy()
    info = {"vocab_size": n_vocab, "teacher_dim": int(hf.config.hidden_size)}
    return out, info


def _pca_sif(vectors: np.ndarray, dim: int) -> np.ndarray:
    """PCA to ``dim`` components, then model2vec's Zipf-based SIF weight per token."""
    centred = vectors.astype(np.float64) - vectors.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    reduced = centred @ vt[:dim].T
    inv_rank = 1.0 / np.arange(2, len(vectors) + 2)
    proba = inv_rank / inv_rank.sum()
    weighted: np.ndarray = (reduced * (_SIF / (_SIF + proba))[:, None]).astype(np.float32)
    return weighted


def distill_static(model_dir: Path, root: Path | None = None) -> Path:
    """Distil the static model from ``model_dir`` once; return its folder.

    Raises
    ------
    EncoderError
        If the teacher does not load.

    Examples
    --------
    >>> from s3kg_core.encoders.registry import resolve_encoder
    >>> folder = distill_static(resolve_encoder("minilm")[1])
    >>> read_manifest(folder)["dim"]
    256
    """
    model_dir = Path(model_dir)
    name = f"{STATIC_ENCODER}-v{_DISTILL_VERSION}-{export_key(model_dir)}"

    def build(out: Path) -> dict[str, Any]:
        try:
            raw, info = _token_vectors(model_dir)
        except Exception as exc:  # torch / sentence-transformers raise many kinds
            raise EncoderError(
                f"could not distil {STATIC_ENCODER} from {model_dir}: {exc}"
            ) from exc
        np.save(out / "vectors.npy", _pca_sif(raw, STATIC_DIM))
        shutil.copy2(model_dir / "tokenizer.json", out / "tokenizer.json")
        weights = model_dir / "model.safetensors"
        return {
            "encoder": STATIC_ENCODER,
            "procedure": "token vectors ([CLS] t [SEP], mean pooled), PCA, Zipf SIF 1e-4",
            "procedure_version": _DISTILL_VERSION,
            "source": str(model_dir.resolve()),
            "source_sha256": sha256_file(weights) if weights.exists() else "?",
            "dim": STATIC_DIM,
            "backend_versions": {d: dist_version(d) for d in ("torch", "transformers", "numpy")},
            **info,
        }

    return build_once((root or cache_dir()) / "static" / name, build, prefix=".distill-")


class StaticEncoder:
    """A static token-vector model: a text's vector is the mean of its tokens', L2-normalised.

    Parameters
    ----------
    folder
        A folder written by :func:`distill_static` (``vectors.npy``, ``tokenizer.json``).
    name
        Name recorded in signatures and cache keys (``minilm-static@0.1.0``).

    Examples
    --------
    >>> from s3kg_core.encoders.registry import load_encoder
    >>> enc = load_encoder("minilm-static")
    >>> enc.name.startswith("minilm-static@"), enc.encode(["a cat", "a dog"]).shape
    (True, (2, 256))
    """

    def __init__(self, folder: Path, name: str) -> None:
        from tokenizers import Tokenizer

        self.folder = Path(folder)
        self.name = name
        self.manifest = read_manifest(self.folder)
        self._vectors = np.load(self.folder / "vectors.npy")
        self._tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        self._unk = self._tokenizer.token_to_id("[UNK]") or 0

    @property
    def dim(self) -> int:
        """Embedding dimension."""
        return int(self._vectors.shape[1])

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Encode texts into unit-norm float32 rows (shape ``(n, dim)``)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        for i, enc in enumerate(encodings):
            ids = enc.ids or [self._unk]
            out[i] = self._vectors[ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.clip(norms, 1e-12, None)
        return out

    def __repr__(self) -> str:
        return f"StaticEncoder({self.name!r}, {str(self.folder)!r})"


def load_static_encoder(teacher_dir: Path, name: str) -> StaticEncoder:
    """The static encoder distilled from ``teacher_dir`` (distilling it on first use)."""
    return StaticEncoder(distill_static(teacher_dir), name)
