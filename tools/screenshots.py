"""Screenshots of the live pages for the README (`make samples`, after the pages are written):
docs/html-draw.png (the hand example after nudging `a`, a node's details shown) and
docs/html-trace.png (the trace page on its third step), and docs/report-xor.png (the report
page of samples/xor.toml, written here into a temporary folder: `train --report`).

Needs Chromium, chromedriver and selenium (`pip install -e '.[dev]'`, apt-get install chromium
chromium-driver); without them it says so and leaves the pictures as they are.

Chromium's PNG bytes differ between machines (fonts, versions) for the same page, so a
picture's freshness is not its bytes: docs/screenshots.json records, beside each picture,
the hash of what it was taken of (the page's bytes, the scripts run in it, the window's
width and the browser's flags: `shot_inputs`) and the hash of the PNG taken. A picture
whose record matches is left as it is (no browser started when none changed: `make
samples` on a fresh clone changes nothing); `--force` takes them all again. The tests
compare the record with the pages `make samples` writes now, exactly, on any machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from gradviz.files import write_atomic

CHROMIUM = os.environ.get("GRADVIZ_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("GRADVIZ_CHROMEDRIVER", "/usr/bin/chromedriver")
# Headless, with no network of its own: without the background-networking flags Chromium
# keeps trying hosts this machine cannot reach. The tests' browser (tests/browser.py) uses
# the same paths and flags.
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
)
WIDTH = 1100

# What each screenshot shows: the page, then scripts run in it before the picture.
SHOTS = {
    "html-draw.png": (
        "hand.html",
        [
            "const a = document.getElementById('range-0'); a.focus();"
            "a.value = '2.5'; a.dispatchEvent(new Event('input'));",
            "const g = Array.from(document.querySelectorAll('#graph g.node'))"
            ".find(n => n.querySelector('title').textContent === 'n6_op'); g.focus();",
        ],
    ),
    "html-trace.png": (
        "hand-trace.html",
        ["document.getElementById('next').click(); document.getElementById('next').click();"],
    ),
    "report-xor.png": (
        "report-xor.html",  # written by report_page() below, not kept in docs/
        [
            "const e = document.getElementById('epoch'); e.value = '4';"
            "e.dispatchEvent(new Event('input'));",
            "document.querySelector('#examples button[data-i=\"2\"]').click();",
        ],
    ),
}


def report_page(root: Path, folder: Path) -> Path:
    """`gradviz train samples/xor.toml --report` into `folder`, run from the repository's
    root so the page names the spec as the README does, and laid out by the program that
    draws the docs (graphviz-pure unless GRADVIZ_DOT names one: a system `dot` lays the
    network out differently, and the page would differ between machines)."""
    import subprocess  # lazy: start-up

    from tools.samples import docs_program  # lazy: start-up

    page = folder / "report-xor.html"
    program = docs_program()
    env = {**os.environ, **({"GRADVIZ_DOT": program.path} if program else {})}
    command = [sys.executable, "-m", "gradviz", "train", "samples/xor.toml", "-q"]
    subprocess.run([*command, "--report", str(page)], cwd=root, check=True, env=env)
    return page


RECORD = "screenshots.json"  # in docs/: each picture's inputs and its PNG, by hash
RECORD_FORMAT = 1  # bump when the way a picture is taken changes (a new step, a wait)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def shot_inputs(name: str, page: bytes) -> str:
    """The hash of everything a picture is taken of, but the browser itself: the page's
    bytes (pages are self-contained: one file, nothing fetched), the scripts run in it,
    the window's width and Chromium's flags."""
    _, scripts = SHOTS[name]
    what = {
        "format": RECORD_FORMAT,
        "picture": name,
        "page": _sha256(page),
        "scripts": scripts,
        "width": WIDTH,
        "flags": list(FLAGS),
    }
    return _sha256(json.dumps(what, sort_keys=True).encode("utf-8"))


def read_record(docs: Path) -> dict[str, dict[str, str]]:
    """docs/screenshots.json: picture name -> {"inputs": hash, "png": hash} (empty when
    there is none, or it is not one)."""
    try:
        record = json.loads((docs / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def is_fresh(docs: Path, name: str, inputs: str, record: dict[str, dict[str, str]]) -> bool:
    """Whether docs/NAME is the picture of `inputs`, as recorded (and not edited since)."""
    seen = record.get(name)
    try:
        png = (docs / name).read_bytes()
    except OSError:
        return False
    return (
        isinstance(seen, dict)
        and seen.get("inputs") == inputs
        and seen.get("png") == (_sha256(png))
    )


def _page_of(name: str, docs: Path, folder: Path) -> Path:
    page = SHOTS[name][0]
    return (folder if page.startswith("report-") else docs) / page


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    force = "--force" in args
    args = [a for a in args if a != "--force"]
    docs = (Path(args[0]) if args else Path.cwd()) / "docs"
    profile = tempfile.mkdtemp(prefix="gradviz-shots-")
    try:
        report_page(docs.parent, Path(profile))
        record = read_record(docs)
        inputs = {
            name: shot_inputs(name, _page_of(name, docs, Path(profile)).read_bytes())
            for name in SHOTS
        }
        wanted = [name for name in SHOTS if force or not is_fresh(docs, name, inputs[name], record)]
        if not wanted:
            print(f"screenshots unchanged: {', '.join(SHOTS)} (their pages are as recorded)")
            return 0
        taken = _take(docs, Path(profile), wanted)
        if taken is None:
            return 0
        for name, png in taken.items():
            write_atomic(docs / name, png)
            record[name] = {"inputs": inputs[name], "png": _sha256(png)}
            print(f"wrote {docs / name}")
        text = json.dumps({k: record[k] for k in sorted(record) if k in SHOTS}, indent=1)
        write_atomic(docs / RECORD, text + "\n")
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return 0


def _take(docs: Path, profile: Path, names: list[str]) -> dict[str, bytes] | None:
    """Each picture of `names` as Chromium shows its page (None, said, without a browser)."""
    try:
        from selenium import webdriver  # lazy: start-up (a dev extra, for this tool only)
        from selenium.webdriver.chrome.service import Service  # lazy: start-up
    except ImportError:
        print("screenshots skipped: selenium is not installed", file=sys.stderr)
        return None
    if not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()):
        print("screenshots skipped: no chromium/chromedriver", file=sys.stderr)
        return None
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    browser_profile = profile / "browser"
    for flag in (*FLAGS, f"--user-data-dir={browser_profile}", f"--window-size={WIDTH},900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    taken = {}
    try:
        for name in names:
            driver.set_window_size(WIDTH, 500)
            driver.get(_page_of(name, docs, profile).resolve().as_uri())
            for script in SHOTS[name][1]:
                driver.execute_script(script)
            time.sleep(0.3)
            # The window's height includes what the viewport does not: grow it until the
            # whole page fits.
            for _ in range(3):
                height = driver.execute_script("return document.documentElement.scrollHeight")
                inner = driver.execute_script("return window.innerHeight")
                if inner >= height:
                    break
                size = driver.get_window_size()
                driver.set_window_size(WIDTH, size["height"] + height - inner + 8)
                time.sleep(0.2)
            taken[name] = driver.get_screenshot_as_png()
    finally:
        driver.quit()
    return taken


if __name__ == "__main__":
    sys.exit(main())
