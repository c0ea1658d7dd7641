"""The spec's cross-reference is current and complete (spec/README.md, "Identifier convention").

``spec/index.md`` (and only it: the spec's own files hold no generated line) is written
by ``make spec-index`` (``tools/spec_index.py``) from the ids of ``spec/``, the comments,
docstrings and strings of ``reference/``, the tests and the vectors' ``rules``.
"""

from __future__ import annotations

import re
from pathlib import Path

from tools import spec_index


def test_index_and_cross_references_are_current() -> None:
    """spec/index.md equals a fresh rendering, and the spec files are as written (no
    generated cross-reference line left in them)."""
    stale = [path.relative_to(spec_index.ROOT).as_posix()
             for path, text in spec_index.rendered().items()
             if not path.exists() or path.read_text(encoding="utf-8") != text]
    assert not stale, f"stale cross-reference in {stale}: run `make spec-index`"


def test_spec_files_hold_no_cross_reference_line() -> None:
    """The cross-reference lives in the index only: no section of a spec file ends with a
    generated ``*Cross-reference:*`` paragraph, and one left by an older branch is removed
    by ``make spec-index`` with the blank line after it."""
    for path in spec_index.spec_files():
        assert spec_index.XREF not in path.read_text(encoding="utf-8"), path.name
    old = ("### AT-R1 Title\n\nProse.\n\n*Cross-reference:* code `a.py`;\n1 test.\n\n"
           "### AT-R2 Next\n\nMore.\n\n*Cross-reference:* no code.\n")
    assert spec_index.without_xrefs(old) == ("### AT-R1 Title\n\nProse.\n\n### AT-R2 Next\n"
                                             "\nMore.\n")


def test_every_rule_is_cited_by_code_of_its_package() -> None:
    """A rule (``-R``) id is implemented somewhere: code of its own package cites it in a
    comment, docstring or string (for example ``approximate_time/`` for an ApproximateTime rule)."""
    uncited = spec_index.uncited_rules(spec_index.gather())
    assert not uncited, (f"rules no code of their package cites: {uncited}; add the id to "
                         "a comment or docstring where the rule is implemented")


def test_every_family_has_a_package() -> None:
    """Each id family of the spec names where its code lives (else no rule could be cited)."""
    families = {rule.split("-")[0] for rule in spec_index.definitions()}
    assert families <= set(spec_index.PACKAGES)


def test_index_links_resolve() -> None:
    """Each link of the index to a definition lands on a heading of the linked file."""
    anchors = {path.name: {spec_index.slug(line.lstrip("#"))
                           for line in path.read_text(encoding="utf-8").splitlines()
                           if line.startswith("#")}
               for path in spec_index.spec_files()}
    links = re.findall(r"\]\(([a-z_]+\.md)#([^)]+)\)", spec_index.INDEX.read_text("utf-8"))
    assert links
    missing = [f"{name}#{anchor}" for name, anchor in links if anchor not in anchors[name]]
    assert not missing, missing


def test_slug_is_githubs() -> None:
    """Anchors as GitHub makes them: lower case, punctuation dropped, spaces to hyphens."""
    assert spec_index.slug("AT-R3 A message is queued; only the last empty deque filling "
                           "runs process()") == ("at-r3-a-message-is-queued-only-the-last-"
                                                 "empty-deque-filling-runs-process")
    assert spec_index.slug("RB-H9 `set_batch_length(0)` loops") == "rb-h9-set_batch_length0-loops"


def test_code_citations_name_the_enclosing_function(tmp_path: Path) -> None:
    """A citation in a comment, docstring or string belongs to the innermost function or
    class around it; one outside any belongs to the module."""
    (tmp_path / "sample.py").write_text('''"""Module: AT-R1."""
class Machine:
    def step(self) -> None:
        """AT-R2"""
        x = "AT-R3"  # AT-R4
        # prints ``AT-R5 (only B)``: an example, not a citation
def other() -> None:
    pass
# AT-R1 again
''', encoding="utf-8")
    cited = spec_index.code_citations(tmp_path)
    assert cited == {"AT-R1": {"sample.py": ["(module)"]},
                     "AT-R2": {"sample.py": ["Machine.step"]},
                     "AT-R3": {"sample.py": ["Machine.step"]},
                     "AT-R4": {"sample.py": ["Machine.step"]}}
