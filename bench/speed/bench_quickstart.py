"""The README's own-data quick start, run line by line as a new user runs it, each line timed.

What is measured
----------------
The ```bash block of the README's "Quick start 2: your own data" is read from the README (not
copied here, so the figures follow the README), and every line but the last (``s3kg
dashboard``, which serves until stopped) runs as ``s3kg ...`` in a child process in an empty
temporary folder, with ``../shared`` reachable as the README expects (``--data-dir`` names the
folder that stands for ``../shared/data``). With ``--fresh-cache`` (the default) the cache
folder (``$S3KG_CACHE_DIR``) is new too, so the packaged SmolLM2 is converted as on a fresh
machine; ``--warm-cache`` keeps the user's. Reported: each line's wall seconds and exit status,
and the total; a line that fails stops the run (exit 1).

Wall-clock figures are only comparable on an otherwise idle machine: the load average is printed
before and after, and written with the figures.

Usage::

    python -m bench.speed.bench_quickstart [--data-dir DIR] [--json evidence/quickstart.json]
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._common import REPO, add_data_dir, print_load, text_table, write_evidence

__all__ = ["SECTION", "main", "quickstart_lines"]

SECTION = "## Quick start 2"
"""The README heading whose first ```bash block is run."""

_BLOCK = re.compile(r"```bash\n(.*?)```", re.S)


def quickstart_lines(readme: str, section: str = SECTION) -> list[str]:
    """The command lines of the first ```bash block under ``section``, comments cut.

    Examples
    --------
    >>> text = "## Quick start 2: x\\n\\n```bash\\ns3kg a --db r   # 1 s\\n\\ns3kg b\\n```\\n"
    >>> quickstart_lines(text)
    ['s3kg a --db r', 's3kg b']
    >>> quickstart_lines("## Other\\n")
    Traceback (most recent call last):
    ...
    ValueError: no '## Quick start 2' section with a bash block in the README
    """
    start = readme.find(section)
    match = _BLOCK.search(readme, start) if start >= 0 else None
    if match is None:
        raise ValueError(f"no {section!r} section with a bash block in the README")
    lines = []
    for raw in match.group(1).splitlines():
        line = raw.split("  #", 1)[0].strip()
        if line and not line.startswith("#"):
            lines.append(line)
    return lines


def _run(line: str, folder: Path, data_dir: Path, env: dict[str, str]) -> tuple[float, int]:
    words = shlex.split(line)
    if words[0] != "s3kg":
        raise ValueError(f"not an s3kg line: {line!r}")
    # the README names ../shared/data: here it is the --data-dir folder
    words = [w.replace("../shared/data", str(data_dir)) for w in words]
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "s3kg_core", *words[1:]],
        cwd=folder,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode:
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-3:]
        print("\n".join(tail), file=sys.stderr)
    return seconds, done.returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_dir(ap, "pubmedqa/ (the README's ../shared/data)")
    cache = ap.add_mutually_exclusive_group()
    cache.add_argument(
        "--fresh-cache", dest="fresh", action="store_true", default=True,
        help="a new cache folder: SmolLM2 is converted as on a fresh machine (default)",
    )  # fmt: skip
    cache.add_argument("--warm-cache", dest="fresh", action="store_false")
    ap.add_argument("--readme", type=Path, default=REPO / "README.md")
    ap.add_argument("--json", type=Path, help="write the figures as an evidence file")
    args = ap.parse_args(argv)
    lines = quickstart_lines(args.readme.read_text(encoding="utf-8"))
    served = [line for line in lines if line.startswith("s3kg dashboard")]
    timed = [line for line in lines if line not in served]
    before = print_load("before")
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="s3kg-quickstart-") as tmp:
        folder = Path(tmp) / "work"
        folder.mkdir()
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        if args.fresh:
            env["S3KG_CACHE_DIR"] = str(Path(tmp) / "cache")
        for line in timed:
            seconds, code = _run(line, folder, args.data_dir.resolve(), env)
            rows.append({"line": line, "seconds": round(seconds, 1), "exit": code})
            print(f"{seconds:7.1f} s  exit {code}  {line}", flush=True)
            if code:
                return 1
    total = sum(float(str(r["seconds"])) for r in rows)
    after = print_load("after")
    print(
        text_table(
            ["line", "seconds"],
            [[str(r["line"]), f"{r['seconds']}"] for r in rows] + [["total", f"{total:.1f}"]],
            right={1},
        )
    )
    print(f"total {total / 60:.1f} min ({'fresh' if args.fresh else 'warm'} cache)")
    if args.json:
        write_evidence(
            args.json,
            {
                "lines": rows,
                "total_seconds": round(total, 1),
                "cache": "fresh" if args.fresh else "warm",
                "not_timed": served,
                "load_before": before,
                "load_after": after,
            },
            title="The README's own-data quick start, line by line (bench_quickstart.py)",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
