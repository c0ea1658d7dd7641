"""The documentation site's hook (``mkdocs.yml``: ``hooks``): the pages where they live.

The site is the repository's own Markdown, read in place, so that a page reads the same on
the site as in the repository and a relative link means the same in both: ``README.md`` is
the home page, ``docs/`` the user guide, ``spec/`` the specification (every ``spec/*.md``,
listed under "Specification" without a hand-kept list), ``ARCHITECTURE.md`` and
``DEVELOPERS.md`` the maintainers' pages. Every other file a page links to (a figure, a
source file, another README) is carried along, so a link lands on the site as on GitHub,
and a link to a folder lands on its README. Headings get the anchors GitHub gives them
(``tools.spec_index.slug``), so an anchor that works in the repository works on the site;
``mkdocs build --strict`` fails on a link or anchor that lands nowhere. The API reference
(``docs/api.md``) gets one section per registered algorithm (:mod:`timealign.registry`).

    make docs        # mkdocs build --strict, into site/
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # mkdocs loads this file by path, not as tools.docs_site
    sys.path.insert(0, str(ROOT))

from tools.spec_index import slug  # noqa: E402

#: The pages read where they live, besides docs/ (mkdocs' docs_dir).
PAGES = ("README.md", "ARCHITECTURE.md", "DEVELOPERS.md")
SPEC = "spec"
#: The place in docs/api.md where each registered algorithm's section goes.
ALGORITHMS_MARK = "<!-- each registered algorithm: added by tools/docs_site.py -->"
LINK = re.compile(r"(\]\()([^)\s]+)(\))")
FENCE = re.compile(r"^\s*```.*?^\s*```[^\n]*$", re.MULTILINE | re.DOTALL)
#: A Sphinx role before a code span, as a docstring's ``:class:`Algorithm``` renders.
ROLE = re.compile(r":(?:class|func|meth|attr|mod|data|exc|obj):~?(?=<code>)")


def slugify(value: str, separator: str) -> str:
    """The anchor GitHub gives a heading (python-markdown's ``toc`` calls this)."""
    return slug(value).replace("-", separator) if separator != "-" else slug(value)


def spec_pages(root: Path = ROOT) -> list[str]:
    """Every page of ``spec/``: its README (the conventions) first, the index last."""
    pages = sorted(p.relative_to(root).as_posix() for p in (root / SPEC).glob("*.md"))
    first, last = f"{SPEC}/README.md", f"{SPEC}/index.md"
    return [first] + [p for p in pages if p not in (first, last)] + [last]


def links(text: str) -> Iterator[str]:
    """The relative link targets of a Markdown text (code blocks and URLs left out)."""
    for match in LINK.finditer(FENCE.sub("", text)):
        target = match.group(2)
        if not re.match(r"[a-z]+:", target) and not target.startswith("#"):
            yield target.partition("#")[0]


def resolve(page: str, target: str, root: Path = ROOT) -> str | None:
    """The repository path a link of ``page`` names (a folder: its README.md), or None when
    it names nothing in the repository (mkdocs then reports it, and --strict fails)."""
    joined = PurePosixPath(page).parent / target
    parts: list[str] = []
    for part in joined.parts:
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part != ".":
            parts.append(part)
    path = "/".join(parts)
    if (root / path).is_dir():
        readme = f"{path}/README.md" if path else "README.md"
        return readme if (root / readme).is_file() else None
    return path if (root / path).is_file() else None


def gathered(root: Path = ROOT) -> list[str]:
    """The repository paths of the site: its pages and, transitively, what they link to."""
    docs = sorted(p.relative_to(root).as_posix() for p in (root / "docs").rglob("*")
                  if p.is_file())
    todo = [*PAGES, *spec_pages(root), *docs]
    seen: list[str] = []
    while todo:
        path = todo.pop(0)
        if path in seen:
            continue
        seen.append(path)
        if path.endswith(".md"):
            text = (root / path).read_text(encoding="utf-8")
            todo += [found for target in links(text)
                     if (found := resolve(path, target, root)) is not None]
    return seen


def on_config(config: Any) -> Any:
    """GitHub's anchors, and the spec's pages in the navigation."""
    config.mdx_configs.setdefault("toc", {})["slugify"] = slugify
    config.nav.append({"Specification": spec_pages()})
    return config


def on_files(files: Any, config: Any) -> Any:
    """The repository's pages and what they link to, at their repository paths, beside the
    theme's files (docs/ is read from the repository too)."""
    # mkdocs is in the `docs` extra only: typed here as Any, so mypy passes without it.
    mkdocs_files = importlib.import_module("mkdocs.structure.files")
    File, Files = mkdocs_files.File, mkdocs_files.Files
    docs_dir = Path(config.docs_dir).resolve()
    kept = [f for f in files if not Path(f.abs_src_path or "").resolve().is_relative_to(docs_dir)]
    site = Files(kept)
    for path in gathered():
        dest_uri = None
        if path == f"{SPEC}/README.md":  # spec/index.md is the spec's index page
            dest_uri = (f"{SPEC}/conventions/index.html" if config.use_directory_urls
                        else f"{SPEC}/conventions.html")
        site.append(File(path, str(ROOT), config.site_dir, config.use_directory_urls,
                         dest_uri=dest_uri))
    return site


def _algorithm_sections() -> str:
    from timealign import registry

    sections = []
    for name in registry.names():
        package = registry.package(name)
        sections.append(f"## `{name}`\n\n::: {package}\n    options:\n      members: false\n\n"
                        f"::: {package}.model\n\n::: {package}.machine\n")
    return "\n".join(sections)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """A link to a folder names its README; the API page gets the registered algorithms."""
    src = page.file.src_uri

    def to_readme(match: re.Match[str]) -> str:
        target, hashed, anchor = match.group(2).partition("#")
        if target.endswith("/") and not re.match(r"[a-z]+:", target):
            found = resolve(src, target)
            if found is not None:
                target = target + "README.md"
        return f"{match.group(1)}{target}{hashed}{anchor}{match.group(3)}"

    pieces, last = [], 0
    for fence in FENCE.finditer(markdown):
        pieces.append(LINK.sub(to_readme, markdown[last:fence.start()]))
        pieces.append(fence.group(0))
        last = fence.end()
    pieces.append(LINK.sub(to_readme, markdown[last:]))
    markdown = "".join(pieces)
    if src == "docs/api.md":
        markdown = markdown.replace(ALGORITHMS_MARK, _algorithm_sections())
    return markdown


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """The API reference without the Sphinx roles of the docstrings (``:class:``), which
    mkdocstrings leaves before the code they mark."""
    return ROLE.sub("", html)
