"""Which runtime runs an encoder's network: ``torch``, ``onnx`` (onnxruntime) or ``openvino``.

An encoder *spec* is what a user passes and what a database records to load an encoder again:
a name or a path, optionally followed by ``+backend`` (``minilm+openvino``). Without a suffix the
backend is ``$S3KG_ENCODER_BACKEND``, else :data:`DEFAULT_BACKEND` (chosen by measurement:
``bench/README.md``, "Encoder backends"). The backend enters the encoder's name, and with it the
score signature: ``minilm@0.1.0`` is torch, ``minilm@0.1.0+onnx`` onnxruntime.

Nothing here imports a runtime.
"""

from __future__ import annotations

import os

from ..errors import ConfigError

__all__ = [
    "BACKENDS",
    "BACKEND_ENV",
    "DEFAULT_BACKEND",
    "backend_of_name",
    "default_backend",
    "split_spec",
    "with_backend",
]

BACKENDS = ("torch", "onnx", "openvino")

BACKEND_ENV = "S3KG_ENCODER_BACKEND"

DEFAULT_BACKEND = "onnx"
"""The backend when neither a spec suffix nor ``$S3KG_ENCODER_BACKEND`` names one."""


def _checked(backend: str, source: str) -> str:
    if backend not in BACKENDS:
        raise ConfigError(
            f"unknown encoder backend {backend!r} ({source}): use one of {', '.join(BACKENDS)}"
        )
    return backend


def default_backend() -> str:
    """``$S3KG_ENCODER_BACKEND`` (read at call time), else :data:`DEFAULT_BACKEND`.

    Raises
    ------
    ConfigError
        If the variable names no backend of :data:`BACKENDS`.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"S3KG_ENCODER_BACKEND": "openvino"}):
    ...     default_backend()
    'openvino'
    >>> with mock.patch.dict(os.environ):  # the variable unset, then as it was
    ...     _ = os.environ.pop("S3KG_ENCODER_BACKEND", None)
    ...     default_backend() == DEFAULT_BACKEND
    True
    """
    env = os.environ.get(BACKEND_ENV, "").strip()
    return _checked(env, f"${BACKEND_ENV}") if env else DEFAULT_BACKEND


def split_spec(spec: str) -> tuple[str, str | None]:
    """Split ``name+backend`` into ``(name, backend)``; ``backend`` is ``None`` without a suffix.

    Only a known backend is a suffix, so a path with a ``+`` in it stays whole.

    Examples
    --------
    >>> split_spec("minilm+openvino")
    ('minilm', 'openvino')
    >>> split_spec("minilm")
    ('minilm', None)
    >>> split_spec("/models/a+b")
    ('/models/a+b', None)
    """
    head, sep, tail = spec.rpartition("+")
    if sep and head and tail in BACKENDS:
        return head, tail
    return spec, None


def with_backend(spec: str, backend: str | None) -> str:
    """The spec that loads ``spec``'s model on ``backend`` (``None``: ``spec`` unchanged).

    Raises
    ------
    ConfigError
        If ``backend`` is not one of :data:`BACKENDS`.

    Examples
    --------
    >>> with_backend("minilm", "onnx")
    'minilm+onnx'
    >>> with_backend("minilm+onnx", "torch")
    'minilm+torch'
    >>> with_backend("mpnet", None)
    'mpnet'
    """
    if backend is None:
        return spec
    return f"{split_spec(spec)[0]}+{_checked(backend, 'backend')}"


def backend_of_name(encoder_name: str) -> str:
    """The backend an encoder *name* (as in a signature) was computed with.

    A name without a backend suffix is torch's (every name written before backends existed).

    Examples
    --------
    >>> backend_of_name("minilm@0.1.0+openvino")
    'openvino'
    >>> backend_of_name("minilm@0.1.0")
    'torch'
    """
    return split_spec(encoder_name)[1] or "torch"
