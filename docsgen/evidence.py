"""The files under ``evidence/``: every figure the docs quote, with what produced it.

An evidence file is one JSON object::

    {"format": "s3kg-evidence-v1",
     "title": "what the figures are",
     "provenance": {
         "command": "the command line that produced them",
         "signature": "the score signature (null where the figures have none, e.g. timings)",
         "machine": {"cores": 2, "cpu": "AMD EPYC", ...},
         "date": "2026-12-01",
         "commit": "git commit of the code that ran",
         "transcribed": null},
     "figures": {... nested objects of numbers and strings ...}}

A bench script that writes its ``--json`` through :func:`write_evidence` fills ``provenance``
itself (this machine, today, ``git rev-parse HEAD``), so ``--json evidence/NAME.json`` updates
the evidence that ``scripts/render_evidence.py`` renders into the docs. Figures of runs too
long to repeat were copied from the notebook in which they were first reported:
``transcribed`` then says from where (``from``), which run (``run``) and when the copy was
made (``at``), and ``commit`` is the commit that recorded the run.

Examples
--------
>>> import tempfile
>>> path = Path(tempfile.mkdtemp()) / "x.json"
>>> _ = write_evidence(path, {"auroc": 0.5}, title="t", command="python x.py", commit="abc")
>>> ev = read_evidence(path)
>>> ev["figures"]["auroc"], ev["provenance"]["commit"], ev["provenance"]["transcribed"]
(0.5, 'abc', None)
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "EVIDENCE_DIR",
    "FORMAT",
    "EvidenceError",
    "command_line",
    "figure",
    "git_commit",
    "load_all",
    "machine",
    "provenance",
    "read_evidence",
    "update_evidence",
    "validate",
    "write_evidence",
]

REPO = Path(__file__).resolve().parents[1]
EVIDENCE_DIR = REPO / "evidence"
FORMAT = "s3kg-evidence-v1"
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
_ENV = ("OMP_NUM_THREADS", "S3KG_ENCODER_BACKEND", "S3KG_ENCODE_PROCESSES")
"""Environment variables that change a run's figures, recorded with the machine when set."""


class EvidenceError(ValueError):
    """An evidence file that is not in the format, or a figure it does not hold."""


def machine() -> dict[str, Any]:
    """This machine as an evidence file records it: cores, CPU model, platform, load, and the
    environment variables of :data:`_ENV` that are set.

    Examples
    --------
    >>> m = machine()
    >>> m["cores"] >= 1 and bool(m["cpu"])
    True
    """
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {
        "cores": os.cpu_count() or 1,
        "cpu": cpu,
        "platform": platform.platform(terse=True),
        "python": platform.python_version(),
        "load_average": None if load is None else round(load, 2),
        "env": {k: os.environ[k] for k in _ENV if k in os.environ},
    }


def git_commit(repo: Path = REPO) -> str:
    """The checkout's commit (short), with ``-dirty`` when tracked files differ from it.

    ``"unknown"`` outside a git checkout.
    """
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=repo, capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=repo, capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{sha}-dirty" if dirty else sha


def command_line(argv: list[str] | None = None) -> str:
    """This process's command line as a user would type it from the repository root.

    A bench script (which runs as a module, ``python -m bench.speed.x``) is shown so.

    Examples
    --------
    >>> command_line([str(REPO / "bench" / "speed" / "x.py"), "--json", "evidence/x.json"])
    'python -m bench.speed.x --json evidence/x.json'
    >>> command_line([str(REPO / "scripts" / "y.py")])
    'python scripts/y.py'
    """
    argv = list(sys.argv if argv is None else argv)
    script = Path(argv[0])
    try:
        relative = script.resolve().relative_to(REPO)
    except ValueError:
        return "python " + shlex.join([script.as_posix(), *argv[1:]])
    if relative.parts[0] == "bench" and relative.suffix == ".py":
        module = ".".join(relative.with_suffix("").parts)
        return "python -m " + shlex.join([module, *argv[1:]])
    return "python " + shlex.join([relative.as_posix(), *argv[1:]])


def provenance(
    command: str,
    *,
    signature: str | None = None,
    date: str | None = None,
    commit: str | None = None,
    machine_info: Mapping[str, Any] | None = None,
    transcribed: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """What produced a set of figures; by default this machine, today and this checkout."""
    return {
        "command": command,
        "signature": signature,
        "machine": dict(machine() if machine_info is None else machine_info),
        "date": date or datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit or git_commit(),
        "transcribed": None if transcribed is None else dict(transcribed),
    }


def validate(content: Any, where: str = "evidence") -> dict[str, Any]:
    """``content`` if it is an evidence file's object, else :class:`EvidenceError` naming why."""
    if not isinstance(content, dict) or content.get("format") != FORMAT:
        raise EvidenceError(f"{where}: not an evidence file (format {FORMAT!r} expected)")
    for key in ("title", "provenance", "figures"):
        if key not in content:
            raise EvidenceError(f"{where}: no {key!r}")
    prov = content["provenance"]
    if not isinstance(prov, dict):
        raise EvidenceError(f"{where}: 'provenance' is not an object")
    for key in ("command", "signature", "machine", "date", "commit", "transcribed"):
        if key not in prov:
            raise EvidenceError(f"{where}: provenance has no {key!r}")
    for key in ("command", "commit"):
        if not isinstance(prov[key], str) or not prov[key].strip():
            raise EvidenceError(f"{where}: provenance {key!r} is empty")
    if not isinstance(prov["date"], str) or not _DATE.match(prov["date"]):
        raise EvidenceError(f"{where}: provenance 'date' is not YYYY-MM-DD...: {prov['date']!r}")
    mach = prov["machine"]
    if not isinstance(mach, dict) or not isinstance(mach.get("cores"), int) or not mach.get("cpu"):
        raise EvidenceError(f"{where}: provenance 'machine' needs 'cores' and 'cpu'")
    tr = prov["transcribed"]
    if tr is not None and not (isinstance(tr, dict) and tr.get("from") and tr.get("run")):
        raise EvidenceError(f"{where}: 'transcribed' needs 'from' and 'run' (or null)")
    if not isinstance(content["figures"], dict) or not content["figures"]:
        raise EvidenceError(f"{where}: 'figures' is empty")
    return content


def write_evidence(
    path: str | Path,
    figures: Mapping[str, Any],
    *,
    title: str,
    command: str | None = None,
    signature: str | None = None,
    **prov: Any,
) -> dict[str, Any]:
    """Write ``figures`` with their provenance to ``path`` (whole or not at all); return it.

    ``command`` defaults to this process's command line; the other keywords go to
    :func:`provenance`.
    """
    content = {
        "format": FORMAT,
        "title": title,
        "provenance": provenance(command or command_line(), signature=signature, **prov),
        "figures": dict(figures),
    }
    validate(content, str(path))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(content, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return content


def update_evidence(
    path: str | Path,
    keys: Sequence[str],
    entry: Any,
    *,
    title: str,
    command: str | None = None,
    **prov: Any,
) -> dict[str, Any]:
    """Set ``figures[keys[0]][keys[1]]...`` of the evidence file ``path`` to ``entry``; return it.

    The file's other figures are kept (a new file is started when there is none), so a bench
    run adds one row (one database, one checkout) to the figures of earlier runs. The
    provenance becomes this run's; a ``transcribed`` note of the file stays (some of its
    figures are still copied ones) unless ``transcribed`` is given. An entry should carry its
    own date and commit when the file gathers runs of several days.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "x.json"
    >>> _ = update_evidence(path, ["sizes", "10"], {"s": 1.0}, title="t", command="c", commit="a")
    >>> ev = update_evidence(path, ["sizes", "20"], {"s": 2.5}, title="t", command="c", commit="b")
    >>> ev["figures"]["sizes"], ev["provenance"]["commit"]
    ({'10': {'s': 1.0}, '20': {'s': 2.5}}, 'b')
    """
    if not keys:
        raise EvidenceError("update_evidence: no key to set")
    path = Path(path)
    figures: dict[str, Any] = {}
    if path.exists():
        old = read_evidence(path)
        figures = old["figures"]
        prov.setdefault("transcribed", old["provenance"]["transcribed"])
    node = figures
    for key in keys[:-1]:
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise EvidenceError(f"{path}: figures/{key} is not an object")
        node = child
    node[keys[-1]] = entry
    return write_evidence(path, figures, title=title, command=command, **prov)


def read_evidence(path: str | Path) -> dict[str, Any]:
    """An evidence file's object, validated (:class:`EvidenceError` when it is not one)."""
    path = Path(path)
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise EvidenceError(f"{path}: {exc}") from exc
    return validate(content, str(path))


def load_all(folder: str | Path = EVIDENCE_DIR) -> dict[str, dict[str, Any]]:
    """Every evidence file of ``folder`` by name (``pairs_minilm`` for ``pairs_minilm.json``)."""
    return {p.stem: read_evidence(p) for p in sorted(Path(folder).glob("*.json"))}


def figure(evidence: Mapping[str, Mapping[str, Any]], path: str) -> Any:
    """The figure at ``NAME/key/key...``: ``figures[key][key]...`` of evidence file NAME.

    A list is indexed by position. :class:`EvidenceError` names the first missing step.

    Examples
    --------
    >>> ev = {"x": {"figures": {"sets": {"mrpc": {"auroc": 0.6, "ci": [0.5, 0.7]}}}}}
    >>> figure(ev, "x/sets/mrpc/auroc"), figure(ev, "x/sets/mrpc/ci/1")
    (0.6, 0.7)
    >>> figure(ev, "x/sets/paws/auroc")
    Traceback (most recent call last):
    ...
    docsgen.evidence.EvidenceError: x/sets/paws/auroc: no 'paws' in x/sets
    """
    name, _, rest = path.partition("/")
    if name not in evidence:
        raise EvidenceError(f"{path}: no evidence file {name}.json")
    node: Any = evidence[name]["figures"]
    walked = name
    for step in rest.split("/") if rest else []:
        if isinstance(node, list) and step.isdigit() and int(step) < len(node):
            node = node[int(step)]
        elif isinstance(node, dict) and step in node:
            node = node[step]
        else:
            raise EvidenceError(f"{path}: no {step!r} in {walked}")
        walked += f"/{step}"
    return node
