"""Named exceptions of s3kg_core.

Every error a user can cause raises one of these, with a message that says what to do. The CLI
turns them into a one-line error and a non-zero exit; the dashboard into ``st.error``.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AnnotationError",
    "AnnotatorNameError",
    "CheckerError",
    "CheckerExportError",
    "ComparisonError",
    "ConfigError",
    "CorruptDatabaseError",
    "DatabaseError",
    "DatabaseLockedError",
    "DeadlineExceeded",
    "EncoderError",
    "EncoderNotFoundError",
    "EndpointError",
    "ExtractionError",
    "FactualityError",
    "GraphEvalError",
    "GraphRenderError",
    "InputFormatError",
    "InputTooLargeError",
    "InstallError",
    "KGParseError",
    "KGSourceError",
    "LLMError",
    "LLMResponseError",
    "LayoutCancelled",
    "MappingError",
    "MissingDependencyError",
    "OutputError",
    "OutputIsDatabaseError",
    "PenmanFormatError",
    "RedirectRefused",
    "ReplyLimitError",
    "ReplyTooLarge",
    "RunSelectionError",
    "S3KGError",
    "ServeError",
    "ServeRequestError",
    "TripleError",
]


class S3KGError(Exception):
    """Base class of every error raised on purpose by s3kg_core."""


class ConfigError(S3KGError, ValueError):
    """An option or argument is out of range or unknown (alpha, tau, mode, a batch size ...)."""


class RunSelectionError(ConfigError):
    """A run named by id or display name is not in the database, or the name fits several."""


class ComparisonError(ConfigError):
    """Two runs or pair files cannot be compared: other datasets, nothing shared, no score."""


class TripleError(S3KGError, ValueError):
    """A triple is not three non-empty strings."""


class KGParseError(S3KGError, ValueError):
    """A knowledge-graph cell could not be parsed as a list of [head, relation, tail] lists."""


class InputFormatError(S3KGError, ValueError):
    """An input file lacks required columns or cannot be read."""


class InputTooLargeError(InputFormatError):
    """An input file is past the input cap (``s3kg_core.limits.max_input_bytes``)."""


class EncoderError(S3KGError, RuntimeError):
    """A sentence encoder failed to load or to encode."""


class EncoderNotFoundError(EncoderError, FileNotFoundError):
    """The requested encoder is neither a packaged model nor a local model directory."""


class DatabaseError(S3KGError, RuntimeError):
    """The DuckDB store cannot be used (see the subclasses)."""


class DatabaseLockedError(DatabaseError):
    """Another process holds the database file's write lock."""


class CorruptDatabaseError(DatabaseError):
    """The database file is not a DuckDB database, is truncated or damaged, or is too new."""


class OutputError(S3KGError, OSError):
    """An output file cannot be written: its folder is a file or read-only, or the disk is full."""


class OutputIsDatabaseError(OutputError):
    """An output path is the database or its write-ahead log: a usage error (exit status 2)."""

    exit_code = 2


class LayoutCancelled(S3KGError):
    """A graph layout was stopped by its caller's ``should_stop`` (the page that asked is gone)."""


class InstallError(S3KGError, RuntimeError):
    """The installation lacks a part this needs: an optional extra, or the package's files."""


class MissingDependencyError(InstallError):
    """A package this needs is not installed; the message says what to install."""


class PenmanFormatError(InputFormatError):
    """A block of a PENMAN (AMR) text is not one well-formed graph (file, block, line named)."""


class MappingError(InputFormatError):
    """A column mapping names columns the input does not have."""


class KGSourceError(InputFormatError):
    """A KG to store names a source other than ``gold``, ``answer`` or ``context``."""


class LLMError(S3KGError, RuntimeError):
    """A call to an OpenAI-compatible endpoint failed (see the subclasses)."""


class EndpointError(LLMError):
    """The endpoint is unreachable, refuses the key or model, or kept failing after the retries."""


class ServeError(EndpointError):
    """``transformers serve`` exited or did not answer in time (the message ends with its log)."""


class ReplyLimitError(LLMError):
    """One reply of an endpoint went past a limit (its deadline, its size)."""


class DeadlineExceeded(ReplyLimitError, TimeoutError):
    """No complete reply within the request's total deadline (``--timeout``)."""


class ReplyTooLarge(ReplyLimitError):
    """A reply's body, decompressed, is larger than allowed, or in an encoding not accepted."""


class RedirectRefused(LLMError):
    """The endpoint redirected a request to another origin (scheme, host or port)."""


class LLMResponseError(LLMError, ValueError):
    """The endpoint answered, but the answer cannot be used (malformed JSON beyond repair)."""


class ExtractionError(S3KGError, RuntimeError):
    """A KG extractor cannot run (model missing, endpoint not configured)."""


class GraphEvalError(S3KGError, RuntimeError):
    """A GraphEval step (detection, correction, its benchmark) cannot run (see the subclasses)."""


class AnnotationError(S3KGError, ValueError):
    """An annotation, task, adjudication or calibration request cannot be carried out as asked."""


class AnnotatorNameError(AnnotationError):
    """An annotator's name is empty or too long, or holds control or bidi-override characters."""


class CheckerError(GraphEvalError):
    """A triple checker cannot run: model missing or unusable, endpoint not configured."""


class CheckerExportError(CheckerError):
    """The trained checker's int8 ONNX export is missing, stale (its model changed) or unusable."""


class FactualityError(S3KGError, RuntimeError):
    """A factuality step (statements, labels, hidden states, judge) cannot run or got bad input."""


class GraphRenderError(S3KGError, ValueError):
    """A graph cannot be drawn as asked (bad colour or height, or a page that would go online)."""


class ServeRequestError(S3KGError):
    """A request ``s3kg llm serve`` refuses: its HTTP status, OpenAI error body and headers."""

    def __init__(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(body["error"]["message"])
        self.status = status
        self.body = body
        self.headers = headers or {}
