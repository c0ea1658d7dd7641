"""The user documentation's examples stay runnable: a new user copies them verbatim.

The user documentation is the README (the landing page) and the user guide's pages under
``docs/``, in the order of the site's navigation (``mkdocs.yml``); "the README" below means
all of them, read as one text. Each ```python block runs (in that order, one namespace, as a
reader pasting them into one session would) and prints what its trailing ``# ...`` lines
say; every ``timealign`` command line of a code block is accepted by the parser with its
required parts, and every option shown in its ``[...]`` optional parts exists; the suite
sizes the README quotes are those of the shipped suites; the exit-code rule names every
command; every relative link of the project's Markdown lands on a file and heading. The bag
example of ``bags info`` is checked with the bag tests (tests/rosbag/test_rosbag_readme.py),
the commands' behaviour by the tests of each rule.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import shlex
import types
from pathlib import Path

import pytest

from timealign import registry, vectors
from timealign.cli import build_parser
from timealign.conformance.suites import shipped
from tools import spec_index

ROOT = Path(__file__).resolve().parent.parent
MKDOCS = ROOT / "mkdocs.yml"


def guide_pages() -> list[Path]:
    """README.md, then the user guide's pages (``docs/*.md``) in the order of the site's
    navigation."""
    nav = re.findall(r"^\s*- (?:[^:\n]+: )?(docs/[\w/.-]+\.md)\s*$",
                     MKDOCS.read_text("utf-8"), re.MULTILINE)
    return [ROOT / "README.md", *(ROOT / page for page in nav)]


#: The README and the user guide, as one text.
README = "\n".join(page.read_text("utf-8") for page in guide_pages())
#: Blocks that need what a test cannot give cheaply: a SparkSession and bags.
NEEDS_SPARK = "spark.read"


def test_readme_every_guide_page_is_in_the_site_navigation() -> None:
    """Every page under docs/ is in mkdocs.yml's navigation, so its examples are checked
    here and the site shows it; the README is short, a landing page."""
    pages = guide_pages()
    assert sorted(ROOT.glob("docs/**/*.md")) == sorted(pages[1:])
    assert len(pages) == len(set(pages))
    assert len((ROOT / "README.md").read_text("utf-8").splitlines()) < 300


def code_blocks(language: str | None = None) -> list[str]:
    """The fenced blocks of the README, in order; ``language="python"`` picks the ```python
    blocks (default: every block)."""
    blocks: list[str] = []
    opened: str | None = None  # the language of the open block ("" for none)
    indent = 0  # a block in a list item is indented as its fence is
    lines: list[str] = []
    for line in README.splitlines():
        if not line.lstrip().startswith("```"):
            lines.append(line[indent:] if line[:indent].isspace() else line)
        elif opened is None:
            opened, lines = line.strip()[3:], []
            indent = len(line) - len(line.lstrip())
        else:
            if language is None or opened == language:
                blocks.append("\n".join(lines) + "\n")
            opened = None
    return blocks


def expected_prints(block: str) -> list[str]:
    """The output a block promises: its whole-line comments after its last ``print``."""
    lines = block.splitlines()
    last = max((i for i, line in enumerate(lines) if "print(" in line), default=len(lines))
    return [line.lstrip()[2:] for line in lines[last + 1:] if line.lstrip().startswith("# ")]


def test_readme_python_blocks_run_and_print_what_they_say() -> None:
    """Every ```python block of the README runs as written; the printed lines are those its
    comments show (ApproximateTime's `run`, the event-time batcher's `step`)."""
    blocks = [b for b in code_blocks("python") if NEEDS_SPARK not in b]
    assert len(blocks) >= 5
    port = types.ModuleType("my_port")  # the reader's port: here the reference itself
    port.run_json = lambda config, inputs: vectors.reference_outputs(  # type: ignore[attr-defined]
        vectors.from_json({"format": "timealign.vector/1", "algorithm": "approximate_time",
                           "name": "port", "config": config, "inputs": inputs}))
    namespace: dict[str, object] = {"my_port": port}
    checked = 0
    for block in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, "README.md", "exec"), namespace)
        expected = expected_prints(block)
        if expected:
            assert out.getvalue().splitlines() == expected, block
            checked += 1
    assert checked >= 2
    test = namespace["test_my_port_conforms"]  # the pytest example of "Checking your ..."
    assert callable(test)
    test()


def test_readme_rate_aware_example_counts_the_pulses_its_comment_says() -> None:
    """The rate-aware batcher block prints one batch per line; its comment gives the
    pulses per batch (1, 14, 13, 14, 14)."""
    [block] = [b for b in code_blocks("python") if "a 14 Hz detector" in b]
    comment = re.search(r"# (\d+(?:, \d+)+) pulses", block)
    assert comment is not None
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "README.md", "exec"), {})
    counts = [line.split()[-1] for line in out.getvalue().splitlines()]
    assert ", ".join(counts) == comment.group(1)


def _commands() -> list[str]:
    """Each ``timealign`` (or ``python -m timealign``, or spark-submit's entry script)
    command line of the code blocks, continuation lines joined, environment and trailing
    comment removed; in a block showing a session, only the lines after a ``$`` prompt."""
    found = []
    for block in code_blocks():
        lines = re.sub(r"\\\n\s*", " ", block).splitlines()
        if any(line.startswith("$ ") for line in lines):  # a session: the rest is output
            lines = [line[2:] for line in lines if line.startswith("$ ")]
        for line in lines:
            line = line.strip()
            line = re.sub(r"^(?:[A-Z_]+=\S+\s+)+", "", line)  # PYSPARK_PYTHON=... timealign
            line = re.sub(r"\s+#\s.*$", "", line)
            line = re.sub(r"^python -m timealign ", "timealign ", line)
            line = re.sub(r"^.*spark-submit .*\S+/timealign_submit.py ", "timealign ", line)
            if line.startswith("timealign "):
                found.append(line)
    return found


def _subparser(argv: list[str]) -> argparse.ArgumentParser:
    """The parser of the (sub-)command ``argv`` names: `conform`, `bags info`, ..."""
    parser = build_parser()
    for word in argv:
        actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not actions or word not in actions[0].choices:
            break
        parser = actions[0].choices[word]
    return parser


OPTIONAL = re.compile(r"\s*\[(?=--|[A-Z])[^\[\]]*\](?:\.\.\.)?")


@pytest.mark.parametrize("line", _commands())
def test_readme_command_lines_parse(line: str) -> None:
    """CLI-R1: each command line the README shows is accepted by the parser as written
    (its optional `[...]` parts left out, its placeholders as values), an inline `--config`
    is a config the algorithm takes, and each option of those optional parts is an option
    of that command."""
    optional = " ".join(OPTIONAL.findall(line))
    required = OPTIONAL.sub("", line)
    argv = shlex.split(required)[1:]
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:
        pytest.fail(f"the parser refuses {required!r} (exit {stop.code})")
    config = getattr(args, "config", None)
    if isinstance(config, str) and config.startswith("{"):  # an inline config is one
        registry.get(args.algorithm).codec.config_from_json(json.loads(config))  # the job takes
    known = {o for a in _subparser(argv)._actions for o in a.option_strings}
    unknown = set(re.findall(r"--[a-z][a-z-]*", optional)) - known
    assert not unknown, f"{line!r} shows options the command does not have: {unknown}"


def test_readme_commands_cover_every_subcommand() -> None:
    """The README shows each sub-command at least once (so the test above checks it)."""
    shown = {shlex.split(line)[1] for line in _commands()}
    actions = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    assert set(actions[0].choices) <= shown


def test_readme_quotes_the_shipped_suite_sizes() -> None:
    """The mutation study's sentence names the sizes of the shipped suites; they grow as
    vectors join, and a stale figure misleads a reader comparing runs."""
    sizes = {name: len(shipped(name))
             for name in ("approximate_time", "event_time_batcher", "rate_aware_batcher")}
    quoted = re.search(r"\((\d+) ApproximateTime, (\d+) event-time batcher, (\d+) rate-aware "
                       r"batcher vectors\)", README.replace("\n", " "))
    assert quoted is not None
    assert tuple(map(int, quoted.groups())) == (sizes["approximate_time"],
                                                sizes["event_time_batcher"],
                                                sizes["rate_aware_batcher"])


def test_readme_exit_codes_name_every_command() -> None:
    """CLI-R1: the "Exit codes" section lists every sub-command the rule covers."""
    listed = re.search(r"Every command \(([^)]*)\)", README.replace("\n", " "))
    assert listed is not None
    named = {name.split()[0] for name in re.findall(r"`([^`]+)`", listed.group(1))}
    actions = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    assert named == set(actions[0].choices)


def _anchors(document: Path) -> set[str]:
    """The anchors GitHub gives the headings of ``document`` (a repeated heading gets -1,
    -2, ...); headings inside code blocks are none."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in document.read_text("utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        heading = None if fenced else re.match(r"#+\s+(.*)", line)
        if heading:
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.group(1)).replace("`", "")
            anchor = spec_index.slug(text)
            count = seen.get(anchor, 0)
            seen[anchor] = count + 1
            found.add(anchor if count == 0 else f"{anchor}-{count}")
    return found


def test_readme_and_spec_links_resolve() -> None:
    """Every relative link of the project's Markdown (README, spec/, ARCHITECTURE.md, the
    examples' and vectors' READMEs ...) names a file that exists and, with `#anchor`, a
    heading of that file."""
    skipped = {".venv", "build", "demo-data", "node_modules"}
    documents = [p for p in sorted(ROOT.rglob("*.md"))
                 if not skipped & set(p.relative_to(ROOT).parts)
                 and not any(part.startswith(".") or part.endswith(".egg-info")
                             for part in p.relative_to(ROOT).parts)]
    assert ROOT / "README.md" in documents and ROOT / "spec" / "index.md" in documents
    broken = []
    for document in documents:
        text = re.sub(r"^\s*```.*?^\s*```", "", document.read_text("utf-8"),
                      flags=re.MULTILINE | re.DOTALL)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            linked = (document.parent / path) if path else document
            if not linked.exists():
                broken.append(f"{document.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
                broken.append(f"{document.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_readme_make_targets_exist() -> None:
    """Every `make TARGET` the README names is a target of the Makefile, and every
    `make demo VAR=...` variable it suggests is one the Makefile reads."""
    makefile = (ROOT / "Makefile").read_text("utf-8")
    targets = set(re.findall(r"^([a-z][a-z0-9-]*):", makefile, re.MULTILINE))
    named = set(re.findall(r"`make ([a-z][a-z0-9-]*)", README))
    assert named and named <= targets, named - targets
    variables = set(re.findall(r"`make [a-z-]+ ([A-Z_]+)=", README))
    assert variables <= set(re.findall(r"^([A-Z_]+) \?=", makefile, re.MULTILINE))
