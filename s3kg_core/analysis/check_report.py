"""The outputs of ``s3kg check``: a Markdown summary for a CI job, and JUnit XML.

The Markdown is GitHub-flavoured (a job summary, a pull-request comment): a verdict heading,
a table of the gates, what was compared, the biggest regressions and the answers that became
unscorable. Every name, id and question in it comes from users or models and is escaped
(:mod:`s3kg_core.escape`); in tables as escaped text, never as code spans (GFM splits a table
cell at a ``|`` even inside a code span). The JUnit XML has one ``testsuite`` with one
``testcase`` per gate and a ``failure`` in each failed one, the facts as ``properties``; it
follows the common JUnit
schema (Jenkins' ``junit-10.xsd``, which GitLab, GitHub test reporters and pytest read):
``testsuites`` > ``testsuite`` (name, tests, failures, errors, skipped, time) > ``testcase``
(name, classname, time) > ``failure`` (type, message). Characters XML 1.0 cannot hold
(control characters, lone surrogates) become U+FFFD.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from ..escape import code, md
from .check import CheckResult

__all__ = ["JUNIT_CLASSNAME", "junit_xml", "markdown_summary"]

JUNIT_CLASSNAME = "s3kg.check"
"""The ``classname`` of every JUnit test case (CI tools group cases by it)."""

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_QUESTION_CHARS = 90


def _xml(text: object) -> str:
    """``text`` with every character XML 1.0 cannot hold replaced by U+FFFD."""
    return _NOT_XML.sub("\ufffd", str(text))


def _short(text: str, limit: int = _QUESTION_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "\u2026"


def markdown_summary(result: CheckResult) -> str:
    r"""The check as GitHub-flavoured Markdown (every user string escaped).

    Examples
    --------
    >>> from s3kg_core.analysis.check import CheckResult, Gate
    >>> gate = Gate("min_cus", "Mean CUS", False, "0.41 over 9 answers", "the mean is below 0.5")
    >>> print(markdown_summary(CheckResult("m|1 (run 2)", (gate,), (("dataset", "d"),))))
    ... # doctest: +NORMALIZE_WHITESPACE
    ### ❌ s3kg check failed: 1 of 1 gates
    <BLANKLINE>
    m\|1 \(run 2\)
    <BLANKLINE>
    | Gate | Result | Measured | Fails when |
    |---|---|---|---|
    | Mean CUS | ❌ fail | 0\.41 over 9 answers | the mean is below 0\.5 |
    <BLANKLINE>
    - dataset: `d`
    """
    if result.passed:
        heading = f"### ✅ s3kg check passed: {len(result.gates)} gates"
    else:
        heading = f"### ❌ s3kg check failed: {len(result.failed)} of {len(result.gates)} gates"
    lines = [heading, "", md(result.title), ""]
    lines += ["| Gate | Result | Measured | Fails when |", "|---|---|---|---|"]
    for gate in result.gates:
        mark = (
            "❌ fail"
            if not gate.passed
            else "⚠️ pass (inconclusive)"
            if gate.inconclusive
            else "✅ pass"
        )
        lines.append(f"| {md(gate.title)} | {mark} | {md(gate.measured)} | {md(gate.rule)} |")
    notes = [g for g in result.gates if g.detail]
    if notes:
        lines.append("")
        lines += [f"- {md(g.title)}: {md(g.detail)}" for g in notes]
    lines.append("")
    lines += [f"- {md(label)}: {code(value)}" for label, value in result.facts]
    if len(result.regressions):
        lines += [
            "",
            "<details><summary>Biggest regressions</summary>",
            "",
            "| Id | Question | Baseline | New | Change |",
            "|---|---|---|---|---|",
        ]
        for row in result.regressions.itertuples():
            lines.append(
                f"| {md(row.id)} | {md(_short(str(row.question)))} | {row.baseline:.3f} | "
                f"{row.new:.3f} | {row.change:+.3f} |"
            )
        lines += ["", "</details>"]
    if len(result.unscorable):
        lines += [
            "",
            "<details><summary>Became unscorable</summary>",
            "",
            "| Id | Question | Baseline | New |",
            "|---|---|---|---|",
        ]
        for row in result.unscorable.head(50).itertuples():
            lines.append(
                f"| {md(row.id)} | {md(_short(str(row.question)))} | "
                f"{md(row.baseline or 'ok')} | {md(row.new)} |"
            )
        if len(result.unscorable) > 50:
            lines.append(f"\n{len(result.unscorable) - 50} more.")
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def junit_xml(result: CheckResult) -> str:
    """The check as JUnit XML: one test case per gate, a ``failure`` in each failed one.

    Examples
    --------
    >>> from s3kg_core.analysis.check import CheckResult, Gate
    >>> gate = Gate("min_cus", "Mean CUS", False, "0.41 over 9 answers", "the mean is below 0.5")
    >>> text = junit_xml(CheckResult("m (run 2)", (gate,), (("dataset", "d"),)))
    >>> print(text.splitlines()[1])
    <testsuites name="s3kg check" tests="1" failures="1" errors="0" time="0.000">
    """
    total = f"{result.seconds:.3f}"
    counts = {
        "tests": str(len(result.gates)),
        "failures": str(len(result.failed)),
        "errors": "0",
    }
    root = ET.Element("testsuites", {"name": "s3kg check", **counts, "time": total})
    suite = ET.SubElement(
        root,
        "testsuite",
        {"name": _xml(f"s3kg check: {result.title}"), **counts, "skipped": "0", "time": total},
    )
    properties = ET.SubElement(suite, "properties")
    for label, value in result.facts:
        ET.SubElement(properties, "property", {"name": _xml(label), "value": _xml(value)})
    for gate in result.gates:
        case = ET.SubElement(
            suite,
            "testcase",
            {"name": _xml(gate.name), "classname": JUNIT_CLASSNAME, "time": "0.000"},
        )
        text = f"{gate.title}: {gate.measured}; fails when {gate.rule}"
        if not gate.passed:
            failure = ET.SubElement(case, "failure", {"type": "GateFailed", "message": _xml(text)})
            failure.text = _xml("\n".join(filter(None, [text, gate.detail])))
        elif gate.detail:
            ET.SubElement(case, "system-out").text = _xml(f"{text}\n{gate.detail}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
