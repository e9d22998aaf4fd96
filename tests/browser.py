"""A real browser for the tests: Debian's Chromium driven by Selenium through chromedriver.

Selenium is given the driver's path, so it never downloads a browser or a driver. Under CI
(`CI` set) a missing browser is a failure, not a skip: those tests must run there.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# The paths and flags `make samples` takes its screenshots with: one definition.
from tools.screenshots import CHROMEDRIVER, CHROMIUM, FLAGS


def browser_missing() -> str | None:
    """Why no browser test can run here, or None when one can."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not (Path(path).is_file() and os.access(path, os.X_OK)):
            return f"{path} not found (apt-get install chromium chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium not installed (pip install -e '.[dev]')"
    return None


# Seconds a page load, a script or a condition may take: a budget a busy machine meets (CI
# must not depend on an idle one). Tests wait on conditions (`wait_until`), never on time.
BUDGET = 300


def wait_until(driver: object, condition, message: str = "") -> object:
    """Wait until `condition(driver)` is truthy (checked every 0.05 s), at most BUDGET s."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, BUDGET, poll_frequency=0.05).until(condition, message)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """One headless Chromium for the whole session (about 0.2 s a page once it is open)."""
    why = browser_missing()
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"browser tests must run in CI: {why}")
        pytest.skip(why)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="gradviz-chromium-")
    for flag in (*FLAGS, f"--user-data-dir={profile}", "--window-size=1600,1200"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_script_timeout(BUDGET)
    driver.set_page_load_timeout(BUDGET)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def open_page(driver: object, html: str, folder: Path) -> None:
    """Show `html` in the browser from a file (as a user opens a saved page)."""
    page = folder / "page.html"
    page.write_text(html, encoding="utf-8")
    driver.get(page.as_uri())


def blocked_requests(driver: object) -> list[str]:
    """Try to load an image and fetch a URL from the open page; the directives of the
    page's security policy that refused them (both, for a page that requests nothing)."""
    return driver.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        const seen = [];
        document.addEventListener('securitypolicyviolation', e => seen.push(e.effectiveDirective));
        const img = new Image(); img.src = 'http://127.0.0.1:9/x.png';
        fetch('http://127.0.0.1:9/x').catch(() => {});
        setTimeout(() => done(seen), 500);
        """
    )


def inline_svg_page(svg: str, width_px: int | None = None) -> str:
    """A page holding `svg` inline (its XML declaration and doctype dropped), optionally
    fitted to `width_px` as a docs page would embed it."""
    start = svg.find("<svg")
    style = f"<style>svg{{max-width:{width_px}px;height:auto}}</style>" if width_px else ""
    head = f"<!doctype html><html><head><meta charset='utf-8'>{style}</head>"
    return f"{head}<body>{svg[start:]}</body></html>"


# Each Graphviz node group: the box of its shape and the boxes of its texts, as the browser
# lays them out with the fonts it really has.
NODE_GEOMETRY_JS = """
const box = r => ({x: r.x, y: r.y, right: r.x + r.width, bottom: r.y + r.height});
return Array.from(document.querySelectorAll('g.node')).map(g => {
  const shape = g.querySelector('polygon, ellipse, path, rect');
  return {
    id: g.id,
    title: (g.querySelector('title') || {}).textContent,
    shape: shape ? box(shape.getBoundingClientRect()) : null,
    texts: Array.from(g.querySelectorAll('text')).map(t => ({
      text: t.textContent, ...box(t.getBoundingClientRect())})),
  };
});
"""
