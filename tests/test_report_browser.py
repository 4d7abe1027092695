"""The report in a real browser: headless Chromium, no console error, every part shown.

CI installs Debian's Chromium (``.ci/run``); the tests are skipped only on a
machine without it and outside CI (the environment variable ``CI`` unset).
"""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from skdecomp._report import write_report
from skdecomp._report._common import REGIONS_HELP

DATA = Path(__file__).resolve().parent / "data" / "report_analysis.json"
#: every section of a report with a fitted model, per column and AGREED
SECTIONS = ["data-checks", "verdict", "model", "drivers", "agreement", "sources",
            "interactions", "regions", "agreed"]


def _chromium():
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing in CI; .ci/run installs Debian's chromium")
        pytest.skip("chromium is not installed (Debian package 'chromium')")
    return path


def _run(chromium, tmp_path, *args):
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    return subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
         *args],
        capture_output=True, text=True, timeout=120, check=False,
    )


def console_errors(chromium, page, tmp_path):
    """Every message of the page's console, and uncaught exceptions.

    The report runs no script, so any console message is a fault (Chromium's
    log does not say which level a message has).
    """
    r = _run(chromium, tmp_path, "--enable-logging=stderr", "--v=0",
             "--virtual-time-budget=3000", "--dump-dom", page.as_uri())
    assert r.returncode == 0, r.stderr[-2000:]
    return [line for line in r.stderr.splitlines() if ":CONSOLE" in line]


#: run in the page: errors, images that did not decode, and the sections
#: and figures shown, written into the page for --dump-dom
PROBE = """<script>
window.__errors = [];
window.addEventListener("error", e => window.__errors.push(String(e.message)), true);
const _error = console.error;
console.error = (...a) => { window.__errors.push(a.join(" ")); _error(...a); };
window.addEventListener("load", () => {
  const shown = el => el.getBoundingClientRect().height > 0;
  const out = {
    errors: window.__errors,
    sections: [...document.querySelectorAll("section[id]")].filter(shown).map(s => s.id),
    figures: [...document.querySelectorAll("figure[data-figure] img")].map(img => ({
      key: img.parentElement.dataset.figure,
      decoded: img.complete && img.naturalWidth > 0,
      width: img.getBoundingClientRect().width})),
    scripts: document.querySelectorAll("script").length - 1,
  };
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def probe(chromium, page, tmp_path):
    """What the page shows in the browser, from a copy with the probe script."""
    copy = tmp_path / f"probed-{page.parent.name}.html"
    html = page.read_text(encoding="utf-8")
    copy.write_text(html.replace("<head>", "<head>" + PROBE, 1), encoding="utf-8")
    r = _run(chromium, tmp_path, "--virtual-time-budget=3000", "--dump-dom", copy.as_uri())
    assert r.returncode == 0, r.stderr[-2000:]
    m = re.search(r'<pre id="probe">(.*?)</pre>', r.stdout, re.S)
    assert m, "the probe did not run: " + r.stdout[-500:]
    return json.loads(m.group(1).replace("&quot;", '"').replace("&lt;", "<")
                      .replace("&gt;", ">").replace("&amp;", "&"))


def _report(case, tmp_path, results=None):
    pytest.importorskip("matplotlib")
    results = results or json.loads(DATA.read_text())[case]
    results = dict(results, seconds=1.0)
    out = write_report(results, tmp_path / case, title=f"skdecomp report: {case}")
    return out / "index.html", results


def test_the_console_check_sees_an_error(tmp_path):
    chromium = _chromium()
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><head></head><body>"
                   "<script>undefinedFunction();</script>"
                   "<script>console.error('broken');</script></body></html>")
    errors = console_errors(chromium, bad, tmp_path)
    assert any("undefinedFunction" in e for e in errors), errors
    assert any("broken" in e for e in errors), errors
    seen = probe(chromium, bad, tmp_path)
    assert seen["errors"] and seen["sections"] == []


@pytest.mark.parametrize("case", ["demo", "messy", "blocks"])
def test_report_in_headless_chromium(case, tmp_path):
    chromium = _chromium()
    page, results = _report(case, tmp_path)
    assert console_errors(chromium, page, tmp_path) == []
    seen = probe(chromium, page, tmp_path)
    assert seen["errors"] == []
    assert seen["scripts"] == 0  # the report itself runs no script
    regions = results.get("regions")
    present = {
        "agreed": bool(results["agreed"]),
        "sources": bool(results.get("sources")),
        "regions": bool(regions and regions["n_regions"] > 1
                        and regions["share_left"] <= REGIONS_HELP),
    }
    expected = [s for s in SECTIONS if present.get(s, True)]
    assert seen["sections"] == expected
    # every case gets the sources: the messy table's text columns are encoded
    # as its model's pipeline encodes them
    assert present["sources"]
    keys = {f["key"] for f in seen["figures"]}
    want = {"drivers:columns", "agreement:columns", "interactions"}
    if present["sources"]:
        want.add("sources")
    if results["interactions"].get("index"):
        want.add("interaction_terms")
    if results["agreed"]["merges"]:  # merges tried, kept or refused
        want.add("agreed_curve")
    if len(results["agreed"].get("path") or []) > 1:  # the path past the stop
        want.add("agreed_path")
    if "agreed" in results["partitions"]:
        want |= {"drivers:agreed", "agreement:agreed"}
    assert keys == want
    assert all(f["decoded"] and f["width"] > 100 for f in seen["figures"]), seen["figures"]


def test_hostile_column_names_stay_inert_in_the_browser(tmp_path):
    chromium = _chromium()
    results = json.loads(DATA.read_text())["messy"]
    hostile = "<img src=x onerror=console.error('pwned')>"
    text = json.dumps(results).replace("num0", hostile.replace('"', '\\"'))
    page, _ = _report("hostile", tmp_path, json.loads(text))
    assert hostile not in page.read_text()
    assert console_errors(chromium, page, tmp_path) == []
    seen = probe(chromium, page, tmp_path)
    assert seen["errors"] == [] and seen["scripts"] == 0
