"""Tests of the documentation against the code: the docs' commands, library names, layout.

Every ``s3kg ...`` command line the READMEs and the docs site's pages show, in ```bash blocks
and inline in backticks, names a command that exists and answers ``--help``, and every
``--option`` shown for it is an option of that command (the way sqlite-utils tests its docs).
Every ``s3kg_core.x.y`` name and ``s3kg_core/...`` path that the docs, docstrings and help texts
mention exists; the "Layout" of docs/contributing.md names every top-level file and folder and
every package and module; README.md's library example runs, and so does the CI recipe of
docs/runs.md.
"""

from __future__ import annotations

import ast
import csv
import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import click
import duckdb
import pytest
from click.testing import CliRunner

from s3kg_core.cli import cli

REPO = Path(__file__).resolve().parents[1]
# the READMEs and every page of the docs site (docs/, issue 34)
SITE_PAGES = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "docs").rglob("*.md"))
DOCS = ("README.md", "bench/README.md", *SITE_PAGES)

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
        if lang not in ("bash", "sh", "console", "yaml"):  # yaml: a CI job's `run:` lines
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


def _by_command() -> dict[str, list[tuple[str, str, str]]]:
    """The examples grouped by the command they name (``"pairs score"``; ``""``: none)."""
    groups: dict[str, list[tuple[str, str, str]]] = {}
    for doc, kind, line in EXAMPLES:
        groups.setdefault(" ".join(resolve(line)[0]), []).append((doc, kind, line))
    return groups


BY_COMMAND = _by_command()
SHOWN_COMMANDS = sorted(name for name in BY_COMMAND if name)


def test_the_readmes_show_commands():
    # The parser finds both kinds: a bash block's lines and inline spans.
    readme = [(kind, line) for doc, kind, line in EXAMPLES if doc == "README.md"]
    assert ("inline", "s3kg score") in readme
    assert any(line.startswith("s3kg pairs score INPUT.csv --output") for _, line in readme)
    assert len(readme) > 15
    # issue 34: the README's details moved to the docs site, where they are checked the same way
    assert len(EXAMPLES) > 150


def test_the_docs_site_pages_show_commands():
    # issue 34: the docs site's pages are checked like the READMEs
    pages = {doc for doc, _, _ in EXAMPLES if doc.startswith("docs/")}
    assert {"docs/getting-started.md", "docs/own-data.md", "docs/dashboard.md"} <= pages
    own = [line for doc, kind, line in EXAMPLES if doc == "docs/own-data.md" and kind == "block"]
    assert [line.split()[1] for line in own if line.split()[1] != "import"][:7] == [
        "collect",
        "collect",  # --local (issue 58)
        "llm",
        "collect",
        "extract",
        "extract",
        "score",
    ]


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


def test_every_shown_command_line_names_a_command():
    wrong = [f"{doc}: `{line}` names no s3kg command" for doc, _, line in BY_COMMAND.get("", [])]
    assert not wrong, "\n".join(wrong)


def line_problems(doc: str, kind: str, line: str, command: click.Command) -> list[str]:
    """What a shown line gets wrong about its command: options it does not have, values its
    choices refuse, and (a whole command line, ``kind == "block"``) required options left out."""
    problems = []
    unknown = sorted(set(_OPTION.findall(line)) - option_names(command))
    if unknown:
        problems.append(f"has no {', '.join(unknown)}")
    # ``--mode hybrid|paper|kgx``: every alternative shown is a choice of the option.
    refused = [
        f"{name} {value}"
        for option, name, value in shown_values(line, command)
        if isinstance(option.type, click.Choice)
        and not set(value.split("|")) <= set(option.type.choices)
    ]
    if refused:
        problems.append(f"shows values the command refuses: {refused}")
    if kind == "block":
        shown = set(_OPTION.findall(line))
        missing = [
            param.opts[0]
            for param in command.params
            if isinstance(param, click.Option) and param.required and not shown & set(param.opts)
        ]
        if missing:
            problems.append(f"leaves out the required {missing}")
    return [f"{doc}: `{line}` {problem}" for problem in problems]


def test_line_problems_names_each_fault():
    _, score = resolve("s3kg pairs score")
    assert line_problems("d.md", "inline", "s3kg pairs score --alpha 0.5", score) == []
    bad = "s3kg pairs score IN.csv --nope x --mode fast"
    assert line_problems("d.md", "block", bad, score) == [
        f"d.md: `{bad}` has no --nope",
        f"d.md: `{bad}` shows values the command refuses: ['--mode fast']",
        f"d.md: `{bad}` leaves out the required ['--output']",
    ]
    assert line_problems("d.md", "inline", bad, score)[2:] == []  # a span may leave options out


@pytest.mark.parametrize("name", SHOWN_COMMANDS)
def test_a_shown_command_answers_help_and_takes_what_each_line_shows(name):
    # Every line that names the command: its options exist, its values are choices, and a whole
    # command line gives the required options; each failing line is named.
    examples = BY_COMMAND[name]
    _, command = resolve(f"s3kg {name}")
    result = CliRunner().invoke(cli, [*name.split(), "--help"])
    doc, _, line = examples[0]
    assert result.exit_code == 0, f"{doc}: `{line}`: s3kg {name} --help: {result.output}"
    problems = [p for doc, kind, line in examples for p in line_problems(doc, kind, line, command)]
    assert not problems, "\n".join(problems)


def _all_options(command: click.Command) -> set[str]:
    names = option_names(command)
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            names |= _all_options(sub)
    return names


# Options in README prose that belong to other tools: pip, transformers serve, mkdocs, pytest.
OTHER_TOOLS = {"--no-deps", "--device", "--strict", "--extra-index-url", "--durations"}


def test_options_named_in_prose_exist():
    # Outside command lines the README names options alone (`--batch-items`) or on a script
    # (`python -m bench.experiments.bench_variants --no-reverse`): each must exist on some s3kg
    # command, or in the script it is shown with.
    text = "\n".join(
        (REPO / doc).read_text(encoding="utf-8") for doc in DOCS if doc != "bench/README.md"
    )
    known = _all_options(cli) | OTHER_TOOLS
    wrong = []
    for span in _INLINE.findall(_FENCE.sub("", text)):
        span = " ".join(span.split())
        if span.startswith("s3kg "):
            continue
        script = re.search(r"(?:bench|scripts)/(?:\w+/)*\w+\.py|-m (bench(?:\.\w+)+)", span)
        for name in _OPTION.findall(span):
            if script is not None:
                path = (
                    script.group(1).replace(".", "/") + ".py" if script.group(1) else script.group()
                )
                if name not in (REPO / path).read_text(encoding="utf-8"):
                    wrong.append(f"{name} ({path})")
            elif name not in known:
                wrong.append(name)
    assert not wrong, f"README.md or docs/ names options that do not exist: {wrong}"


# -- library paths and the layout ----------------------------------------------------------------

LIBRARY = REPO / "s3kg_core"
# Where library names are mentioned: the READMEs, and the docstrings, comments and --help texts
# of the code (tests are left out: test_layout.py writes fake packages named s3kg_core).
MENTIONS = (
    "README.md",
    "bench/README.md",
    "docs",
    "app.py",
    "s3kg_core",
    "dashboard",
    "pages",
    "bench",
    "docsgen",
)
_DOTTED = re.compile(r"\bs3kg_core(?:\.[A-Za-z_]\w*)+")
_PATH = re.compile(r"\bs3kg_core/[\w/]*[\w.]*\w")


def _module_paths() -> dict[str, Path]:
    modules = {}
    for path in sorted(LIBRARY.rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _names(body: list[ast.stmt]) -> set[str]:
    """The names a module or class body defines (functions, classes, assignments, imports)."""
    names: set[str] = set()
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.If | ast.Try):
            names |= _names(node.body) | _names(getattr(node, "orelse", []))
    return names


def _resolves(ref: str, modules: dict[str, Path]) -> bool:
    """Whether ``s3kg_core.a.b.c`` names a module, or a name defined in one (read with ast)."""
    parts = ref.split(".")
    for i in range(len(parts), 0, -1):
        module = ".".join(parts[:i])
        if module not in modules:
            continue
        rest = parts[i:]
        if not rest:
            return True
        body = ast.parse(modules[module].read_text(encoding="utf-8")).body
        if rest[0] not in _names(body):
            return False
        if len(rest) > 1:  # Class.attribute: the class must define it
            classes = [n for n in body if isinstance(n, ast.ClassDef) and n.name == rest[0]]
            return not classes or rest[1] in _names(classes[0].body)
        return True
    return False


def _mention_files() -> list[Path]:
    files = []
    for name in MENTIONS:
        path = REPO / name
        pattern = "*.md" if name == "docs" else "*.py"  # the docs site's pages
        files += sorted(path.rglob(pattern)) if path.is_dir() else [path]
    return [f for f in files if "out" not in f.relative_to(REPO).parts]


def test_library_names_in_docs_and_docstrings_exist():
    # `s3kg_core.llm.serve.transformers_serve`, `s3kg_core/evaluation/splits.py`: each dotted name
    # and path that the READMEs, docstrings and help texts mention exists in the layout.
    modules = _module_paths()
    wrong = []
    for path in _mention_files():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{path.relative_to(REPO)}:{n}"
            for match in _DOTTED.finditer(line):
                ref = match.group().removesuffix(".py").removesuffix(".json")
                if line[match.end() : match.end() + 1] != "/" and not _resolves(ref, modules):
                    wrong.append(f"{where}: {ref}")
            wrong += [
                f"{where}: {m.group()}"
                for m in _PATH.finditer(line)
                if not (REPO / m.group()).exists()
            ]
    assert not wrong, "names of the old layout (or of nothing):\n" + "\n".join(wrong)


def test_the_name_resolver():
    modules = _module_paths()
    assert _resolves("s3kg_core.scoring.s3kg.KGScorer.score_pairs", modules)
    assert _resolves("s3kg_core.KGScorer", modules)  # exported from the root
    assert _resolves("s3kg_core.grapheval.checkers", modules)
    assert not _resolves("s3kg_core.s3kg.KGScorer", modules)  # the flat layout's module
    assert not _resolves("s3kg_core.scoring.s3kg.KGScorer.no_such_method", modules)
    assert not _resolves("s3kg_core.llm.no_such_name", modules)


# The layout is on the contributing page of the docs site (issue 34: moved from README.md).
LAYOUT_PAGE = "docs/contributing.md"


def _layout_block() -> str:
    text = (REPO / LAYOUT_PAGE).read_text(encoding="utf-8")
    match = re.search(r"^## Layout\n\n[^`]*```\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    assert match, f"{LAYOUT_PAGE} has no Layout section with a code block"
    return match.group(1)


def _layout_entries() -> dict[str, str]:
    """``{"scoring/": "s3kg (...), wl, ...", "kg.py": "..."}`` for the lines under s3kg_core/."""
    entries: dict[str, str] = {}
    inside, current = False, None
    for line in _layout_block().splitlines():
        if line.startswith("s3kg_core/"):
            inside = True
            continue
        if inside and line.startswith("  ") and not line.startswith("   "):
            current, _, text = line.strip().partition(" ")
            entries[current] = text.strip()
        elif inside and line.startswith("   ") and current is not None:
            entries[current] += " " + line.strip()
        elif inside:
            break
    return entries


def test_the_layout_names_every_top_level_file_and_script():
    # every file and folder git tracks at the top, and every script of scripts/
    import subprocess

    tracked = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    tops = {p.split("/")[0] + ("/" if "/" in p else "") for p in tracked}
    block = _layout_block()
    named = {line.split()[0] for line in block.splitlines() if line and not line[0].isspace()}
    missing = sorted(t for t in tops if t not in named and not any(n.startswith(t) for n in named))
    assert not missing, f"{LAYOUT_PAGE}'s Layout does not name {missing}"
    scripts = sorted(p.name for p in (REPO / "scripts").glob("*.py"))
    assert scripts and not [s for s in scripts if s not in block], scripts


def test_readme_layout_is_the_layout():
    entries = _layout_entries()
    packages = sorted(
        f"{p.name}/" for p in LIBRARY.iterdir() if (p / "__init__.py").is_file()
    )  # the subpackages
    top_modules = sorted(p.name for p in LIBRARY.glob("*.py") if not p.name.startswith("_"))
    assert sorted(entries) == sorted(packages + top_modules)
    # each package's line names each of its public modules and subpackages
    missing = []
    for package in packages:
        folder = LIBRARY / package
        members = [p.stem for p in folder.glob("*.py") if not p.name.startswith("_")]
        members += [f"{p.name}/" for p in folder.iterdir() if (p / "__init__.py").is_file()]
        words = set(re.findall(r"[\w/]+", entries[package]))
        missing += [f"{package}{m}" for m in members if m not in words]
    assert not missing, f"{LAYOUT_PAGE}'s Layout does not name {missing}"


def test_readme_library_example_runs(minilm):
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start 3", 1)[1]
    match = re.search(r"^```python\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    assert match, "README.md has no library example in its third quick start"
    namespace: dict[str, object] = {}
    exec(compile(match.group(1), "README.md (Quick start 3)", "exec"), namespace)
    assert namespace["r"].score > 0  # type: ignore[attr-defined]


def test_the_docs_site_python_examples_run(minilm):
    # issue 34: every ```python block of the docs site's pages runs as shown
    blocks = [
        (page, body)
        for page in SITE_PAGES
        for lang, body in _FENCE.findall((REPO / page).read_text(encoding="utf-8"))
        if lang == "python"
    ]
    assert any(page == "docs/getting-started.md" for page, _ in blocks)
    for page, body in blocks:
        namespace: dict[str, object] = {}
        exec(compile(body, page, "exec"), namespace)


# Issue 17: where the docs specify kgx (docs/scores.md since issue 34), they say what `--mode`'s
# help says: like the released code, kgx scores a KG whose two labels embed identically below 1
# against itself (the value is pinned by test_scoring_s3kg.py).
def test_the_modes_say_kgx_scores_a_kg_below_one_against_itself():
    text = (REPO / "docs" / "scores.md").read_text(encoding="utf-8")
    modes = " ".join(text.split("### Modes", 1)[1].split("\n### ", 1)[0].split())
    assert '`[["😀","r","💧"]]` against itself has S_WL 0.154 in `kgx`' in modes


# Issue 17 (D11a): the exit status rule of the stage commands is in the docs (the LLM page and
# the own-data page since issue 34).
@pytest.mark.parametrize("page", ["docs/llm.md", "docs/own-data.md"])
def test_the_docs_give_the_exit_status_rule(page):
    text = " ".join((REPO / page).read_text(encoding="utf-8").split())
    assert "Exit status of `collect`, `extract`, `run` and `grapheval detect`: 0 when" in text
    assert "3 when some items failed" in text and "1 when every item" in text


# -- the CI recipe (issue 32) --------------------------------------------------------------------


# The CI recipe and the export columns are on docs/runs.md (issue 34: moved from README.md).
RUNS_PAGE = "docs/runs.md"


def _ci_recipe() -> list[str]:
    """The `s3kg` lines of the "A CI job" block of docs/runs.md, in order."""
    text = (REPO / RUNS_PAGE).read_text(encoding="utf-8")
    match = re.search(r"^### A CI job\n.*?^```yaml\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    assert match, f"{RUNS_PAGE} has no CI job"
    return [
        line.strip() for line in match.group(1).splitlines() if line.strip().startswith("s3kg ")
    ]


def _ci_answers(path: Path, answers: list[str]) -> None:
    questions = [
        ("What does aspirin do?", "Aspirin reduces fever and relieves pain.",
         "Aspirin reduces fever."),
        ("What does ibuprofen treat?", "Ibuprofen treats inflammation. It is an NSAID.",
         "Ibuprofen treats inflammation."),
        ("Who wrote the report?", "The doctor wrote the report for the patient.",
         "The doctor wrote the report."),
        ("What irritates the stomach?", "Aspirin irritates the stomach of many patients.",
         "Aspirin irritates the stomach."),
    ]  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "question", "context", "gold", "answer"])
        for i, ((question, context, gold), answer) in enumerate(
            zip(questions, answers, strict=True), 1
        ):
            writer.writerow([f"{i:03d}", question, context, gold, answer])


def test_the_docs_ci_recipe_runs_and_fails_a_worse_candidate(tmp_path, monkeypatch, minilm):
    lines = _ci_recipe()
    assert [line.split()[1] for line in lines] == ["import", "import", "extract", "score", "check"]
    _ci_answers(
        tmp_path / "eval" / "baseline.csv",
        [
            "Aspirin reduces fever.",
            "Ibuprofen treats inflammation.",
            "The doctor wrote the report.",
            "Aspirin irritates the stomach.",
        ],
    )
    _ci_answers(
        tmp_path / "eval" / "candidate.csv",
        [
            "Volcanoes emit lava.",
            "Glaciers carve valleys.",
            "The storm flooded the town.",
            "Oceans absorb heat.",
        ],
    )
    summary = tmp_path / "summary.md"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    results = []
    for line in lines:
        args = shlex.split(os.path.expandvars(line))[1:]
        results.append(CliRunner().invoke(cli, args))
    for line, result in zip(lines[:-1], results[:-1], strict=True):
        assert result.exit_code == 0, f"{line}: {result.output}"
    check = results[-1]
    assert check.exit_code == 1, check.output  # the candidate is worse: the job fails
    assert "FAIL cus_drop" in check.output
    assert summary.read_text(encoding="utf-8").startswith("### ❌ s3kg check failed")
    junit = ET.parse(tmp_path / "kg-check.xml").getroot()
    assert junit.attrib["failures"] != "0"


def test_the_docs_name_every_export_column():
    from s3kg_core.export.schema import EXPORT_COLUMNS

    text = (REPO / RUNS_PAGE).read_text(encoding="utf-8")
    section = text.split("## Runs in a database", 1)[1].split("## Gate a model in CI", 1)[0]
    missing = [name for name in EXPORT_COLUMNS if f"`{name}`" not in section]
    assert not missing, f"{RUNS_PAGE} does not name the export columns {missing}"


# -- the README, followed literally (issue 43) ----------------------------------------------------


def _readme_section(title: str) -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", text, re.MULTILINE | re.DOTALL)
    assert match, f"README.md has no section {title!r}"
    return match.group(1)


def test_the_readme_says_how_to_run_s3kg_and_where_the_dashboard_is():
    # issue 43: a newcomer after `make run` did not know the URL nor how to reach `s3kg`
    setup = _readme_section("Set up on a fresh machine")
    blocks = [body for lang, body in _FENCE.findall(setup) if lang == "bash"]
    commands = [line for body in blocks for line in body.splitlines() if line.strip()]
    assert [c.split("#")[0].strip() for c in commands[:2]] == ["make run", "make test"]
    assert "http://localhost:8501" in setup
    assert "source .venv/bin/activate" in setup and "`.venv/bin/s3kg`" in setup


@pytest.mark.parametrize(("args", "port"), [((), "8501"), (("PORT=8600",), "8600")])
def test_make_run_port_picks_the_dashboards_port_as_the_readme_says(args, port):
    # issue 58: a user with 8501 taken had to know Streamlit's environment variable
    if shutil.which("make") is None:
        pytest.skip("no make on PATH")
    assert "`make run PORT=8600`" in _readme_section("Set up on a fresh machine")
    make = ["make", "--no-print-directory", "-n", "run", *args]
    # as a user's shell runs it: under `make test` the inherited MAKEFLAGS/MAKELEVEL made the
    # nested make print "Leaving directory" last (the CI run failed on it)
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MAKELEVEL", "MFLAGS"}}
    out = subprocess.run(make, cwd=REPO, capture_output=True, text=True, check=True, env=env).stdout
    shown = next(line for line in out.splitlines() if "streamlit run app.py" in line)
    assert "streamlit run app.py" in shown and shown.endswith(f"--server.port {port}"), shown


def test_the_readme_pip_line_takes_the_cpu_torch():
    # issue 43: `pip install ".[dashboard]"` as printed pulled the CUDA torch (4.2 GB)
    setup = _readme_section("Set up on a fresh machine")
    pips = [
        line
        for lang, body in _FENCE.findall(setup)
        if lang == "bash"
        for line in body.splitlines()
        if line.startswith("pip install")
    ]
    assert pips and all(
        "--extra-index-url https://download.pytorch.org/whl/cpu" in p for p in pips
    ), pips


def _quick_start_2_blocks() -> list[list[str]]:
    """The ``s3kg`` lines of each bash block of the README's Quick start 2."""
    section = _readme_section("Quick start 2: your own data")
    return [
        [line for _, line in shown_commands(f"```bash\n{body}```\n")]
        for lang, body in _FENCE.findall(section)
        if lang == "bash"
    ]


def test_the_readme_quick_start_2_answers_pubmedqa_offline_as_printed(
    tmp_path, monkeypatch, minilm, tiny_model
):
    """Issue 58: the own-data quick start imported no answers ("1000 items, 0 answers") and
    needed an endpoint to get any. Its first block, line by line, on a PubMedQA-like file at
    the path it names, with no endpoint in the environment; the tiny local model stands in for
    the packaged SmolLM2 (minutes on a CPU), through the same --local."""
    from serve_helpers import serve_unavailable_reason

    if serve_unavailable_reason():
        pytest.skip(serve_unavailable_reason())
    lines = _quick_start_2_blocks()[0]
    assert [line.split()[1] for line in lines] == [
        "import", "collect", "extract", "score", "cus", "tau", "dashboard",
    ]  # fmt: skip
    assert "--limit 40" in lines[0] and "--local smollm2" in lines[1]
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "S3KG_MODEL"):
        monkeypatch.delenv(var, raising=False)
    pqal = tmp_path / "shared" / "data" / "pubmedqa" / "ori_pqal.json"
    pqal.parent.mkdir(parents=True)
    records = {
        str(pmid): {
            "QUESTION": f"Does aspirin {verb} fever?",
            "CONTEXTS": [f"Aspirin was given to patients {pmid}.", "Fever fell in most."],
            "LONG_ANSWER": "Aspirin reduces fever in most patients.",
        }
        for pmid, verb in ((101, "reduce"), (102, "cause"), (103, "treat"))
    }
    pqal.write_text(json.dumps(records), encoding="utf-8")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    monkeypatch.chdir(checkout)  # ../shared/data, as beside a checkout
    outputs = {}
    for line in lines[:-1]:  # the dashboard serves until Ctrl-C
        line = line.replace("--local smollm2", f"--local {shlex.quote(str(tiny_model))}")
        result = CliRunner().invoke(cli, shlex.split(line)[1:])
        assert result.exit_code in ((0, 3) if " collect " in line else (0,)), (line, result.output)
        outputs[line.split()[1]] = result.output
    assert outputs["import"].startswith("ori_pqal.json: pubmedqa_pqal: 3 items")
    assert "collected from model: 1 run(s): 3 asked" in outputs["collect"]
    assert "scored 3 answers" in outputs["score"]
    assert outputs["cus"].strip().splitlines()[-1].split("|")[-1] == "alpha:0.5"


def test_the_readme_quick_start_2_own_files_run_as_printed(tmp_path, monkeypatch, minilm):
    # issue 43: the block imported one CSV without --dataset and then `check --run candidate
    # --baseline baseline` named runs it never made (two CSVs became two datasets); issue 58:
    # its --map named no id= column, so the pages showed questions as [19]
    lines = _quick_start_2_blocks()[1]
    assert [line.split()[1] for line in lines][:2] == ["import", "import"]
    assert all("--map id=id," in line for line in lines[:2])
    assert lines[-1].startswith("s3kg check ")
    worse = ["Volcanoes emit lava.", "Glaciers carve valleys.", "The storm flooded the town."]
    better = ["Aspirin reduces fever.", "Ibuprofen treats inflammation.", "The doctor wrote it."]
    for name, answers in (("my.csv", [*worse, "Oceans absorb heat."]), ("baseline.csv", better)):
        rows = [
            ("What does aspirin do?", "Aspirin reduces fever and eases pain.", "Reduces fever."),
            ("What does ibuprofen treat?", "Ibuprofen treats inflammation.", "Inflammation."),
            ("Who wrote the report?", "The doctor wrote the report in May.", "The doctor."),
            ("What does aspirin irritate?", "Aspirin irritates the stomach.", "The stomach."),
        ]
        with (tmp_path / name).open("w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(["id", "q", "ctx", "ref", "out"])
            for number, ((question, context, gold), answer) in enumerate(
                zip(rows, answers, strict=False)
            ):
                writer.writerow([f"q-{number}", question, context, gold, answer])
    monkeypatch.chdir(tmp_path)
    for line in lines:
        result = CliRunner().invoke(cli, shlex.split(line)[1:])
        if line.startswith("s3kg check "):
            assert result.exit_code in (0, 1), f"{line}: {result.output}"
            assert "cus_drop" in result.output, result.output
            assert (tmp_path / "check.xml").is_file()
        else:
            assert result.exit_code == 0, f"{line}: {result.output}"
    with duckdb.connect("mine.duckdb", read_only=True) as con:
        ids = con.execute("SELECT ext_id FROM items ORDER BY ext_id").fetchall()
    assert ids == [("q-0",), ("q-1",), ("q-2",), ("q-3",)]
