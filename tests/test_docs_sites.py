"""The fence in real docs tools: the sample MkDocs site and the sample Sphinx project of
tests/docs_sites/ built offline into tmp_path (mkdocs with mkdocs-material and SuperFences;
sphinx with MyST), in strict mode and not, with a bad fence and without.

Each build takes seconds: the tests are marked slow (CI runs them; without the `docs` extra
they skip locally, and fail under CI)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from docs_tools import build, inline_svgs, require_docs_tools

SITES = Path(__file__).parent / "docs_sites"
BAD = '# Bad\n\nA fence with a typo:\n\n```gradviz\ndraw "a*" a=2\n```\n'
BAD_LINE = 5  # of the fence in BAD

pytestmark = pytest.mark.slow


@pytest.fixture
def mkdocs_site(tmp_path: Path, xor_report, deep_report) -> Path:
    require_docs_tools()
    site = tmp_path / "site"
    shutil.copytree(SITES / "mkdocs", site)
    shutil.copy(xor_report[0], site / "xor.json")
    shutil.copy(deep_report[0], site / "deep.json")
    return site


def _mkdocs(site: Path, cache: Path, *flags: str):
    return build(["mkdocs", "build", "-d", str(site / "out"), *flags], site, cache)


def _page_without_frames(page: str) -> str:
    """A page's HTML without the live pages' srcdoc (a page of its own, ids and all)."""
    return re.sub(r'srcdoc="[^"]*"', 'srcdoc=""', page)


def test_the_mkdocs_site_builds_strict_with_every_kind_of_fence(
    mkdocs_site: Path, tmp_path: Path
) -> None:
    done = _mkdocs(mkdocs_site, tmp_path / "cache", "--strict")
    assert done.returncode == 0, done.stderr
    page = (mkdocs_site / "out" / "index.html").read_text("utf-8")
    outside = _page_without_frames(page)
    # two draws, the step of the trace, the network and the gradient plot
    assert inline_svgs(outside) == 5
    assert outside.count('<pre class="mermaid">flowchart') == 1
    assert page.count('<iframe class="gradviz-page"') == 1
    assert "gradviz-error" not in page
    ids = re.findall(r'\bid="(gv\d+-[^"]+)"', outside)
    assert ids and len(ids) == len(set(ids)), "ids shared by two diagrams"
    # no fence left as plain code (SuperFences' fallback when a formatter fails)
    assert "draw &quot;e = a*b" not in outside and 'draw "e = a*b' not in outside
    assert "Step 5/7" in outside  # the trace fence in the admonition, at its step


def test_a_warm_rebuild_draws_nothing(mkdocs_site: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _mkdocs(mkdocs_site, cache, "--strict")
    # the hand example is on the page twice: drawn once
    assert "gradviz fences: 1 from the cache, 6 drawn" in first.stderr, first.stderr
    page = (mkdocs_site / "out" / "index.html").read_text("utf-8")
    again = _mkdocs(mkdocs_site, cache, "--strict")
    assert "gradviz fences: 7 from the cache, 0 drawn" in again.stderr, again.stderr
    assert (mkdocs_site / "out" / "index.html").read_text("utf-8") == page
    assert not list(mkdocs_site.rglob("*.gradviz*")), "the cache is outside the site"


def test_strict_mkdocs_fails_on_a_bad_fence_naming_page_and_line(
    mkdocs_site: Path, tmp_path: Path
) -> None:
    (mkdocs_site / "docs" / "bad.md").write_text(BAD, "utf-8")
    cache = tmp_path / "cache"
    done = _mkdocs(mkdocs_site, cache, "--strict")
    assert done.returncode != 0
    assert f"docs/bad.md:{BAD_LINE}: syntax error" in done.stderr, done.stderr
    cached = {p.read_text("utf-8") for p in cache.glob("*.html")}
    assert not any("gradviz-error" in c for c in cached), "an error was cached"


def test_without_strict_the_page_shows_an_error_box(mkdocs_site: Path, tmp_path: Path) -> None:
    (mkdocs_site / "docs" / "bad.md").write_text(BAD, "utf-8")
    done = _mkdocs(mkdocs_site, tmp_path / "cache")
    assert done.returncode == 0, done.stderr
    assert f"WARNING -  gradviz fence failed: docs/bad.md:{BAD_LINE}: syntax error" in done.stderr
    page = (mkdocs_site / "out" / "bad" / "index.html").read_text("utf-8")
    assert 'class="gradviz-error"' in page and f"docs/bad.md:{BAD_LINE}" in page
    assert inline_svgs(page) == 0 and "<code>draw" not in page


def test_a_fence_fixed_after_an_error_shows_the_new_picture(
    mkdocs_site: Path, tmp_path: Path
) -> None:
    """No stale picture: an error caches nothing, so the page after the fix is drawn."""
    bad = mkdocs_site / "docs" / "bad.md"
    bad.write_text(BAD, "utf-8")
    cache = tmp_path / "cache"
    _mkdocs(mkdocs_site, cache)
    bad.write_text(BAD.replace('"a*"', '"a*3"'), "utf-8")
    done = _mkdocs(mkdocs_site, cache, "--strict")
    assert done.returncode == 0, done.stderr
    page = (mkdocs_site / "out" / "bad" / "index.html").read_text("utf-8")
    assert "gradviz-error" not in page and "data 6" in page


@pytest.fixture
def sphinx_project(tmp_path: Path) -> Path:
    require_docs_tools()
    project = tmp_path / "project"
    shutil.copytree(SITES / "sphinx", project)
    return project


def _sphinx(project: Path, cache: Path, *flags: str):
    return build(["sphinx", "-b", "html", "-q", *flags, ".", "out"], project, cache)


def test_the_sphinx_project_builds_with_warnings_as_errors(
    sphinx_project: Path, tmp_path: Path
) -> None:
    done = _sphinx(sphinx_project, tmp_path / "cache", "-W")
    assert done.returncode == 0, done.stderr
    index = (sphinx_project / "out" / "index.html").read_text("utf-8")
    myst = (sphinx_project / "out" / "myst.html").read_text("utf-8")
    assert inline_svgs(index) == 2 and "Step 5/7" in index
    assert index.count('<pre class="mermaid">flowchart') == 1
    assert inline_svgs(myst) == 1  # the MyST fence
    assert myst.count('<iframe class="gradviz-page"') == 1
    ids = re.findall(r'\bid="(gv\d+-[^"]+)"', index)
    assert ids and len(ids) == len(set(ids))


def test_sphinx_w_fails_on_a_bad_fence_naming_page_and_line(
    sphinx_project: Path, tmp_path: Path
) -> None:
    (sphinx_project / "bad.md").write_text(BAD.replace("```gradviz", "```{gradviz}"), "utf-8")
    with (sphinx_project / "index.rst").open("a", encoding="utf-8") as index:
        index.write("\n.. toctree::\n\n   bad\n")
    done = _sphinx(sphinx_project, tmp_path / "cache", "-W")
    assert done.returncode != 0
    assert f"bad.md:{BAD_LINE}: WARNING: gradviz fence failed: syntax error" in done.stderr

    done = _sphinx(sphinx_project, tmp_path / "cache", "-E")  # not strict: the error box
    assert done.returncode == 0, done.stderr
    page = (sphinx_project / "out" / "bad.html").read_text("utf-8")
    assert 'class="gradviz-error"' in page and f"bad.md:{BAD_LINE}" in page


def test_the_plugin_without_the_fence_says_how_to_add_it(mkdocs_site: Path, tmp_path: Path) -> None:
    config = mkdocs_site / "mkdocs.yml"
    text = config.read_text("utf-8")
    config.write_text(text[: text.index("markdown_extensions:")] + "plugins:\n  - gradviz\n")
    done = _mkdocs(mkdocs_site, tmp_path / "cache")
    assert done.returncode != 0
    assert "gradviz plugin: add the gradviz fence to pymdownx.superfences" in done.stderr
