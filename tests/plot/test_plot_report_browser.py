"""The run report in a real headless browser (spec/plots.md PL-R9, PL-R14).

Chromium loads the page from a file with a probe appended (the page itself is not
changed): the probe records script errors, clicks a column header and reads the order of
the rows, and checks that every image decoded. ``--dump-dom`` prints the document after
the scripts ran, and the test reads the probe's verdict from it. Marked ``browser``:
``make test-browser`` (run by ``.ci/run``) installs Chromium where it is missing; elsewhere
the test skips naming what is missing, unless ``TIMEALIGN_BROWSER_REQUIRED=1``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from timealign.plot.report import Histogram, Report, page
from timealign.plot.timeline import Mark, Span, Timeline

pytestmark = pytest.mark.browser

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--no-first-run", "--disable-component-update", "--disable-sync",
         "--virtual-time-budget=10000", "--dump-dom")
# Runs before the page's own script: collects uncaught errors.
CATCH = "<script>window.__errors = []; window.addEventListener('error', function (e) {" \
        " window.__errors.push(String(e.message || e.target && e.target.src)); }, true);" \
        "</script>"
# Runs after it: sorts the sources by rows (twice), checks the images, writes the verdict.
PROBE = """<script>
window.addEventListener('load', function () {
  var table = document.querySelectorAll('table.sortable')[1];
  function column(k) { return Array.prototype.slice.call(table.querySelectorAll('tr'))
    .slice(1).map(function (r) { return r.children[k].textContent; }); }
  var before = column(0);
  table.querySelectorAll('th')[1].click();
  var up = column(0);
  table.querySelectorAll('th')[1].click();
  var down = column(0);
  table.querySelectorAll('th')[0].click();
  var byName = column(0);
  var images = Array.prototype.slice.call(document.images).map(function (i) {
    return [i.alt, i.complete && i.naturalWidth > 0]; });
  var out = document.createElement('pre'); out.id = 'verdict';
  out.textContent = JSON.stringify({errors: window.__errors, before: before, up: up,
    down: down, byName: byName, images: images});
  document.body.appendChild(out);
});
</script>"""


def _browser() -> str | None:
    return next((found for name in BROWSERS if (found := shutil.which(name))), None)


def _report() -> Report:
    summary = {
        "rows": 1000, "sources": 3, "groups": 90, "seconds": 1.5, "rows_per_second": 667,
        "outcomes": [{"outcome": "grouped", "reason": None, "rows": 300},
                     {"outcome": "dropped", "reason": "superseded", "rows": 700}],
        "spread_ns": {"p50": 1_000_000, "p90": 2_000_000, "p99": 3_000_000, "p100": None},
        "latency_ns": {"p50": 5, "p90": 5, "p99": 5, "p100": 5},
    }
    sources = [{"source": name, "rows": rows, "grouped": rows // 2, "dropped": rows - rows // 2,
                "rejected": 0, "pending": 0, "groups": 3, "latency_p99_ns": 7_000_000,
                "spread_max_ns": None} for name, rows in (("b", 30), ("c", 1200), ("a", 400))]
    marks = (Mark("m1", "camera", 2_000_000_000, 2_000_000_100, "grouped", None, 0),
             Mark("m2", "imu", 2_000_000_050, 2_000_000_200, "grouped", None, 0),
             Mark("m3", "imu", 2_000_000_900, 2_000_000_950, "dropped", "superseded"))
    timeline = Timeline("source 'b'", ("camera", "imu"), marks,
                        (Span(0, 2_000_000_000, 2_000_000_050, ("m1", "m2"), 2_000_000_300),),
                        origin=1_999_999_000)
    histograms = [Histogram("spread", 0, 1_000_000, (3, 0, 5)),
                  Histogram("latency", 5, 1, (90, *([0] * 39)))]
    return Report("approximate_time", summary, sources, histograms, timeline, "b",
                  {"algorithm": "approximate_time", "input": "in/"},
                  ("topic /gps is in no bag (BAG-R13)",))


def test_pl_r14_report_loads_sorts_and_renders_in_chromium(tmp_path: Path) -> None:
    """PL-R9, PL-R14: no script error, the sources sort by rows both ways and by name,
    every image decodes."""
    browser = _browser()
    if browser is None:
        if os.environ.get("TIMEALIGN_BROWSER_REQUIRED") == "1":
            pytest.fail("no Chromium on PATH (make test-browser installs it)")
        pytest.skip("no Chromium on PATH: `apt-get install chromium`, or make test-browser")
    text = page(_report())
    probed = text.replace("<style>", CATCH + "<style>", 1).replace(
        "</body>", PROBE + "</body>", 1)
    target = tmp_path / "index.html"
    target.write_text(probed, encoding="utf-8")
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run([browser, *FLAGS, f"--user-data-dir={profile}",
                               target.as_uri()], capture_output=True, text=True,
                              timeout=120, check=False)
    found = re.search(r'<pre id="verdict">(.*?)</pre>', done.stdout, re.S)
    assert found is not None, done.stderr[-2000:]
    verdict = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert verdict["errors"] == []
    assert verdict["before"] == ["b", "c", "a"]  # worst first, as given
    assert verdict["up"] == ["b", "a", "c"]  # rows 30 < 400 < 1,200 (by value, not text)
    assert verdict["down"] == ["c", "a", "b"]
    assert verdict["byName"] == ["a", "b", "c"]
    assert len(verdict["images"]) == 3  # shares, spread histogram, timeline
    assert all(ok for _alt, ok in verdict["images"]), verdict["images"]


# Runs after the page's script: the Run section's text, every link as the browser resolved
# it, and the computed background of each outcome row.
READ = """<script>
window.addEventListener('load', function () {
  var run = [], inRun = false;
  Array.prototype.slice.call(document.body.children).forEach(function (e) {
    if (e.tagName === 'H2') { inRun = e.textContent === 'Run'; }
    else if (inRun) { run.push(e.textContent); }
  });
  var links = Array.prototype.slice.call(document.querySelectorAll('a[href]'))
    .map(function (a) { return a.href; });
  var rows = Array.prototype.slice.call(
    document.querySelectorAll('table.sortable')[0].querySelectorAll('tr')).slice(1)
    .map(function (r) { return [r.children[0].textContent,
                                getComputedStyle(r.children[0]).backgroundColor]; });
  var out = document.createElement('pre'); out.id = 'read';
  out.textContent = JSON.stringify({run: run.join('\\n'), links: links, rows: rows,
    verdict: (document.querySelector('p.verdict') || {}).textContent});
  document.body.appendChild(out);
});
</script>"""


def _dom(browser: str, page_file: Path) -> str:
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run([browser, *FLAGS, f"--user-data-dir={profile}",
                               page_file.as_uri()], capture_output=True, text=True,
                              timeout=120, check=False)
    assert "<body" in done.stdout, done.stderr[-2000:]
    return done.stdout


def test_pl_r15_report_folder_reads_as_one_in_chromium(tmp_path: Path) -> None:
    """PL-R14, PL-R15, in a real browser: the Run section is prose and tables (the command
    line, no manifest JSON), every rule link resolves to an element of rules.html inside
    the report folder, and ApproximateTime's normal outcomes are not coloured."""
    from urllib.parse import unquote, urlparse

    from timealign.plot.report import write

    browser = _browser()
    if browser is None:
        if os.environ.get("TIMEALIGN_BROWSER_REQUIRED") == "1":
            pytest.fail("no Chromium on PATH (make test-browser installs it)")
        pytest.skip("no Chromium on PATH: `apt-get install chromium`, or make test-browser")
    manifest = {"format": "timealign.run/1", "command": "run",
                "run": {"algorithm": "approximate_time", "input": "/data/in",
                        "config": {"topics": ["camera", "imu"], "queue_size": 30}},
                "timealign": {"version": "0.1.0", "build": "pure"},
                "started": "2026-01-01T10:00:00+00:00", "ended": "2026-01-01T10:00:42+00:00"}
    report = _report()
    report = Report(report.algorithm, {**report.summary, "verdict": {
        "needs_a_look": False, "line": "verdict: normal", "items": []}},
                    report.sources, report.histograms, report.timeline, report.worst,
                    manifest, command="timealign run approximate_time --input /data/in")
    folder = tmp_path / "report"
    index = write(report, folder)
    index.write_text(index.read_text().replace("</body>", READ + "</body>", 1))
    found = re.search(r'<pre id="read">(.*?)</pre>', _dom(browser, index), re.S)
    assert found is not None
    read = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&")
                      .replace("&lt;", "<").replace("&gt;", ">"))
    assert read["verdict"] == "verdict: normal"
    assert "timealign run approximate_time --input /data/in" in read["run"]
    assert "queue_size" in read["run"] and "42 s" in read["run"]
    assert "{" not in read["run"] and '"format"' not in read["run"]
    rule_links = [urlparse(link) for link in read["links"] if "rules.html" in link]
    assert rule_links
    rules_dom = _dom(browser, folder / "rules.html")
    for link in rule_links:
        target = Path(unquote(link.path))
        assert target == folder / "rules.html" and target.is_file()
        assert f'id="{link.fragment}"' in rules_dom, link.fragment
    assert [name for name, _ in read["rows"]] == ["grouped", "dropped (superseded)"]
    assert {colour for _, colour in read["rows"]} == {"rgba(0, 0, 0, 0)"}  # none coloured
