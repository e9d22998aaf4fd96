"""The fence under attack in real builds (issue 33): a fence whose body names a file to
write or a file outside the project, a file too big to hash, a changed CSV behind a spec,
front matter and quoted fences before the fence (its page:LINE), files beside the page.
Each through `mkdocs build` and `sphinx-build`, offline, in tmp_path.

Each build takes seconds: marked slow (CI runs them)."""

from __future__ import annotations

import os
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from docs_tools import build, inline_svgs, require_docs_tools

SITES = Path(__file__).parent / "docs_sites"
SECRET = "gv-secret-7f3a9c2e41"  # in the builds' environment: no page or log may show it

pytestmark = pytest.mark.slow


def _fence(body: str, header: str = "") -> str:
    return f"```gradviz{header}\n{body}\n```\n"


@pytest.fixture
def site(tmp_path: Path) -> Path:
    require_docs_tools()
    root = tmp_path / "site"
    shutil.copytree(SITES / "mkdocs", root)
    (root / "docs" / "index.md").write_text("# Home\n\n" + _fence('draw "a*b" a=2 b=3'))
    return root


def _mkdocs(
    root: Path, cache: Path, *flags: str, env: dict[str, str] | None = None, **kw
) -> subprocess.CompletedProcess:
    args = ["mkdocs", "build", "-d", str(root / "out"), *flags]
    return build(args, root, cache, env={"GV_TEST_SECRET": SECRET, **(env or {})}, **kw)


# Fences that would write files: into the page's own source, the README, outside.
WRITES = [
    ('draw "a*b" a=1 b=2 -odocs/write.md', "", "-odocs/write.md: the fence writes"),
    ('draw "a*b" a=1 b=2 -oREADME.md', "", "-oREADME.md: the fence writes"),
    ('draw "a*b" a=1 b=2 --output=../escaped.svg', "", "--output=../escaped.svg"),
    ("grads deep.json --plot --plot=../plot.svg", "", "write --plot alone"),
    ("inspect deep.json --boundary b.svg --curves c.svg", " format=html", "--boundary b.svg"),
    ('trace "a*b" a=1 b=2 --frames frames', "", "--frames frames: the fence writes"),
]
# Fences that would read outside the project (and publish what they read).
READS = [
    ("draw @/proc/self/environ", " format=text", "/proc/self/environ: outside the docs"),
    ("draw @/etc/passwd", " format=text", "/etc/passwd: outside the docs project"),
    ("grads /etc/passwd", " format=text", "/etc/passwd: outside the docs project"),
    ("draw @link.expr", " format=text", "link.expr: outside the docs project"),
]


def _attack_pages(root: Path, pages: Path, deep: Path) -> dict[str, list[tuple[int, str]]]:
    """PAGES/write.md and PAGES/read.md (with front matter, and each fence quoted in a
    ````markdown block first, as docs/fence.md does): each fence's line and message."""
    shutil.copy(deep, root / "deep.json")
    (root / "README.md").write_text("the project's README\n", "utf-8")
    (root / "link.expr").symlink_to("/proc/self/environ")
    expected: dict[str, list[tuple[int, str]]] = {}
    for name, cases in (("write", WRITES), ("read", READS)):
        text = "---\ntitle: attacks\ntags: [a, b]\n---\n\n# Attacks\n\n"
        for body, header, _ in cases:
            text += f"How it is written:\n\n````markdown\n{_fence(body, header)}````\n\n"
            text += _fence(body, header) + "\n"
        (pages / f"{name}.md").write_text(text, "utf-8")
        lines = text.splitlines()
        expected[name] = []
        for body, header, message in cases:
            opening = f"```gradviz{header}"
            at = [i + 1 for i, line in enumerate(lines) if line == opening]
            body_at = [i for i in at if lines[i] == body]
            expected[name].append((body_at[1], message))  # the second: the real fence
    return expected


def test_mkdocs_refuses_fences_that_write_or_read_at_their_page_and_line(
    site: Path, tmp_path: Path, deep_report
) -> None:
    expected = _attack_pages(site, site / "docs", deep_report[0])
    sources = {p: p.read_bytes() for p in (site / "docs").iterdir()}
    readme = (site / "README.md").read_bytes()
    done = _mkdocs(site, tmp_path / "cache")
    assert done.returncode == 0, done.stderr
    for name, cases in expected.items():
        for line, message in cases:
            warning = f"gradviz fence failed: docs/{name}.md:{line}: "
            assert any(warning in log and message in log for log in done.stderr.splitlines()), (
                warning,
                message,
                done.stderr,
            )
        page = (site / "out" / name / "index.html").read_text("utf-8")
        assert page.count('class="gradviz-error"') == len(cases)
    # nothing written: the pages' sources, the README, no file outside
    assert {p: p.read_bytes() for p in (site / "docs").iterdir()} == sources
    assert (site / "README.md").read_bytes() == readme
    assert not (tmp_path / "escaped.svg").exists() and not (tmp_path / "plot.svg").exists()
    assert not list(site.glob("*.svg")) and not (site / "frames").exists()
    # nothing read out: no line of the environment, of /etc/passwd
    everything = done.stderr + "".join(p.read_text("utf-8") for p in (site / "out").rglob("*.html"))
    assert SECRET not in everything and "root:x:0:0" not in everything

    strict = _mkdocs(site, tmp_path / "cache", "--strict")
    assert strict.returncode != 0
    assert re.search(r"docs/(read|write)\.md:\d+: ", strict.stderr), strict.stderr
    assert SECRET not in strict.stderr


def test_a_changed_csv_behind_a_spec_draws_the_boundary_again(site: Path, tmp_path: Path) -> None:
    """`train spec.toml --boundary`: the spec's data is part of the cache key."""
    (site / "points.csv").write_text("x1,x2,y\n0,0,0\n0,1,1\n1,0,1\n1,1,0\n", "utf-8")
    (site / "spec.toml").write_text(
        'layers = [2, 4, 1]\ndata = "points.csv"\nepochs = 60\nlearning_rate = 1.0\n', "utf-8"
    )
    (site / "docs" / "index.md").write_text(
        "# Trained\n\n" + _fence("train spec.toml --boundary"), "utf-8"
    )
    cache = tmp_path / "cache"
    first = _mkdocs(site, cache, "--strict")
    assert first.returncode == 0, first.stderr
    page = (site / "out" / "index.html").read_text("utf-8")
    assert inline_svgs(page) == 1
    again = _mkdocs(site, cache, "--strict")
    assert "gradviz fences: 1 from the cache, 0 drawn" in again.stderr, again.stderr
    (site / "points.csv").write_text("x1,x2,y\n0,0,1\n0,1,0\n1,0,0\n1,1,1\n", "utf-8")
    changed = _mkdocs(site, cache, "--strict")
    assert "gradviz fences: 0 from the cache, 1 drawn" in changed.stderr, changed.stderr
    assert (site / "out" / "index.html").read_text("utf-8") != page


def test_a_file_beside_the_page_is_found_there_first(site: Path, tmp_path: Path) -> None:
    guide = site / "docs" / "guide"
    guide.mkdir()
    (guide / "hand.expr").write_text("L = a*b\n", "utf-8")
    (site / "hand.expr").write_text("L = a + b\n", "utf-8")  # base: mkdocs.yml's folder
    (guide / "index.md").write_text(
        "# Guide\n\n" + _fence("draw @hand.expr a=2 b=3") + "\n" + _fence("draw @gone.expr")
    )
    (site / "docs" / "index.md").write_text("# Home\n\n" + _fence("draw @hand.expr a=2 b=3"))
    done = _mkdocs(site, tmp_path / "cache")
    assert done.returncode == 0, done.stderr
    beside = (site / "out" / "guide" / "index.html").read_text("utf-8")
    home = (site / "out" / "index.html").read_text("utf-8")
    assert "data 6" in beside and "data 5" in home  # a*b beside the page, a+b in base
    assert (
        "docs/guide/index.md:7: cannot read 'gone.expr': No such file or directory\n"
        "(looked for gone.expr beside the page, in docs/guide/ and in base ./)"
    ) in done.stderr, done.stderr


def test_a_file_too_big_is_a_page_and_line_error_under_a_memory_limit(
    site: Path, tmp_path: Path
) -> None:
    """A 3 GB file (sparse) named by a fence, the build limited to 1.5 GB of memory: the
    fence's page:LINE and the file's size, not MemoryError."""
    with (site / "huge.json").open("wb") as file:
        file.truncate(3 * 10**9)
    (site / "docs" / "index.md").write_text(
        "# Big\n\n" + _fence("inspect huge.json", " format=text")
    )
    limit = 1536 * 2**20

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    # one BLAS thread: a many-core machine's thread buffers must not eat the limit
    threads = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    done = _mkdocs(site, tmp_path / "cache", env=threads, preexec_fn=limited)
    assert done.returncode == 0, done.stderr
    assert (
        "docs/index.md:3: huge.json: 3,000,000,000 bytes is larger than the 100,000,000 "
        "a fence reads"
    ) in done.stderr, done.stderr
    assert "MemoryError" not in done.stderr


def test_mkdocs_without_its_base_says_so(site: Path, tmp_path: Path) -> None:
    config = site / "mkdocs.yml"
    text = config.read_text("utf-8").replace(
        "  - gradviz\n", "  - gradviz:\n      base: build/docs\n"
    )
    config.write_text(text, "utf-8")
    done = _mkdocs(site, tmp_path / "cache")
    assert done.returncode != 0
    assert "gradviz plugin: base build/docs does not exist" in done.stderr, done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


# -- Sphinx ------------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    require_docs_tools()
    root = tmp_path / "project"
    shutil.copytree(SITES / "sphinx", root)
    return root


def _sphinx(root: Path, cache: Path, *flags: str) -> subprocess.CompletedProcess:
    args = ["sphinx", "-b", "html", "-q", *flags, ".", "out"]
    return build(args, root, cache, env={"GV_TEST_SECRET": SECRET})


def test_sphinx_refuses_fences_that_write_or_read_at_their_page_and_line(
    project: Path, tmp_path: Path, deep_report
) -> None:
    expected = _attack_pages(project, project, deep_report[0])
    for name in expected:  # MyST: ```{gradviz} with the options as directive options
        page = project / f"{name}.md"
        text = page.read_text("utf-8")
        text = re.sub(r"```gradviz format=(\w+)\n", r"```{gradviz}\n:format: \1\n", text)
        page.write_text(text.replace("```gradviz\n", "```{gradviz}\n"), "utf-8")
    with (project / "conf.py").open("a", encoding="utf-8") as conf:
        conf.write('exclude_patterns += ["README.md"]\n')
    with (project / "index.rst").open("a", encoding="utf-8") as index:
        index.write("\n.. toctree::\n\n   write\n   read\n")
    sources = {p: p.read_bytes() for p in project.iterdir() if p.is_file()}
    done = _sphinx(project, tmp_path / "cache", "-W")
    assert done.returncode != 0
    assert re.search(r"(read|write)\.md:\d+: WARNING: gradviz fence failed: ", done.stderr)

    done = _sphinx(project, tmp_path / "cache", "-E")
    assert done.returncode == 0, done.stderr
    for name, cases in expected.items():
        text = (project / f"{name}.md").read_text("utf-8").splitlines()
        bodies = [i + 1 for i, line in enumerate(text) if line.startswith("```{gradviz}")]
        real = bodies[1::2]  # each fence quoted first, then itself
        assert len(real) == len(cases)
        for line, (_, message) in zip(real, cases, strict=True):
            warning = f"{name}.md:{line}: WARNING: gradviz fence failed: "
            assert any(warning in log and message in log for log in done.stderr.splitlines()), (
                warning,
                message,
                done.stderr,
            )
        page = (project / "out" / f"{name}.html").read_text("utf-8")
        assert page.count('class="gradviz-error"') == len(cases)
    assert {p: p.read_bytes() for p in project.iterdir() if p.is_file()} == sources
    assert not (tmp_path / "escaped.svg").exists() and not (tmp_path / "plot.svg").exists()
    everything = done.stderr + "".join(
        p.read_text("utf-8") for p in (project / "out").rglob("*.html")
    )
    assert SECRET not in everything and "root:x:0:0" not in everything


def test_sphinx_draws_a_changed_csv_again_and_finds_files_beside_the_page(
    project: Path, tmp_path: Path
) -> None:
    (project / "guide").mkdir()
    (project / "guide" / "points.csv").write_text("x1,x2,y\n0,0,0\n0,1,1\n1,0,1\n1,1,0\n")
    (project / "guide" / "spec.toml").write_text(
        'layers = [2, 4, 1]\ndata = "points.csv"\nepochs = 60\nlearning_rate = 1.0\n', "utf-8"
    )
    (project / "guide" / "page.md").write_text(
        "# Trained\n\n```{gradviz}\ntrain spec.toml --boundary\n```\n", "utf-8"
    )
    with (project / "index.rst").open("a", encoding="utf-8") as index:
        index.write("\n.. toctree::\n\n   guide/page\n")
    cache = tmp_path / "cache"
    first = _sphinx(project, cache, "-W")
    assert first.returncode == 0, first.stderr
    page = (project / "out" / "guide" / "page.html").read_text("utf-8")
    assert inline_svgs(page) == 1
    drawn = len(list(cache.glob("*.html")))
    (project / "guide" / "points.csv").write_text("x1,x2,y\n0,0,1\n0,1,0\n1,0,0\n1,1,1\n")
    again = _sphinx(project, cache, "-W", "-E")
    assert again.returncode == 0, again.stderr
    assert len(list(cache.glob("*.html"))) == drawn + 1  # drawn again: a new fragment
    assert (project / "out" / "guide" / "page.html").read_text("utf-8") != page


def test_sphinx_without_its_base_says_so(project: Path, tmp_path: Path) -> None:
    with (project / "conf.py").open("a", encoding="utf-8") as conf:
        conf.write('gradviz_base = "build/docs"\n')
    done = _sphinx(project, tmp_path / "cache")
    assert done.returncode != 0
    assert "gradviz_base 'build/docs' does not exist" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_the_builds_carry_the_secret_in_their_environment() -> None:
    """The secret is really in a build's environment (else the checks above prove nothing)."""
    env = {**os.environ, "GV_TEST_SECRET": SECRET}
    shown = subprocess.run(
        [sys.executable, "-c", "print(open('/proc/self/environ','rb').read().count(b'gv-secret'))"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert shown.stdout.strip() == "1"


# -- the pages as a reader sees them (Chromium) -------------------------------------------

READER_JS = """
const out = {underlined: [], frames: [], notes: document.querySelectorAll(
  '.gradviz-mermaid-note').length};
for (const a of document.querySelectorAll('svg.gradviz a')) {
  const seen = getComputedStyle(a).textDecorationLine;
  if (seen !== 'none') out.underlined.push(seen);
}
const box = document.querySelector('svg.gradviz:not(.gradviz-plot) g.node polygon');
out.nodeFill = getComputedStyle(box).fill;
out.pageBackground = getComputedStyle(document.body).backgroundColor;
out.otherJoin = getComputedStyle(document.querySelector('#other path')).strokeLinejoin;
out.plotJoin = getComputedStyle(document.querySelector('svg.gradviz-plot path')).strokeLinejoin;
for (const f of document.querySelectorAll('iframe.gradviz-page')) {
  out.frames.push({height: f.getBoundingClientRect().height, width: f.clientWidth});
}
return out;
"""


def _luminance(css: str) -> float:
    red, green, blue = (int(float(v)) for v in re.findall(r"[\d.]+", css)[:3])
    return (0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255


def test_on_alabaster_in_dark_mode_diagrams_stay_light_unlined_and_frames_fit(
    project: Path, tmp_path: Path, browser, deep_report
) -> None:
    """Sphinx's alabaster is light only: on a system in dark mode its diagrams stay light;
    no label is underlined; matplotlib's `*` style reaches no other SVG of the page; the
    live page's frame is as tall as the page in it; Mermaid without mermaid.js says so."""
    from browser import wait_until

    shutil.copy(deep_report[0], project / "deep.json")
    (project / "reader.rst").write_text(
        "Reader\n======\n\n"
        ".. raw:: html\n\n"
        '   <svg id="other" width="60" height="20"><path d="M0 0 L30 10 L60 0" '
        'stroke="black" fill="none"/></svg>\n\n'
        '.. gradviz::\n\n   draw "a*b + c" a=2 b=-3 c=10\n\n'
        ".. gradviz::\n\n   grads deep.json --plot\n\n"
        '.. gradviz::\n   :format: mermaid\n\n   draw "a*b" a=2 b=3\n\n'
        ".. gradviz::\n   :format: html\n\n   inspect deep.json\n",
        "utf-8",
    )
    with (project / "index.rst").open("a", encoding="utf-8") as index:
        index.write("\n.. toctree::\n\n   reader\n")
    done = _sphinx(project, tmp_path / "cache", "-W")
    assert done.returncode == 0, done.stderr
    page = project / "out" / "reader.html"

    frames_js = "return Array.from(document.querySelectorAll('iframe.gradviz-page'))"
    browser.set_window_size(1000, 900)
    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": "dark"}]},
    )
    try:
        browser.get(page.as_uri())
        seen = browser.execute_script(READER_JS)
        frame = browser.execute_script(frames_js + "[0]")
        srcdoc, width = frame.get_attribute("srcdoc"), seen["frames"][0]["width"]
        # the live page alone, in a window as wide as its frame: how tall it is
        alone = tmp_path / "alone.html"
        alone.write_text(srcdoc, "utf-8")
        browser.set_window_size(int(width), 900)
        browser.get(alone.as_uri())
        wait_until(browser, lambda d: d.execute_script("return document.readyState") == "complete")
        tall = browser.execute_script(
            "return document.documentElement.getBoundingClientRect().height"
        )
        # the frame grows to that once the page in it has loaded and said so
        browser.set_window_size(1000, 900)
        browser.get(page.as_uri())
        browser.execute_script(frames_js + "[0].scrollIntoView()")
        wait_until(
            browser,
            lambda d: abs(d.execute_script(READER_JS)["frames"][0]["height"] - tall) < 40,
            f"the live page's frame is not as tall as its page ({tall:.0f} px)",
        )
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
        browser.set_window_size(1600, 1200)
    assert tall > 2400  # the report is longer than any first guess of its frame
    assert seen["underlined"] == []
    assert _luminance(seen["pageBackground"]) > 0.8  # alabaster: light
    assert _luminance(seen["nodeFill"]) > 0.6, seen["nodeFill"]  # and so the diagram
    assert seen["plotJoin"] == "round" and seen["otherJoin"] == "miter"
    assert seen["notes"] == 1


def test_sphinx_names_the_page_and_line_of_a_file_too_big(project: Path, tmp_path: Path) -> None:
    with (project / "huge.json").open("wb") as file:
        file.truncate(3 * 10**9)
    (project / "big.md").write_text(
        "# Big\n\n```{gradviz}\n:format: text\n\ninspect huge.json\n```\n", "utf-8"
    )
    with (project / "index.rst").open("a", encoding="utf-8") as index:
        index.write("\n.. toctree::\n\n   big\n")
    done = _sphinx(project, tmp_path / "cache")
    assert done.returncode == 0, done.stderr  # the other pages are built
    assert (
        "big.md:3: WARNING: gradviz fence failed: huge.json: 3,000,000,000 bytes is larger "
        "than the 100,000,000 a fence reads"
    ) in done.stderr, done.stderr
    assert (project / "out" / "index.html").is_file()
