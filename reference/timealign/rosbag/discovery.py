"""Which bags an input holds and how each is named (BAG-R1, BAG-R2), and the options of
reading them (BAG-R3, BAG-R6, BAG-R7).

A bag is a folder holding ``metadata.yaml`` (rosbag2), a ``.bag`` file (ROS 1) or a lone
``.mcap`` / ``.db3`` file; its source comes from its path by the ``--source-from`` rule
(by default its name: the path without the format's suffix, for every format alike).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

import attrs

from timealign.errors import InvalidInput

ROSBAG2_FILES = (".mcap", ".db3")
ROS1_FILE = ".bag"
BAG_SUFFIXES = (ROS1_FILE, *ROSBAG2_FILES)
BATCH_ROWS = 65_536


@attrs.frozen
class Naming:
    """How a front end names the reading options in its errors (BAG-R15): the data source
    its own options, the command line its flags. ``log_all`` and ``log_topic`` (``{topic}``)
    say how to ask for the log time as stamp."""

    input: str
    stamp: str
    source_from: str
    log_all: str
    log_topic: str

    def log_hint(self, topic: str) -> str:
        return f"{self.log_topic.format(topic=topic)} (or {self.log_all})"


#: The ``rosbag`` data source's words: ``load(path)`` and its ``.option(...)`` names.
OPTIONS = Naming(input="path", stamp="stamp", source_from="sourceFrom",
                 log_all='.option("stamp", "log")',
                 log_topic='.option("logStampTopics", "{topic}")')
#: The command line's words: ``timealign run|stream|plot|verify`` flags.
FLAGS = Naming(input="--input", stamp="--stamp", source_from="--source-from",
               log_all="--stamp log", log_topic="--stamp {topic}=log")
NAMINGS = {"options": OPTIONS, "flags": FLAGS}


@attrs.frozen
class Options:
    """How bags become rows: which topics take the log time as stamp (BAG-R3), which
    topics are read at all (``None``: every topic; the others keep a null stamp and are
    counted, BAG-R7), how a bag names its source (BAG-R2), whether bad bags are skipped,
    and whose words the errors use (BAG-R15)."""

    log_stamp_all: bool = False
    log_stamp_topics: frozenset[str] = frozenset()
    topics: frozenset[str] | None = None
    source_from: str = "bag"
    skip_bad: bool = False
    batch_rows: int = BATCH_ROWS
    naming: Naming = OPTIONS

    def log_stamp(self, topic: str) -> bool:
        return self.log_stamp_all or topic in self.log_stamp_topics

    def wanted(self, topic: str) -> bool:
        return self.topics is None or topic in self.topics


def check_source_rule(rule: str, naming: Naming) -> str:
    """``bag``, ``folder`` or ``regex:PATTERN`` (BAG-R2)."""
    if rule in ("bag", "folder"):
        return rule
    if rule.startswith("regex:"):
        try:
            re.compile(rule[6:])
        except re.error as error:
            raise InvalidInput(naming.source_from, "BAG-R2", f"bad pattern: {error}",
                               rule) from None
        return rule
    raise InvalidInput(naming.source_from, "BAG-R2", "must be bag, folder or regex:PATTERN",
                       rule)


def bag_name(relative: str) -> str:
    """The bag's name (BAG-R2): its path below the input root without the format's suffix
    (``.bag``, ``.mcap``, ``.db3``), so that a ROS 1 file, a lone storage file and a rosbag2
    folder (which has no suffix) of one robot are named alike."""
    path = PurePosixPath(relative)
    return str(path.with_suffix("")) if path.suffix in BAG_SUFFIXES else relative


def source_of(relative: str, rule: str, naming: Naming) -> str:
    """The source of the bag at ``relative`` (posix path below the input root)."""
    if rule == "bag":
        return bag_name(relative)
    if rule == "folder":
        parent = str(PurePosixPath(relative).parent)
        return "" if parent == "." else parent
    match = re.search(rule[6:], relative)
    if match is None:
        raise InvalidInput(relative, "BAG-R2",
                           f"{naming.source_from} {rule} does not match the bag", relative)
    return match.group(1) if match.groups() else match.group(0)


def is_bag(path: Path) -> bool:
    if path.is_dir():
        return (path / "metadata.yaml").is_file()
    return path.suffix in (ROS1_FILE, *ROSBAG2_FILES)


def _listed(folder: Path) -> set[str] | None:
    """The storage files a rosbag2 folder's ``metadata.yaml`` lists (by name, as the reader
    opens them), None when it cannot be read (the reader then refuses the bag, BAG-R6)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        body = YAML(typ="safe").load((folder / "metadata.yaml").read_text(encoding="utf-8"))
        listed = body["rosbag2_bagfile_information"]["relative_file_paths"]
        return {PurePosixPath(str(name)).name for name in listed}
    except (OSError, UnicodeError, YAMLError, KeyError, TypeError):
        return None


def check_listed(folder: Path, relative: str) -> None:
    """BAG-R30: every storage file (``.mcap``, ``.db3``, compressed or not) in a rosbag2
    folder is one its ``metadata.yaml`` lists: the reader opens only those, and the bag's
    counts are the metadata's, so a storage file copied in beside them was neither read nor
    counted ("no loss" over half the messages). Refused by name."""
    listed = _listed(folder)
    if listed is None:
        return
    for entry in sorted(folder.iterdir()):
        stem = entry.name.split(".zstd")[0] if entry.name.endswith(".zstd") else entry.name
        if stem.endswith(ROSBAG2_FILES) and entry.name not in listed:
            raise InvalidInput(f"{relative}/{entry.name}", "BAG-R30", f"the bag {relative} "
                               f"holds the storage file {entry.name}, which its metadata.yaml "
                               f"does not list, so it would be neither read nor counted; "
                               f"move it out of the bag folder (a lone storage file is a bag "
                               f"of its own, BAG-R1) or list it in metadata.yaml",
                               str(entry))


def find_bags(root: Path) -> list[tuple[Path, str]]:
    """Every bag under ``root`` with its posix path relative to it, in path order (BAG-R1):
    a folder holding ``metadata.yaml`` (rosbag2; not searched further, and holding only the
    storage files it lists, BAG-R30), a ``.bag`` file (ROS 1), or a lone ``.mcap`` /
    ``.db3`` file (rosbag2 storage without metadata)."""
    if is_bag(root):
        found = [(root, root.name)]
    else:
        found = []

        def walk(folder: Path) -> None:
            for entry in sorted(folder.iterdir()):
                if entry.name.startswith((".", "_")):
                    continue
                if is_bag(entry):
                    found.append((entry, entry.relative_to(root).as_posix()))
                elif entry.is_dir():
                    walk(entry)

        walk(root)
    for path, relative in found:
        if path.is_dir():
            check_listed(path, relative)
    return found


@attrs.frozen
class Bag:
    """One bag to read: where it is and the names its rows carry."""

    path: str
    relative: str
    source: str
    prefix: str  # prepended to ids when a source holds several bags (BAG-R2)

    @classmethod
    def at(cls, path: Path, relative: str, rule: str, naming: Naming) -> Bag:
        return cls(str(path), relative, source_of(relative, rule, naming),
                   "" if rule == "bag" else f"{relative}:")


def check_names(relatives: Iterable[str], rule: str, naming: Naming) -> None:
    """BAG-R2: with the ``bag`` rule each bag is a source of its own, so two bags whose
    names differ only by the format's suffix (``r1.bag`` and ``r1.mcap``) are refused,
    naming both, rather than merged into one source whose ids would collide."""
    if rule != "bag":
        return
    seen: dict[str, str] = {}
    for relative in sorted(relatives):
        name = bag_name(relative)
        if name in seen:
            raise InvalidInput(relative, "BAG-R2", f"the bags {seen[name]} and {relative} "
                               f"would both be the source {name!r}; rename one, or name the "
                               f"sources with {naming.source_from} regex:PATTERN", name)
        seen[name] = relative


def bags_under(root: str, rule: str, naming: Naming) -> list[Bag]:
    """The bags under ``root``, each with its source (BAG-R1, BAG-R2); errors in the words
    of ``naming`` (BAG-R15)."""
    base = Path(root)
    if not base.exists():
        raise InvalidInput(naming.input, "BAG-R1", "no such file or folder", root)
    found = find_bags(base)
    check_names((relative for _, relative in found), rule, naming)
    return [Bag.at(path, relative, rule, naming) for path, relative in found]

