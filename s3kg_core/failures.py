"""What a stage stored as failed: how many of what it tried, and where to look.

The stages that call a model or an extractor per item (collect, extract, GraphEval's detect)
record a failed item and go on; their reports say how many failed through
:class:`StageFailures`, and the command line turns that into its exit status (0: none failed,
3: some, 1: all; see :mod:`s3kg_core.cli`).

Examples
--------
>>> f = StageFailures("collect", 2, 4, "requests", "the answers table")
>>> f.some_failed, f.all_failed
(True, False)
>>> f.message()
'collect: 2 of 4 requests failed (see the answers table); rerun to retry them'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from .errors import ConfigError

__all__ = ["StageFailures"]


@dataclass(frozen=True)
class StageFailures:
    """The items a stage stored as failed, out of those it tried, and where to look.

    Attributes
    ----------
    stage
        The stage's name as the command line says it (``collect``, ``extract``, ...).
    failed
        Items stored as failed in this pass (retried by the next one).
    tried
        Items the pass tried (failed ones included; those already done are not).
    unit
        What an item is, plural (``requests``, ``KGs``, ``answers``).
    where
        Where the failures and their reasons are stored.
    outcome
        The word for a failed item (``failed``, ``unjudged``).

    Examples
    --------
    >>> StageFailures("extract", 0, 0, "KGs", "the kgs table").some_failed
    False
    >>> StageFailures("extract", 3, 3, "KGs", "the kgs table").all_failed
    True
    """

    stage: str
    failed: int
    tried: int
    unit: str
    where: str
    outcome: str = "failed"

    @property
    def some_failed(self) -> bool:
        """Whether any item failed."""
        return self.failed > 0

    @property
    def all_failed(self) -> bool:
        """Whether the pass tried something and every item of it failed."""
        return self.tried > 0 and self.failed >= self.tried

    def message(self) -> str:
        """One line: how many failed, where to look, what to do.

        Examples
        --------
        >>> StageFailures("extract", 27, 33, "KGs", "the kgs table's status").message()
        "extract: 27 of 33 KGs failed (see the kgs table's status); rerun to retry them"
        """
        return (
            f"{self.stage}: {self.failed} of {self.tried} {self.unit} {self.outcome} "
            f"(see {self.where}); rerun to retry them"
        )

    @classmethod
    def combine(cls, parts: Sequence[StageFailures]) -> StageFailures:
        """The failures of several passes of one stage (a stage run per run), summed.

        Raises
        ------
        ConfigError
            If ``parts`` is empty or its items are of different stages or units.

        Examples
        --------
        >>> a = StageFailures("detect", 1, 4, "answers", "the table")
        >>> StageFailures.combine([a, a]).message()
        'detect: 2 of 8 answers failed (see the table); rerun to retry them'
        """
        if not parts:
            raise ConfigError("combine needs at least one StageFailures")
        first = parts[0]
        if any((p.stage, p.unit) != (first.stage, first.unit) for p in parts):
            raise ConfigError("combine takes the failures of one stage and one unit")
        return replace(
            first, failed=sum(p.failed for p in parts), tried=sum(p.tried for p in parts)
        )
