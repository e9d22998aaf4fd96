"""Screenshots of the live pages for the README (`make samples`, after the pages are written):
docs/html-draw.png (the hand example after nudging `a`, a node's details shown) and
docs/html-trace.png (the trace page on its third step), and docs/report-xor.png (the report
page of samples/xor.toml, written here into a temporary folder: `train --report`).

Needs Chromium, chromedriver and selenium (`pip install -e '.[dev]'`, apt-get install chromium
chromium-driver); without them it says so and leaves the pictures as they are.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

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
    root so the page names the spec as the README does."""
    import subprocess  # lazy: start-up

    page = folder / "report-xor.html"
    command = [sys.executable, "-m", "gradviz", "train", "samples/xor.toml", "-q"]
    subprocess.run([*command, "--report", str(page)], cwd=root, check=True)
    return page


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    docs = (Path(args[0]) if args else Path.cwd()) / "docs"
    try:
        from selenium import webdriver  # lazy: start-up (a dev extra, for this tool only)
        from selenium.webdriver.chrome.service import Service  # lazy: start-up
    except ImportError:
        print("screenshots skipped: selenium is not installed", file=sys.stderr)
        return 0
    if not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()):
        print("screenshots skipped: no chromium/chromedriver", file=sys.stderr)
        return 0
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="gradviz-shots-")
    for flag in (*FLAGS, f"--user-data-dir={profile}", f"--window-size={WIDTH},900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        report_page(docs.parent, Path(profile))
        for name, (page, scripts) in SHOTS.items():
            driver.set_window_size(WIDTH, 500)
            folder = Path(profile) if page.startswith("report-") else docs
            driver.get((folder / page).resolve().as_uri())
            for script in scripts:
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
            driver.save_screenshot(str(docs / name))
            print(f"wrote {docs / name}")
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
