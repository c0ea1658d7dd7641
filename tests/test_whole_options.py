"""No abbreviated options anywhere (CLI-R1): argparse took `verify OUT --conf X` for
`--config X`; every parser of every entry point refuses an abbreviation as a usage error."""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from timealign.cli import main
from timealign.commands import conformance_adapter, rosbag_demo, spark_ship
from timealign.commands.main import build_parser
from timealign.commands.spark import verify_parser


def _parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _parsers(sub)


def test_cli_r1_every_parser_refuses_abbreviations() -> None:
    """CLI-R1: the console script's parser, each sub-command's and each `python -m` entry
    point's."""
    roots = [build_parser(), verify_parser(), rosbag_demo.build_parser(),
             conformance_adapter.parser(), spark_ship.build_parser()]
    found = [p for root in roots for p in _parsers(root)]
    assert len(found) > 10
    assert [p.prog for p in found if p.allow_abbrev] == []


@pytest.mark.parametrize("argv", [
    ["run", "approximate_time", "--input", "in", "--output", "out", "--quie"],
    ["verify", "out", "--confi", "{}"],
    ["plot", "approximate_time", "--ru", "out", "--source", "s", "--out", "p.svg"],
])
def test_cli_r1_an_abbreviation_is_a_usage_error(argv: list[str],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert "unrecognized arguments" in capsys.readouterr().err


def test_cli_r1_verify_module_takes_conf_whole(capsys: pytest.CaptureFixture[str]) -> None:
    """`--conf` is `python -m timealign.spark.verify`'s own option, never `--config`."""
    args = verify_parser().parse_args(["approximate_time", "--output", "o", "--conf",
                                       "spark.sql.shuffle.partitions=3"])
    assert args.conf == ["spark.sql.shuffle.partitions=3"] and args.config is None


def _parser_calls_allowing_abbreviations(path: Path) -> list[int]:
    """The lines of ``path`` that make an ``argparse.ArgumentParser`` without
    ``allow_abbrev=False``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else \
            node.func.id if isinstance(node.func, ast.Name) else None
        if name == "ArgumentParser" and not any(
                k.arg == "allow_abbrev" and isinstance(k.value, ast.Constant)
                and k.value.value is False for k in node.keywords):
            found.append(node.lineno)
    return found


def test_cli_r1_every_script_refuses_abbreviations() -> None:
    """CLI-R1 beyond the package: the command lines of the repository's scripts (`make
    bench`, `make proofs`, `make planted`, the example adapters) refuse abbreviations too,
    so `--inst` is never taken for `--instances`."""
    root = Path(__file__).resolve().parents[1]
    scripts = [p for folder in ("benchmarks", "proofs", "examples", "tools", "cases")
               for p in sorted((root / folder).rglob("*.py"))]
    assert len(scripts) > 20
    found = {str(p.relative_to(root)): lines for p in scripts
             if (lines := _parser_calls_allowing_abbreviations(p))}
    assert found == {}
