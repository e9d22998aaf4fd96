"""Our own docs site (mkdocs.yml, docs/) built as `make docs` builds it, with --strict, into
tmp_path, and read in Chromium at 800 px in the light and the dark scheme: every diagram the
fence drew fits the column, none is an error box, and Mermaid is drawn by the site's own copy.

Marked slow (the build draws every picture of the site, a network trained among them)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from docs_tools import build, inline_svgs, require_docs_tools

ROOT = Path(__file__).resolve().parent.parent
MERMAID = ROOT / "tests" / "mermaid" / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"
WIDTH = 800

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def our_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as `make docs` builds it: the docs copied (with the Mermaid the tests
    install), the fences run in a folder with samples/ and a freshly trained xor.json."""
    require_docs_tools()
    if not MERMAID.is_file():
        pytest.fail(f"{MERMAID} missing: make tests/mermaid/node_modules/.installed")
    root = tmp_path_factory.mktemp("our-site")
    shutil.copytree(ROOT / "docs", root / "docs")  # docs/samples, a link, copied as files
    shutil.copy(MERMAID, root / "docs" / "assets" / "mermaid.min.js")
    run = root / "run"
    run.mkdir()
    shutil.copytree(ROOT / "samples", root / "samples")  # inside the project, as in the repo
    (run / "samples").symlink_to("../samples")  # as make docs links build/docs/samples
    trained = subprocess.run(
        [sys.executable, "-m", "gradviz", "train", "samples/xor.toml", "-q", "--save", "xor.json"],
        cwd=run,
        capture_output=True,
        text=True,
    )
    assert trained.returncode == 0, trained.stderr
    (root / "mkdocs.yml").write_text(
        f"INHERIT: {ROOT / 'mkdocs.yml'}\n"
        "docs_dir: docs\nsite_dir: site\n"
        "plugins:\n  - search\n  - gradviz:\n      base: run\n",
        encoding="utf-8",
    )
    done = build(["mkdocs", "build", "--strict"], root, root / "cache")
    assert done.returncode == 0, done.stderr
    return root / "site"


def _pages(site: Path) -> list[Path]:
    """The site's pages (page.html: use_directory_urls is false)."""
    return sorted(
        p
        for p in site.rglob("*.html")
        if not {"search", "assets"} & set(p.relative_to(site).parts) and p.name != "404.html"
    )


def test_the_site_has_its_pages_and_every_diagram_is_drawn(our_site: Path) -> None:
    names = {str(p.relative_to(our_site).with_suffix("")) for p in _pages(our_site)}
    assert {"index", "lesson", "pictures", "fence", "manual/draw"} <= names
    pictures = (our_site / "pictures.html").read_text("utf-8")
    assert inline_svgs(pictures) >= 10
    for page in _pages(our_site):
        text = page.read_text("utf-8")
        assert "gradviz-error" not in text, page
        assert "language-gradviz" not in text, page  # a fence shown as plain code


def test_every_link_between_pages_names_a_file(our_site: Path) -> None:
    """From file:// a link to a folder (`manual/draw/`) opens a directory listing: every
    link to a page of the site names its .html file, and the file is there."""
    for page in _pages(our_site):
        for href in re.findall(r'<a [^>]*href="([^"#]*)(?:#[^"]*)?"', page.read_text("utf-8")):
            if not href or "://" in href or href.startswith(("mailto:", "data:")):
                continue
            target = (page.parent / href).resolve()
            assert not href.endswith("/") and target.is_file(), (page.name, href)


GEOMETRY_JS = """
const column = document.querySelector('.md-content__inner').getBoundingClientRect();
const drawn = 'svg.gradviz, img.gradviz-animation, iframe.gradviz-page, div.mermaid, '
  + '.gradviz-error';
return {
  column: [column.left, column.right],
  background: getComputedStyle(document.body).backgroundColor,
  errors: document.querySelectorAll('.gradviz-error').length,
  waiting: document.querySelectorAll('pre.mermaid').length,
  diagrams: Array.from(document.querySelectorAll(drawn)).map(e => {
    const r = e.getBoundingClientRect();
    return {what: e.tagName + '.' + e.getAttribute('class'), left: r.left, right: r.right,
            width: r.width, height: r.height};
  }),
};
"""


def _luminance(css: str) -> float:
    red, green, blue = (int(v) for v in css[css.index("(") + 1 : css.index(")")].split(",")[:3])
    return (0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255


@pytest.mark.parametrize("scheme", ["default", "slate"], ids=["light", "dark"])
def test_every_diagram_fits_the_column_at_800_px(our_site: Path, browser, scheme: str) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    browser.set_window_size(WIDTH, 1000)
    try:
        for page in _pages(our_site):
            browser.get(page.as_uri())
            browser.execute_script(
                "document.body.setAttribute('data-md-color-scheme', arguments[0])", scheme
            )
            # Mermaid (the site's own copy) replaces each pre.mermaid with its drawing
            WebDriverWait(browser, 60).until(
                lambda d: (
                    d.execute_script("return document.querySelectorAll('pre.mermaid').length") == 0
                )
            )
            seen = browser.execute_script(GEOMETRY_JS)
            name = page.relative_to(our_site)
            dark = _luminance(seen["background"]) < 0.3
            assert dark == (scheme == "slate"), f"{name}: {seen['background']}"
            assert seen["errors"] == 0, f"{name}: an error box"
            left, right = seen["column"]
            for diagram in seen["diagrams"]:
                assert diagram["width"] > 50 and diagram["height"] > 20, (name, diagram)
                assert diagram["left"] >= left - 1 and diagram["right"] <= right + 1, (
                    f"{name}: {diagram['what']} overflows the column {left:.0f}-{right:.0f}: "
                    f"{diagram['left']:.0f}-{diagram['right']:.0f}"
                )
    finally:
        browser.set_window_size(1600, 1200)
