"""The local ``transformers serve`` endpoint for tests: see :mod:`s3kg_core.llm.serve`."""

from s3kg_core.llm.serve import (
    free_port,
    serve_command,
    serve_unavailable_reason,
    transformers_serve,
)

__all__ = [
    "free_port",
    "serve_command",
    "serve_unavailable_reason",
    "transformers_serve",
]
