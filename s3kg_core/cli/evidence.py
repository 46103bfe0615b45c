"""The ``--json`` and ``--evidence`` files of the ``s3kg bench`` commands.

Both files are checked before the work (:func:`~s3kg_core.cli._common.check_output`, and an
existing ``--evidence`` file must be an evidence file, so a refused path costs no scoring) and
written after it. An evidence file is updated through the checkout's ``docsgen/evidence.py``,
the one home of the evidence format: each entry gets the command line, today's date (UTC) and
the git commit, and the file's other entries are kept. Evidence takes complete figures only: a
run with a figure missing writes neither file (:meth:`BenchOutputs.require_complete`).
"""

from __future__ import annotations

import datetime
import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from ..errors import ConfigError, OutputError
from ._common import check_output, write_json_atomic

__all__ = ["BenchOutputs"]


def _evidence_io() -> Any:
    """The checkout's ``docsgen/evidence.py``, the one home of the evidence format.

    ``docsgen/`` belongs to the source checkout, not to the installed package, so the module is
    loaded from its file (beside the ``s3kg_core`` this runs from) when ``--evidence`` asks.
    """
    path = Path(__file__).resolve().parents[2] / "docsgen" / "evidence.py"
    spec = importlib.util.spec_from_file_location("_s3kg_docsgen_evidence", path)
    if not path.is_file() or spec is None or spec.loader is None:
        raise ConfigError(
            f"--evidence updates the evidence files of a source checkout, and {path} is not "
            "there (an installed package): use --json"
        )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class BenchOutputs:
    """A bench command's ``--json`` and ``--evidence`` files: checked, then :meth:`write`.

    Build it before the work: it refuses an output path that would overwrite a database or
    cannot be written, loads ``docsgen/evidence.py`` when ``evidence_path`` is given and reads
    an existing evidence file, which must be one.

    Parameters
    ----------
    json_path, evidence_path
        The ``--json`` and ``--evidence`` files; ``None`` for an option not given.

    Raises
    ------
    ConfigError
        ``evidence_path`` is given and this runs from an installed package (no ``docsgen/``).
    OutputError
        ``evidence_path`` exists and is not an evidence file (another JSON, a CSV...).

    Examples
    --------
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> out = Path(tempfile.mkdtemp()) / "result.json"
    >>> outputs = BenchOutputs(out, None)  # before the work
    >>> outputs.write(  # doctest: +ELLIPSIS
    ...     {"r": 0.5}, [], section="ours", title="t", command="s3kg bench x", signature="s"
    ... )
    wrote .../result.json
    >>> json.loads(out.read_text())
    {'r': 0.5}
    """

    def __init__(self, json_path: Path | None, evidence_path: Path | None) -> None:
        check_output(json_path, option="--json")  # before the work, not after it
        check_output(evidence_path, option="--evidence")
        self.json_path = json_path
        self.evidence_path = evidence_path
        self._io = _evidence_io() if evidence_path is not None else None
        if self._io is not None and evidence_path is not None and evidence_path.exists():
            try:  # before the work: a run is not lost to an evidence file it cannot update
                self._io.read_evidence(evidence_path)
            except self._io.EvidenceError as exc:
                why = _first_line(exc).removeprefix(f"{evidence_path}: ")
                raise OutputError(
                    f"--evidence {evidence_path} cannot be updated: {why}; name an evidence "
                    "file (evidence/NAME.json) or a new file"
                ) from exc

    def require_complete(self, missing: Sequence[str]) -> None:
        """Refuse ``--evidence`` when figures are ``missing``; nothing is written then.

        Call it before the work with what is known to be missing (a task whose files are
        absent), and :meth:`write` calls it again with the figures the run could not make.

        Raises
        ------
        ConfigError
            ``--evidence`` was given and ``missing`` names anything.

        Examples
        --------
        >>> import tempfile
        >>> from pathlib import Path
        >>> BenchOutputs(None, None).require_complete(["para/reify: missing"])  # no --evidence
        >>> evidence = Path(tempfile.mkdtemp()) / "e.json"
        >>> BenchOutputs(None, evidence).require_complete(["para/reify: missing"])
        Traceback (most recent call last):
        ...
        s3kg_core.errors.ConfigError: --evidence takes complete figures only, and 1 is missing ...
        """
        if self.evidence_path is None or not missing:
            return
        shown = "; ".join(missing[:3]) + (
            f"; and {len(missing) - 3} more" if len(missing) > 3 else ""
        )
        raise ConfigError(
            f"--evidence takes complete figures only, and {len(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} missing ({shown}): nothing was written "
            f"to {self.evidence_path} (--json alone writes a partial result)"
        )

    def write(
        self,
        payload: Any,
        entries: Sequence[tuple[Sequence[str], Mapping[str, Any]]],
        *,
        section: str,
        title: str,
        command: str,
        signature: str,
        missing: Sequence[str] = (),
    ) -> None:
        """Write ``payload`` to the JSON file and ``entries`` to the evidence file, if asked.

        Then say in one line what was written (``wrote PATH; updated PATH (SECTION/KEYS, ...)``);
        nothing when neither option was given.

        Parameters
        ----------
        payload
            What the ``--json`` file holds.
        entries
            ``(keys, figures)`` pairs: each figures' place under ``section`` of the evidence
            file's figures and the figures themselves, to which the command, the date and the
            commit are added.
        section, title, command, signature
            The evidence file's top key for these figures, its title, the command line that
            made them and their score signature.
        missing
            The figures the run could not make: with ``--evidence``, neither file is written
            (:meth:`require_complete`).
        """
        self.require_complete(missing)
        notes = []
        if self.json_path is not None:
            write_json_atomic(self.json_path, payload)
            notes.append(f"wrote {self.json_path}")
        if self._io is not None and self.evidence_path is not None:
            stamp = {
                "command": command,
                "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
                "commit": self._io.git_commit(),
            }
            for keys, figures in entries:
                try:
                    self._io.update_evidence(
                        self.evidence_path,
                        [section, *keys],
                        {**figures, **stamp},
                        title=title,
                        command=command,
                        signature=signature,
                    )
                except self._io.EvidenceError as exc:  # e.g. figures/<mode> is not an object
                    raise OutputError(
                        f"cannot update {self.evidence_path}: {_first_line(exc)}"
                    ) from exc
            places = ", ".join("/".join(keys) for keys, _ in entries)
            notes.append(f"updated {self.evidence_path} ({section}/{places})")
        if notes:
            click.echo("; ".join(notes))
