"""Export a local sentence-transformers model's transformer to ONNX, once, into the cache folder.

The export runs here, offline, from the packaged weights (``torch.onnx``, the TorchScript
exporter, opset 17): the graph maps ``input_ids``, ``attention_mask`` (and ``token_type_ids``
where the model has them) to ``last_hidden_state``; pooling and normalisation stay in NumPy
(:mod:`s3kg_core.encoders.runtime`). It is written to a temporary folder that is renamed into
``<cache>/onnx/<model>-<key>/``, so a killed or concurrent export never leaves half a model
behind; the key changes with the weights file (path, size, mtime) and the torch version. The
folder's ``manifest.json`` records the source model (sha256 of its weights), the opset and the
library versions; the tokenizer and pooling files are copied beside ``model.onnx``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Callable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from ..config import cache_dir
from ..errors import EncoderError

__all__ = [
    "OPSET",
    "build_once",
    "dist_version",
    "export_hidden_states",
    "export_key",
    "export_onnx",
    "quantize_int8",
    "read_manifest",
    "sha256_file",
    "weights_file",
]

OPSET = 17

_COPIED = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "modules.json",
    "sentence_bert_config.json",
    "config.json",
)


def weights_file(model_dir: Path) -> Path:
    """A model folder's weights: ``model.safetensors``, else ``pytorch_model.bin``.

    Raises
    ------
    EncoderError
        If the folder has neither.

    Examples
    --------
    >>> from s3kg_core.encoders.registry import resolve_encoder
    >>> weights_file(resolve_encoder("minilm")[1]).name
    'model.safetensors'
    """
    for name in ("model.safetensors", "pytorch_model.bin"):
        if (model_dir / name).exists():
            return model_dir / name
    raise EncoderError(f"no model.safetensors or pytorch_model.bin in {model_dir}")


def dist_version(dist: str) -> str:
    """The installed version of a distribution, ``?`` when it is not installed.

    Examples
    --------
    >>> dist_version("no-such-distribution-s3kg")
    '?'
    """
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "?"


def export_key(model_dir: Path) -> str:
    """A short key that changes whenever the source weights or the exporting torch change.

    Examples
    --------
    >>> from s3kg_core.encoders.registry import resolve_encoder
    >>> len(export_key(resolve_encoder("minilm")[1]))
    12
    """
    weights = weights_file(Path(model_dir))
    stat = weights.stat()
    raw = f"{weights.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|torch {dist_version('torch')}"
    return hashlib.sha1(raw.encode()).hexdigest()[:12]


def read_manifest(folder: Path) -> dict[str, Any]:
    """The ``manifest.json`` of an exported folder.

    Raises
    ------
    EncoderError
        If the folder has no readable manifest.
    """
    try:
        data: dict[str, Any] = json.loads((Path(folder) / "manifest.json").read_text())
    except (OSError, ValueError) as exc:
        raise EncoderError(f"{folder} has no readable manifest.json: {exc}") from exc
    return data


def sha256_file(path: Path) -> str:
    """The sha256 of a file, read in 4 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def export_hidden_states(model: Any, example: Mapping[str, Any], path: Path) -> list[str]:
    """Write a Hugging Face encoder to ``path`` as ONNX: its inputs in, ``last_hidden_state`` out.

    ``example`` is a tokenizer batch of at least two inputs of different lengths (so the traced
    graph keeps the padding mask); its ``input_ids``, ``attention_mask`` and ``token_type_ids``
    (those present) become the graph's inputs, with batch and sequence axes left free. TorchScript
    exporter, opset :data:`OPSET`. The model is left in eval mode. Returns the input names.

    Examples
    --------
    >>> # export_hidden_states(hf_model, tokenizer(["a b c", "d"], padding=True,
    >>> #                      return_tensors="pt"), Path("out/model.onnx"))
    """
    import warnings

    import torch

    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in example]

    class _Hidden(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *inputs: Any) -> Any:
            return self.inner(**dict(zip(names, inputs, strict=True))).last_hidden_state

    axes = {n: {0: "batch", 1: "sequence"} for n in [*names, "last_hidden_state"]}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the tracer's and the legacy exporter's notes
        torch.onnx.export(
            _Hidden(model),
            tuple(example[n] for n in names),
            str(path),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )
    model.eval()  # the exporter can leave the module in training mode (dropout on)
    return names


def quantize_int8(source: Path, target: Path) -> dict[str, Any]:
    """Quantise an ONNX model to int8 with onnxruntime's dynamic quantisation; how, as a dict.

    Weights become signed int8 (``QInt8``, per tensor); activations are quantised per batch at
    run time (dynamic: no calibration data). For the MiniLM encoder: 90 MB -> 23 MB and about
    3x faster on one thread (``bench/README.md``, ``bench_checker_onnx.py``).

    Raises
    ------
    EncoderError
        If onnxruntime's quantisation is not installed or fails on the model.

    Examples
    --------
    >>> # quantize_int8(Path("model.onnx"), Path("model.int8.onnx"))["weight_type"]
    >>> # 'QInt8'
    """
    import logging

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # its "consider pre-processing" note goes to the root logger
    try:
        from onnxruntime import quantization  # type: ignore[import-untyped]

        quantization.quantize_dynamic(
            str(source), str(target), weight_type=quantization.QuantType.QInt8
        )
    except Exception as exc:  # ImportError, onnx's and onnxruntime's own errors
        raise EncoderError(f"could not quantise {source} to int8: {exc}") from exc
    finally:
        root.setLevel(level)
    return {
        "method": "onnxruntime.quantization.quantize_dynamic",
        "weight_type": "QInt8",
        "per_channel": False,
        "onnxruntime": dist_version("onnxruntime"),
    }


def _export_to(model_dir: Path, out: Path) -> dict[str, Any]:
    """Load the model with sentence-transformers and write ``model.onnx`` into ``out``."""
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # no bar in a command's output
    model: Any = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
    modules = [type(m).__name__ for m in model]
    if modules[:2] != ["Transformer", "Pooling"] or modules[2:] not in ([], ["Normalize"]):
        raise EncoderError(
            f"{model_dir}: cannot export modules {modules} (need Transformer, Pooling)"
        )
    pooling = model[1]
    mode = getattr(pooling, "pooling_mode", None) or (
        "mean" if getattr(pooling, "pooling_mode_mean_tokens", False) else "?"
    )
    if mode != "mean":
        raise EncoderError(f"{model_dir}: pooling {mode!r} is not supported (mean only)")
    tokenizer = model[0].tokenizer
    hf = model[0].auto_model.eval()
    # Two texts of different lengths, so the traced graph keeps the padding mask.
    example = tokenizer(
        ["a longer example sentence with padding after it", "short"],
        padding=True,
        return_tensors="pt",
    )
    names = export_hidden_states(hf, example, out / "model.onnx")
    return {
        "inputs": names,
        "max_seq_length": int(model.max_seq_length),
        "dim": int(hf.config.hidden_size),
        "pooling": "mean",
        "normalize": modules[2:] == ["Normalize"],
        "lower_case": bool(getattr(tokenizer, "do_lower_case", False)),
    }


def export_onnx(model_dir: Path, label: str, root: Path | None = None) -> Path:
    """Export ``model_dir`` to ONNX once and return the folder with ``model.onnx``.

    Parameters
    ----------
    model_dir
        A local sentence-transformers folder (Transformer, mean Pooling, optional Normalize).
    label
        The encoder's name, for the folder name and the manifest (``minilm@0.1.0``).
    root
        The cache folder (default :func:`~s3kg_core.config.cache_dir`).

    Raises
    ------
    EncoderError
        If the model cannot be exported.

    Examples
    --------
    >>> from s3kg_core.encoders.registry import resolve_encoder
    >>> name, path = resolve_encoder("minilm")
    >>> folder = export_onnx(path, name)
    >>> read_manifest(folder)["opset"], (folder / "model.onnx").exists()
    (17, True)
    """
    model_dir = Path(model_dir)
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in label.split("@")[0])
    target = (root or cache_dir()) / "onnx" / f"{safe}-{export_key(model_dir)}"

    def build(out: Path) -> dict[str, Any]:
        try:
            info = _export_to(model_dir, out)
        except EncoderError:
            raise
        except Exception as exc:  # torch and the exporter raise many kinds; name the model
            raise EncoderError(f"could not export {model_dir} to ONNX: {exc}") from exc
        for name in _COPIED:
            if (model_dir / name).exists():
                shutil.copy2(model_dir / name, out / name)
        libraries = ("torch", "transformers", "sentence-transformers", "onnx", "onnxruntime")
        return {
            "encoder": label,
            "source": str(model_dir.resolve()),
            "source_weights": weights_file(model_dir).name,
            "source_sha256": sha256_file(weights_file(model_dir)),
            "opset": OPSET,
            "exporter": "torch.onnx (TorchScript)",
            "backend_versions": {d: dist_version(d) for d in (*libraries, "openvino")},
            "onnx_sha256": sha256_file(out / "model.onnx"),
            **info,
        }

    return build_once(target, build, prefix=".export-")


def build_once(target: Path, build: Callable[[Path], dict[str, Any]], *, prefix: str) -> Path:
    """Make the folder ``target`` once, atomically, and return it.

    ``build(folder)`` fills a temporary folder beside ``target`` and returns the manifest, which
    is written last; the folder is then renamed into place. A folder with a manifest is done: a
    later call returns at once, and a concurrent builder that loses the rename keeps the winner's.
    """
    if (target / "manifest.json").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=prefix) as tmp:
        out = Path(tmp) / "model"
        out.mkdir()
        manifest = build(out)
        (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
        try:
            out.rename(target)
        except OSError:
            if not (target / "manifest.json").exists():
                raise
    return target
