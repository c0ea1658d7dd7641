"""Which bags an input holds and how each is named (BAG-R1, BAG-R2), and the options of
reading them (BAG-R3, BAG-R6, BAG-R7).

A bag is a folder holding ``metadata.yaml`` (rosbag2), a ``.bag`` file (ROS 1) or a lone
``.mcap`` / ``.db3`` file; its source comes from its path by the ``--source-from`` rule.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

import attrs

from timealign.errors import InvalidInput

ROSBAG2_FILES = (".mcap", ".db3")
ROS1_FILE = ".bag"
BATCH_ROWS = 65_536


@attrs.frozen
class Options:
    """How bags become rows: which topics take the log time as stamp (BAG-R3), which
    topics are read at all (``None``: every topic; the others keep a null stamp and are
    counted, BAG-R7), how a bag names its source (BAG-R2), whether bad bags are skipped."""

    log_stamp_all: bool = False
    log_stamp_topics: frozenset[str] = frozenset()
    topics: frozenset[str] | None = None
    source_from: str = "bag"
    skip_bad: bool = False
    batch_rows: int = BATCH_ROWS

    def log_stamp(self, topic: str) -> bool:
        return self.log_stamp_all or topic in self.log_stamp_topics

    def wanted(self, topic: str) -> bool:
        return self.topics is None or topic in self.topics


def check_source_rule(rule: str) -> str:
    """``bag``, ``folder`` or ``regex:PATTERN`` (BAG-R2)."""
    if rule in ("bag", "folder"):
        return rule
    if rule.startswith("regex:"):
        try:
            re.compile(rule[6:])
        except re.error as error:
            raise InvalidInput("--source-from", "BAG-R2", f"bad pattern: {error}", rule) from None
        return rule
    raise InvalidInput("--source-from", "BAG-R2", "must be bag, folder or regex:PATTERN", rule)


def source_of(relative: str, rule: str) -> str:
    """The source of the bag at ``relative`` (posix path below the input root)."""
    if rule == "bag":
        return relative
    if rule == "folder":
        parent = str(PurePosixPath(relative).parent)
        return "" if parent == "." else parent
    match = re.search(rule[6:], relative)
    if match is None:
        raise InvalidInput(relative, "BAG-R2", f"--source-from {rule} does not match the bag",
                           relative)
    return match.group(1) if match.groups() else match.group(0)


def is_bag(path: Path) -> bool:
    if path.is_dir():
        return (path / "metadata.yaml").is_file()
    return path.suffix in (ROS1_FILE, *ROSBAG2_FILES)


def find_bags(root: Path) -> list[tuple[Path, str]]:
    """Every bag under ``root`` with its posix path relative to it, in path order (BAG-R1):
    a folder holding ``metadata.yaml`` (rosbag2; not searched further), a ``.bag`` file
    (ROS 1), or a lone ``.mcap`` / ``.db3`` file (rosbag2 storage without metadata)."""
    if is_bag(root):
        return [(root, root.name)]
    found: list[tuple[Path, str]] = []

    def walk(folder: Path) -> None:
        for entry in sorted(folder.iterdir()):
            if entry.name.startswith((".", "_")):
                continue
            if is_bag(entry):
                found.append((entry, entry.relative_to(root).as_posix()))
            elif entry.is_dir():
                walk(entry)

    walk(root)
    return found


@attrs.frozen
class Bag:
    """One bag to read: where it is and the names its rows carry."""

    path: str
    relative: str
    source: str
    prefix: str  # prepended to ids when a source holds several bags (BAG-R2)

    @classmethod
    def at(cls, path: Path, relative: str, rule: str) -> Bag:
        return cls(str(path), relative, source_of(relative, rule),
                   "" if rule == "bag" else f"{relative}:")


def bags_under(root: str, rule: str) -> list[Bag]:
    base = Path(root)
    if not base.exists():
        raise InvalidInput("--input", "BAG-R1", "no such file or folder", root)
    return [Bag.at(path, relative, rule) for path, relative in find_bags(base)]

