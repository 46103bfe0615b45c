"""Tests of the documentation (README.md, bench/README.md) against the ``s3kg`` command line.

Every ``s3kg ...`` command line the READMEs show, in ```bash blocks and inline in backticks,
names a command that exists and answers ``--help``, and every ``--option`` shown for it is an
option of that command (the way sqlite-utils tests its docs).
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from s3kg_core.cli import cli

REPO = Path(__file__).resolve().parents[1]
DOCS = ("README.md", "bench/README.md")

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
_INLINE = re.compile(r"`([^`]+)`")
_OPTION = re.compile(r"--[a-z][a-z0-9-]*")


def shown_commands(text: str) -> list[tuple[str, str]]:
    """The ``s3kg ...`` command lines of a Markdown text as ``(kind, line)``.

    ``kind`` is ``"block"`` for a line of a ```bash block (a whole command line, continuation
    lines joined) and ``"inline"`` for an inline span (which may name a command and only some of
    its options).
    """
    lines = []
    for lang, body in _FENCE.findall(text):
        if lang not in ("bash", "sh", "console"):
            continue
        for line in body.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s#.*$", "", line.strip().removeprefix("$ "))
            if line.startswith("s3kg "):
                lines.append(("block", " ".join(line.split())))
    prose = _FENCE.sub("", text)
    for span in _INLINE.findall(prose):
        span = " ".join(span.split())
        if span.startswith("s3kg "):
            lines.append(("inline", span))
    return lines


def resolve(line: str) -> tuple[list[str], click.Command]:
    """The command path a line names (its words while they name a subcommand) and the command."""
    path: list[str] = []
    command: click.Command = cli
    for word in line.split()[1:]:
        if not isinstance(command, click.Group) or word not in command.commands:
            break
        path.append(word)
        command = command.commands[word]
    return path, command


def option_names(command: click.Command) -> set[str]:
    """Every long option name of a command, ``--help`` included."""
    names = {"--help"}
    for param in command.params:
        if isinstance(param, click.Option):
            names.update(o for o in (*param.opts, *param.secondary_opts) if o.startswith("--"))
    return names


def shown_values(line: str, command: click.Command) -> list[tuple[click.Option, str, str]]:
    """``(option, name, value)`` for every ``--option VALUE`` a line shows (brackets dropped)."""
    by_name = {o: p for p in command.params if isinstance(p, click.Option) for o in p.opts}
    words = line.replace("[", " ").replace("]", " ").split()
    return [
        (by_name[name], name, value)
        for name, value in itertools.pairwise(words)
        if name in by_name and not by_name[name].is_flag and not value.startswith("-")
    ]


def _examples() -> list[tuple[str, str, str]]:
    return [
        (doc, kind, line)
        for doc in DOCS
        for kind, line in shown_commands((REPO / doc).read_text(encoding="utf-8"))
    ]


EXAMPLES = _examples()
IDS = [f"{doc}:{line[:60]}" for doc, _, line in EXAMPLES]
BLOCKS = [example for example in EXAMPLES if example[1] == "block"]


def test_the_readmes_show_commands():
    # The parser finds both kinds: a bash block's lines and inline spans.
    readme = [(kind, line) for doc, kind, line in EXAMPLES if doc == "README.md"]
    assert ("inline", "s3kg score") in readme
    assert any(line.startswith("s3kg pairs score INPUT.csv --output") for _, line in readme)
    assert len(readme) > 20


def test_shown_commands_parser():
    text = (
        "Run `s3kg score --db\nX`, not `python x`.\n\n"
        "```bash\n"
        "export A=1\n"
        "s3kg pairs score IN.csv --output OUT.csv \\\n    [--alpha A]   # a comment\n"
        "$ s3kg cus --db runs.duckdb\n"
        "```\n\n"
        "```python\ns3kg score --not-this\n```\n"
    )
    assert shown_commands(text) == [
        ("block", "s3kg pairs score IN.csv --output OUT.csv [--alpha A]"),
        ("block", "s3kg cus --db runs.duckdb"),
        ("inline", "s3kg score --db X"),
    ]


@pytest.mark.parametrize(("doc", "kind", "line"), EXAMPLES, ids=IDS)
def test_shown_command_exists_and_answers_help(doc, kind, line):
    path, _ = resolve(line)
    assert path, f"{doc}: `{line}` names no s3kg command"
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0, f"{doc}: s3kg {' '.join(path)} --help: {result.output}"


@pytest.mark.parametrize(("doc", "kind", "line"), EXAMPLES, ids=IDS)
def test_shown_options_exist(doc, kind, line):
    path, command = resolve(line)
    unknown = sorted(set(_OPTION.findall(line)) - option_names(command))
    assert not unknown, f"{doc}: `s3kg {' '.join(path)}` has no {', '.join(unknown)}: `{line}`"


@pytest.mark.parametrize(("doc", "kind", "line"), EXAMPLES, ids=IDS)
def test_shown_choices_exist(doc, kind, line):
    # ``--mode hybrid|paper|kgx``: every alternative shown is a choice of the option.
    _, command = resolve(line)
    wrong = [
        f"{name} {value}"
        for option, name, value in shown_values(line, command)
        if isinstance(option.type, click.Choice)
        and not set(value.split("|")) <= set(option.type.choices)
    ]
    assert not wrong, f"{doc}: `{line}` shows values the command refuses: {wrong}"


BLOCK_IDS = [f"{doc}:{line[:60]}" for doc, _, line in BLOCKS]


@pytest.mark.parametrize(("doc", "kind", "line"), BLOCKS, ids=BLOCK_IDS)
def test_shown_command_lines_give_the_required_options(doc, kind, line):
    _, command = resolve(line)
    shown = set(_OPTION.findall(line))
    missing = [
        param.opts[0]
        for param in command.params
        if isinstance(param, click.Option) and param.required and not shown & set(param.opts)
    ]
    assert not missing, f"{doc}: `{line}` leaves out the required {missing}"


def _all_options(command: click.Command) -> set[str]:
    names = option_names(command)
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            names |= _all_options(sub)
    return names


# Options in README prose that belong to other tools: pip, transformers serve.
OTHER_TOOLS = {"--no-deps", "--device"}


def test_options_named_in_prose_exist():
    # Outside command lines the README names options alone (`--batch-items`) or on a script
    # (`python bench/bench_variants.py --no-reverse`): each must exist on some s3kg command,
    # or in the script it is shown with.
    text = (REPO / "README.md").read_text(encoding="utf-8")
    known = _all_options(cli) | OTHER_TOOLS
    wrong = []
    for span in _INLINE.findall(_FENCE.sub("", text)):
        span = " ".join(span.split())
        if span.startswith("s3kg "):
            continue
        script = re.search(r"bench/\w+\.py", span)
        for name in _OPTION.findall(span):
            if script is not None:
                if name not in (REPO / script.group()).read_text(encoding="utf-8"):
                    wrong.append(f"{name} ({script.group()})")
            elif name not in known:
                wrong.append(name)
    assert not wrong, f"README.md names options that do not exist: {wrong}"
