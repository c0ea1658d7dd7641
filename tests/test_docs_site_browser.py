"""The documentation site in a real headless browser, as the run report is
(tests/plot/test_plot_report_browser.py).

The site is built here as ``make docs`` builds it (``mkdocs build --strict``: a broken link
or anchor fails the build) into a temporary folder, and Chromium loads some pages from it
with a probe appended: the probe records script errors, checks that every image decoded
and lists every link of the page's content as the browser resolved it. Each link into the
site must land on a built file and, with ``#anchor``, on an element of it with that id.
The API reference must hold the public API and each registered algorithm's ``initial``
and ``step``. Marked ``browser``: ``make test-browser`` (run by ``.ci/run``) installs
Chromium and the ``docs`` extra where they are missing; elsewhere the test skips naming
what is missing, unless ``TIMEALIGN_BROWSER_REQUIRED=1``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NoReturn
from urllib.parse import unquote, urlparse

import pytest

from tests.plot.test_plot_report_browser import FLAGS, _browser
from timealign import registry

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
# Runs before the page's own scripts: collects uncaught errors.
CATCH = "<script>window.__errors = []; window.addEventListener('error', function (e) {" \
        " window.__errors.push(String(e.message || e.target && (e.target.src || e.target.href" \
        " || e.target.tagName || e.target))); }, true);" \
        "</script>"
# Runs after them: the images, the links of the content and the headings, as the verdict.
PROBE = """<script>
window.addEventListener('load', function () {
  var content = document.querySelector('article') || document.body;
  var images = Array.prototype.slice.call(content.querySelectorAll('img')).map(
    function (i) { return [i.getAttribute('src'), i.complete && i.naturalWidth > 0]; });
  var links = Array.prototype.slice.call(content.querySelectorAll('a[href]')).map(
    function (a) { return a.href; });
  var ids = Array.prototype.slice.call(content.querySelectorAll('[id]')).map(
    function (e) { return e.id; });
  var out = document.createElement('pre'); out.id = 'verdict';
  out.textContent = JSON.stringify({errors: window.__errors, images: images, links: links,
    ids: ids, title: document.title});
  document.body.appendChild(out);
});
</script>"""
PAGES = ("index.html", "docs/algorithms/index.html", "docs/conformance/index.html",
         "spec/approximate_time/index.html", "spec/conventions/index.html",
         "docs/api/index.html")


def _needs(what: str, how: str) -> NoReturn:
    if os.environ.get("TIMEALIGN_BROWSER_REQUIRED") == "1":
        pytest.fail(f"{what} (make test-browser installs it)")
    pytest.skip(f"{what}: {how}, or make test-browser")


@pytest.fixture(scope="module")
def site() -> Path:
    """The site, built as `make docs` builds it, into a temporary folder."""
    if importlib.util.find_spec("mkdocs") is None:
        _needs("no mkdocs", "pip install '.[docs]'")
    folder = Path(tempfile.mkdtemp(prefix="timealign-site-"))
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                            "--site-dir", str(folder)], cwd=ROOT, capture_output=True,
                           text=True, timeout=600, check=False,
                           env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert built.returncode == 0, built.stderr[-4000:]
    return folder


def _verdict(browser: str, page: Path) -> dict[str, object]:
    """The probe's verdict of ``page``, loaded with the probe written into it (the site is
    this test's own build; the page is restored after)."""
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace("<head>", "<head>" + CATCH, 1).replace(
        "</body>", PROBE + "</body>", 1), encoding="utf-8")
    try:
        with tempfile.TemporaryDirectory() as profile:
            done = subprocess.run([browser, *FLAGS, f"--user-data-dir={profile}",
                                   page.as_uri()], capture_output=True, text=True,
                                  timeout=120, check=False)
    finally:
        page.write_text(text, encoding="utf-8")
    found = re.search(r'<pre id="verdict">(.*?)</pre>', done.stdout, re.S)
    assert found is not None, done.stderr[-2000:]
    verdict: dict[str, object] = json.loads(
        found.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
        .replace("&amp;", "&"))
    return verdict


def _landing(site: Path, link: str) -> tuple[Path, str] | None:
    """The built file a link of the site lands on and its anchor; None for one leaving it."""
    url = urlparse(link)
    if url.scheme != "file":
        return None
    target = Path(unquote(url.path))
    if target.is_dir():
        target = target / "index.html"
    return target, url.fragment


@pytest.mark.parametrize("name", PAGES)
def test_docs_site_page_loads_and_every_link_lands_in_chromium(site: Path, name: str) -> None:
    """No script error, every image decodes, every link into the site lands on a built page
    and, with an anchor, on an element with that id."""
    browser = _browser()
    if browser is None:
        _needs("no Chromium on PATH", "`apt-get install chromium`")
    verdict = _verdict(browser, site / name)
    assert verdict["errors"] == [], verdict["errors"]
    images = verdict["images"]
    assert isinstance(images, list) and all(ok for _src, ok in images), images
    links = verdict["links"]
    assert isinstance(links, list) and links, f"{name} has no link"
    missing = []
    for link in links:
        landing = _landing(site, link)
        if landing is None:
            continue
        target, anchor = landing
        if not target.is_file() or not target.resolve().is_relative_to(site.resolve()):
            missing.append(f"{link} (no such page)")
        elif anchor and target.suffix == ".html" and re.search(
                rf'\bid="{re.escape(unquote(anchor))}"', target.read_text("utf-8")) is None:
            missing.append(f"{link} (no such anchor)")
    assert not missing, "\n".join(missing)


def test_docs_site_api_reference_holds_the_public_api(site: Path) -> None:
    """The API reference, as the browser shows it, documents `run`, `drive`, the vector
    format and, for every registered algorithm, its config and its `initial` and `step`;
    the docstrings' Sphinx roles (`:class:`) are not shown as text."""
    browser = _browser()
    if browser is None:
        _needs("no Chromium on PATH", "`apt-get install chromium`")
    ids = _verdict(browser, site / "docs" / "api" / "index.html")["ids"]
    assert isinstance(ids, list)
    wanted = {"timealign.algorithm.run", "timealign.algorithm.Algorithm",
              "timealign.drive.drive", "timealign.vectors", "timealign.registry.get"}
    for name in registry.names():
        package = registry.package(name)
        wanted |= {f"{package}.model.Config", f"{package}.machine.initial",
                   f"{package}.machine.step"}
    assert wanted <= set(ids), sorted(wanted - set(ids))
    html = (site / "docs" / "api" / "index.html").read_text(encoding="utf-8")
    assert not re.search(r":(?:class|func|meth|attr|mod):", html)  # the roles are dropped
