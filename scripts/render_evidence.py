"""Write the docs' tables and quoted figures from ``evidence/*.json``; ``--check`` reports drift.

The docs mark what is rendered:

- a table: ``<!-- evidence:ID -->`` ... ``<!-- /evidence -->``; the lines between are the
  output of view ID (``docsgen/``) and a line naming its evidence file(s);
- a figure in prose: ``<!-- ev:NAME/key/key:SPEC -->0.790<!-- /ev -->``, the value of
  ``figures[key][key]`` of ``evidence/NAME.json`` formatted with the format spec SPEC
  (``.3f``, ``,d``, ``.1f``...; none: ``str``).

``--check`` changes nothing and exits 1 when a doc differs from what would be written, a
marker names no view or figure, an evidence file is not in the format, an evidence file or a
view is used nowhere, or a results section (``SCANNED`` in ``docsgen/base.py``) holds a
figure no marker renders: a table row with a decimal number, or in prose a number with three
or more decimals or a ratio such as ``46x``. Such a figure is either rendered (a table, an
inline marker) or replaced by a reference to the table that holds it.

Usage::

    python scripts/render_evidence.py            # rewrite the docs' rendered parts
    python scripts/render_evidence.py --check    # report drift, change nothing
    python scripts/render_evidence.py docs/results.md --check   # any Markdown file

By default the docs are README.md, bench/README.md and every ``docs/**/*.md``; a docs page
includes a table by holding its markers (the same ID may appear in several files).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from docsgen import SCANNED, VIEWS, View  # noqa: E402
from docsgen.evidence import EVIDENCE_DIR, EvidenceError, figure, load_all  # noqa: E402

__all__ = [
    "BLOCK",
    "INLINE",
    "check",
    "default_docs",
    "render_text",
    "source_line",
    "stray_figures",
    "used",
]

BLOCK = re.compile(
    r"(?P<open><!-- evidence:(?P<id>[\w.@-]+) -->\n)(?P<body>.*?)(?P<close><!-- /evidence -->)",
    re.DOTALL,
)
INLINE = re.compile(
    r"(?P<open><!-- ev:(?P<path>[^\s:]+)(?::(?P<spec>[^\s]*))? -->)(?P<value>.*?)"
    r"(?P<close><!-- /ev -->)"
)
_FENCE = re.compile(r"^```.*?^```[^\n]*$", re.MULTILINE | re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_PROSE_FIGURE = re.compile(r"(?<![\w.])\d+\.\d{3,}(?!\w|\.\d)|(?<![\w.])\d+(?:\.\d+)?x(?!\w)")
_TABLE_FIGURE = re.compile(r"\d\.\d")


def default_docs(root: Path = REPO) -> list[Path]:
    """README.md, bench/README.md and every Markdown page under docs/ that exists."""
    docs = [root / "README.md", root / "bench" / "README.md"]
    docs += sorted((root / "docs").rglob("*.md")) if (root / "docs").is_dir() else []
    return [d for d in docs if d.is_file()]


def source_line(v: View, evidence: Mapping[str, Mapping[str, Any]]) -> str:
    """The line under a rendered table: its evidence files, their dates and commits.

    Examples
    --------
    >>> prov = {"date": "2026-12-01 10:00 UTC", "commit": "abc1234", "transcribed": None}
    >>> v = View("t", ("x",), lambda ev: "")
    >>> source_line(v, {"x": {"provenance": prov}})
    '<sub>Figures: `evidence/x.json` (2026-12-01, abc1234).</sub>'
    """
    parts = []
    for name in v.sources:
        prov = evidence[name]["provenance"]
        how = ", transcribed" if prov.get("transcribed") else ""
        parts.append(f"`evidence/{name}.json` ({str(prov['date'])[:10]}, {prov['commit']}{how})")
    return "<sub>Figures: " + "; ".join(parts) + ".</sub>"


def _inline_value(path: str, spec: str | None, evidence: Mapping[str, Any]) -> str:
    value = figure(evidence, path)
    if isinstance(value, dict | list):
        raise EvidenceError(f"{path}: not a figure but a {type(value).__name__}")
    return format(value, spec) if spec else str(value)


def render_text(
    text: str,
    evidence: Mapping[str, Mapping[str, Any]],
    views: Mapping[str, View] = VIEWS,
    problems: list[str] | None = None,
    where: str = "",
) -> str:
    """``text`` with every block and inline marker rewritten from ``evidence``.

    A marker that names no view or figure is left as it is and reported in ``problems``
    (raised as :class:`EvidenceError` when ``problems`` is None).

    Examples
    --------
    >>> ev = {"x": {"figures": {"a": 0.12345}, "provenance": {}}}
    >>> render_text("AUROC <!-- ev:x/a:.3f -->0.1<!-- /ev -->.", ev)
    'AUROC <!-- ev:x/a:.3f -->0.123<!-- /ev -->.'
    """

    def fail(message: str) -> None:
        if problems is None:
            raise EvidenceError(message)
        problems.append(f"{where}{message}")

    def block(m: re.Match[str]) -> str:
        v = views.get(m["id"])
        if v is None:
            fail(f"no view {m['id']!r} (block at line {_line(text, m.start())})")
            return m.group(0)
        missing = [s for s in v.sources if s not in evidence]
        if missing:
            fail(f"view {v.id!r} needs evidence/{missing[0]}.json")
            return m.group(0)
        try:
            table = v.render(evidence)
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            fail(f"view {v.id!r} cannot render from {', '.join(v.sources)}: {exc!r}")
            return m.group(0)
        body = table.rstrip("\n") + "\n\n" + source_line(v, evidence) + "\n"
        return m["open"] + body + m["close"]

    def inline(m: re.Match[str]) -> str:
        try:
            value = _inline_value(m["path"], m["spec"], evidence)
        except (EvidenceError, ValueError, TypeError) as exc:
            fail(f"line {_line(text, m.start())}: {exc}")
            return m.group(0)
        return m["open"] + value + m["close"]

    return INLINE.sub(inline, BLOCK.sub(block, text))


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _mask(text: str) -> str:
    """``text`` with code fences, rendered blocks, inline markers and comments blanked out.

    Newlines are kept, so line numbers stay those of ``text``.
    """

    def blank(m: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))

    for pattern in (BLOCK, INLINE, _FENCE, _COMMENT):
        text = pattern.sub(blank, text)
    return text


def _in_sections(lines: Sequence[str], sections: Sequence[str] | None) -> list[bool]:
    if sections is None:
        return [True] * len(lines)
    inside, flags = False, []
    for line in lines:
        if line.startswith("## "):
            inside = any(line[3:].startswith(s) for s in sections)
        flags.append(inside)
    return flags


def stray_figures(text: str, sections: Sequence[str] | None) -> list[tuple[int, str]]:
    r"""``(line, figure)`` for each figure in the results sections that no marker renders.

    A table row with a decimal number counts whole; in prose, a number with three or more
    decimals or a ratio (``46x``, ``2.9x``).

    Examples
    --------
    >>> text = "## Results\nIt is 46x faster, AUROC 0.811.\n| a | 0.5 |\n## Other\n0.123\n"
    >>> stray_figures(text, ["Results"])
    [(2, '46x'), (2, '0.811'), (3, '| a | 0.5 |')]
    >>> stray_figures("<!-- ev:x/a:.3f -->0.811<!-- /ev --> and 0.5", None)
    []
    """
    masked = _mask(text).splitlines()
    original = text.splitlines()
    # headings are read from the text itself: a masked fence cannot hide a section change
    flags = _in_sections(original, sections)
    found = []
    for n, (line, inside) in enumerate(zip(masked, flags, strict=True), 1):
        if not inside:
            continue
        if line.lstrip().startswith("|"):
            if _TABLE_FIGURE.search(line):
                found.append((n, line.strip()))
            continue
        found += [(n, m.group(0)) for m in _PROSE_FIGURE.finditer(line)]
    return found


def used(texts: Iterable[str], views: Mapping[str, View] = VIEWS) -> tuple[set[str], set[str]]:
    """The view ids and the evidence names the markers of ``texts`` use."""
    view_ids: set[str] = set()
    names: set[str] = set()
    for text in texts:
        for m in BLOCK.finditer(text):
            view_ids.add(m["id"])
            if m["id"] in views:
                names.update(views[m["id"]].sources)
        names.update(m["path"].split("/", 1)[0] for m in INLINE.finditer(text))
    return view_ids, names


def _scan_key(doc: Path, root: Path) -> str:
    try:
        return doc.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return doc.name


def check(
    docs: Sequence[Path],
    root: Path = REPO,
    evidence_dir: Path = EVIDENCE_DIR,
    complete: bool = True,
    views: Mapping[str, View] = VIEWS,
    scanned: Mapping[str, Sequence[str] | None] = SCANNED,
) -> list[str]:
    """Every problem of ``docs`` against ``evidence_dir``, one line each (empty: none).

    ``complete`` also reports evidence files and views that none of ``docs`` uses (true for
    the default set of docs, which must use them all). ``scanned`` names the results
    sections of each doc by its path under ``root`` (a doc it does not name is not scanned).
    """
    problems: list[str] = []
    try:
        evidence = load_all(evidence_dir)
    except EvidenceError as exc:
        return [str(exc)]
    texts = {}
    for doc in docs:
        key = _scan_key(doc, root)
        text = doc.read_text(encoding="utf-8")
        texts[key] = text
        rendered = render_text(text, evidence, views, problems=problems, where=f"{key}: ")
        if rendered != text:
            old, new = text.splitlines(), rendered.splitlines()
            first = next(
                (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b),
                min(len(old), len(new)),
            )
            problems.append(
                f"{key}:{first + 1}: differs from evidence/ (run python scripts/render_evidence.py)"
            )
        for n, fig in stray_figures(text, scanned.get(key, ())):
            problems.append(f"{key}:{n}: figure not rendered from evidence/: {fig}")
    if complete:
        view_ids, names = used(texts.values(), views)
        problems += [f"evidence/{n}.json: used by no doc" for n in sorted(set(evidence) - names)]
        problems += [f"view {v!r}: used by no doc" for v in sorted(set(views) - view_ids)]
    return problems


def main(argv: list[str] | None = None) -> int:
    """Render (or ``--check``) the docs; the exit status is 1 when ``--check`` finds drift."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("docs", nargs="*", type=Path, help="Markdown files (default: the docs)")
    parser.add_argument("--check", action="store_true", help="report drift, write nothing")
    parser.add_argument("--list", action="store_true", help="list the views and their sources")
    args = parser.parse_args(argv)
    if args.list:
        for v in VIEWS.values():
            print(f"{v.id:<32} " + ", ".join(f"evidence/{s}.json" for s in v.sources))
        return 0
    docs = args.docs or default_docs()
    if args.check:
        problems = check(docs, complete=not args.docs)
        for p in problems:
            print(p)
        print(f"{len(problems)} problem(s) in {len(docs)} file(s)" if problems else "no drift")
        return 1 if problems else 0
    evidence = load_all()
    problems = []
    for doc in docs:
        text = doc.read_text(encoding="utf-8")
        rendered = render_text(text, evidence, problems=problems, where=f"{doc}: ")
        if rendered != text:
            doc.write_text(rendered, encoding="utf-8")
            print(f"rendered {doc}")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
