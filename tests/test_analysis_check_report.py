"""Tests of s3kg_core.analysis.check_report: the Markdown summary and the JUnit XML, on real
checks and on hostile names."""

from __future__ import annotations

import doctest
import re
import xml.etree.ElementTree as ET

import pandas as pd
import pytest
from markdown_it import MarkdownIt

import s3kg_core.analysis.check_report as report_module
from s3kg_core.analysis.check import CheckResult, CheckSettings, Gate, check_runs
from s3kg_core.analysis.check_report import JUNIT_CLASSNAME, junit_xml, markdown_summary

GFM = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
HOSTILE = "<img src=x onerror=alert(1)> | **b** [l](http://127.0.0.1:9/) `c`\n# h \x01\ud800"

# The common JUnit schema (Jenkins' junit-10.xsd, which pytest validates its own output
# against): which children and attributes each element may have, which are required, and the
# form of ``time``.
_CHILDREN = {
    "testsuites": {"testsuite"},
    "testsuite": {"testsuite", "properties", "testcase", "system-out", "system-err"},
    "properties": {"property"},
    "property": set(),
    "testcase": {"skipped", "error", "failure", "system-out", "system-err"},
    "failure": set(),
    "system-out": set(),
}
_ATTRIBUTES = {
    "testsuites": ({"name", "time", "tests", "failures", "errors"}, set()),
    "testsuite": (
        {"name", "tests", "failures", "errors", "group", "time", "skipped", "timestamp",
         "hostname", "id", "package", "file", "log", "url", "version"},
        {"name", "tests", "failures", "errors"},
    ),
    "properties": (set(), set()),
    "property": ({"name", "value"}, {"name", "value"}),
    "testcase": ({"name", "time", "classname", "group"}, {"name"}),
    "failure": ({"type", "message"}, set()),
    "system-out": (set(), set()),
}  # fmt: skip
_TIME = re.compile(r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]{0,3})?")


def _junit_problems(text: str) -> list[str]:
    root = ET.fromstring(text.encode("utf-8"))  # raises on XML that is not well formed
    problems = [] if root.tag == "testsuites" else [f"root {root.tag}"]
    for element in root.iter():
        allowed, required = _ATTRIBUTES.get(element.tag, (set(), set()))
        if element.tag not in _ATTRIBUTES:
            problems.append(f"unknown element {element.tag}")
        problems += [f"{element.tag}@{a}" for a in set(element.attrib) - allowed]
        problems += [f"{element.tag} lacks @{a}" for a in required - set(element.attrib)]
        problems += [
            f"{element.tag} holds {child.tag}"
            for child in element
            if child.tag not in _CHILDREN.get(element.tag, set())
        ]
        time = element.attrib.get("time")
        if time is not None and element.tag != "testcase" and not _TIME.fullmatch(time):
            problems.append(f"{element.tag}@time {time!r}")
    for suite in root.iter("testsuite"):
        cases = suite.findall("testcase")
        if int(suite.attrib["tests"]) != len(cases):
            problems.append("tests count")
        failed = sum(1 for case in cases if case.find("failure") is not None)
        if int(suite.attrib["failures"]) != failed:
            problems.append("failures count")
    return problems


def test_the_module_doctests_pass():
    result = doctest.testmod(report_module)
    assert result.attempted >= 2 and result.failed == 0


def test_the_schema_checker_catches_what_the_schema_refuses():
    assert _junit_problems('<testsuites><testsuite name="s" tests="1" failures="0" errors="0">'
                           '<testcase name="c" /></testsuite></testsuites>') == []  # fmt: skip
    bad = (
        '<testsuites><testsuite name="s" tests="2" failures="0" time="1.23456">'
        '<testcase file="x"><failure/><note/></testcase></testsuite></testsuites>'
    )
    assert sorted(_junit_problems(bad)) == sorted(
        [
            "testsuite lacks @errors",
            "testsuite@time '1.23456'",
            "testcase@file",
            "testcase lacks @name",
            "testcase holds note",
            "unknown element note",
            "tests count",
            "failures count",
        ]
    )


@pytest.fixture(scope="module")
def failed_check(check_store):
    return check_runs(check_store, "broken", "baseline", settings=CheckSettings(resamples=999))


@pytest.fixture(scope="module")
def passed_check(check_store):
    return check_runs(check_store, "steady", "baseline", settings=CheckSettings(resamples=999))


def test_junit_has_one_case_per_gate_and_a_failure_in_each_failed_one(failed_check):
    text = junit_xml(failed_check)
    assert _junit_problems(text) == []
    root = ET.fromstring(text)
    suite = root.find("testsuite")
    cases = {c.attrib["name"]: c for c in suite.findall("testcase")}
    assert list(cases) == [g.name for g in failed_check.gates]
    assert {c.attrib["classname"] for c in cases.values()} == {JUNIT_CLASSNAME}
    failure = cases["new_unscorable"].find("failure")
    assert failure.attrib["type"] == "GateFailed"
    assert failure.attrib["message"].startswith(
        "Answers that became unscorable: 3 of 16 in the baseline"
    )
    assert "0003: kg_extraction_failed" in failure.text
    assert [n for n, c in cases.items() if c.find("failure") is not None] == ["new_unscorable"]
    properties = {p.attrib["name"]: p.attrib["value"] for p in suite.iter("property")}
    assert properties["dataset"] == "trial"
    assert properties["signature"].startswith("mode:")
    assert (root.attrib["tests"], root.attrib["failures"], root.attrib["errors"]) == ("4", "1", "0")


def test_junit_of_a_passing_check_has_no_failure(passed_check):
    text = junit_xml(passed_check)
    assert _junit_problems(text) == []
    assert "<failure" not in text
    assert ET.fromstring(text).attrib["failures"] == "0"


def test_markdown_of_a_failed_and_a_passed_check(failed_check, passed_check):
    text = markdown_summary(failed_check)
    assert text.startswith("### ❌ s3kg check failed: 1 of 4 gates\n")
    html = GFM.render(text)
    assert html.count("<table>") == 3  # gates, regressions, became unscorable
    assert "<td>Answers that became unscorable</td>\n<td>❌ fail</td>" in html
    assert "<td>0003</td>" in html and "kg_extraction_failed" in html
    assert "<details><summary>Biggest regressions</summary>" in html
    ok = markdown_summary(passed_check)
    assert ok.startswith("### ✅ s3kg check passed: 4 gates\n")
    assert "⚠️ pass (inconclusive)" in ok  # the steady run's CUS interval reaches past -0.02


def _hostile_result() -> CheckResult:
    gate = Gate("cus_drop", f"CUS {HOSTILE}", False, HOSTILE, HOSTILE, HOSTILE, -0.5)
    text = pd.Series([HOSTILE], dtype=object)  # a lone surrogate fits no arrow string
    rows = pd.DataFrame(
        {"id": text, "question": text, "baseline": [0.9], "new": [0.1], "change": [-0.8]}
    )
    lost = pd.DataFrame({"id": text, "question": text, "baseline": [None], "new": text})
    return CheckResult(HOSTILE, (gate,), (("run", HOSTILE),), rows, lost, 0.25)


def test_hostile_names_stay_text_in_the_markdown():
    html = GFM.render(markdown_summary(_hostile_result()))
    assert "<img" not in html and "<a href" not in html and "<strong>" not in html
    assert "<h1>" not in html
    # every table keeps its columns: a | of a name does not split a cell
    for table in re.findall(r"<table>.*?</table>", html, re.DOTALL):
        rows = re.findall(r"<tr>(.*?)</tr>", table, re.DOTALL)
        widths = {row.count("<td>") + row.count("<th>") for row in rows}
        assert len(widths) == 1, table
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_hostile_names_make_valid_junit():
    text = junit_xml(_hostile_result())
    assert _junit_problems(text) == []
    case = ET.fromstring(text).find("testsuite/testcase")
    message = case.find("failure").attrib["message"]
    assert "<img src=x onerror=alert(1)>" in message  # kept as text, escaped by the writer
    assert "\ufffd" in message and "\x01" not in message  # not XML 1.0: replaced
