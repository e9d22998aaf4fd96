"""The README and the pages of our docs site (mkdocs.yml's nav: the lesson, the manual, …)
are promises: every console block marked as checked is run and compared, and their Python
sessions run as doctests.

A block is checked when the line before its opening fence is `<!-- checked -->`. Each
`$ gradviz …` line in it is run through click's CliRunner (stdout and stderr as a
terminal user sees them, no colour, 100 columns) and must print exactly the lines that
follow it in the document, up to the next `$` line or the end of the block. A block
marked `<!-- checked slow -->` (it trains networks: seconds) is a test marked slow, run
by `make test-all` and CI but not by `make test`.

A ```` ```pycon ```` block (`>>>` lines and what Python prints) is run by the standard
library's doctest, each block in a fresh namespace.

After a deliberate change of output, `GRADVIZ_UPDATE_README=1 pytest tests/test_readme.py`
rewrites the console blocks of every document (and skips, so an update never passes as a
check). Doctest blocks are never rewritten: a failing one is read and fixed by hand.
"""

from __future__ import annotations

import doctest
import os
import re
import shlex
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradviz.cli import cli

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
LESSON = ROOT / "docs" / "lesson.md"


def site_pages() -> list[Path]:
    """The pages of our docs site, as mkdocs.yml's nav lists them (`- Lesson: lesson.md`)."""
    nav = re.findall(
        r"^\s*- (?:[^:\n]+: )?(\S+\.md)\s*$", (ROOT / "mkdocs.yml").read_text("utf-8"), re.M
    )
    return [ROOT / "docs" / page for page in nav]


SITE_PAGES = site_pages()
DOCUMENTS = (README, *SITE_PAGES)  # the lesson is one of the site's pages
BLOCK = re.compile(r"^<!-- checked( slow)? -->\n```console\n(.*?)^```$", re.MULTILINE | re.DOTALL)
PYCON = re.compile(r"^```pycon\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def _commands(block: str) -> list[tuple[str, str]]:
    """(command line, expected output) pairs of one console block."""
    pairs: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            pairs.append((line[2:], []))
        elif pairs:
            pairs[-1][1].append(line)
    return [(command, "\n".join(lines)) for command, lines in pairs]


def _run_block(commands: list[str]) -> list[str]:
    """Run a block's commands in order, in one fresh folder that has `samples/`."""
    runner = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "100", "TERM": "dumb"})
    outputs = []
    here = Path.cwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        try:
            os.symlink(ROOT / "samples", "samples")
            for command in commands:
                words = shlex.split(command, comments=True)
                assert words[0] == "gradviz", f"checked blocks run gradviz only, not {words[0]}"
                result = runner.invoke(cli, words[1:], catch_exceptions=False)
                lines = result.output.rstrip("\n").splitlines()
                outputs.append("\n".join(line.rstrip() for line in lines))
        finally:
            os.chdir(here)
    return outputs


def _blocks(document: Path) -> list[tuple[bool, str]]:
    """(slow, text) of each checked console block, in order."""
    return [(bool(slow), block) for slow, block in BLOCK.findall(document.read_text("utf-8"))]


def _block_params() -> list:
    """One test per block of each document, marked slow where the document marks it so."""
    return [
        pytest.param(
            document,
            index,
            id=f"{document.name}-{index}",
            marks=[pytest.mark.slow] if slow else [],
        )
        for document in DOCUMENTS
        for index, (slow, _) in enumerate(_blocks(document))
    ]


@pytest.mark.parametrize("document", (README, LESSON), ids=lambda d: d.name)
def test_document_has_checked_blocks(document: Path) -> None:
    assert len(_blocks(document)) >= 5


def test_the_site_pages_are_found() -> None:
    assert LESSON in SITE_PAGES and ROOT / "docs" / "index.md" in SITE_PAGES
    assert all(page.is_file() for page in SITE_PAGES)


@pytest.mark.parametrize(("document", "block_index"), _block_params())
def test_block_matches_what_gradviz_prints(document: Path, block_index: int) -> None:
    _, block = _blocks(document)[block_index]
    pairs = _commands(block)
    outputs = _run_block([command for command, _ in pairs])
    if os.environ.get("GRADVIZ_UPDATE_README"):
        text = document.read_text(encoding="utf-8")
        fresh = "".join(
            f"$ {command}\n{output}\n" if output else f"$ {command}\n"
            for (command, _), output in zip(pairs, outputs, strict=True)
        )
        document.write_text(text.replace(block, fresh, 1), encoding="utf-8")
        pytest.skip(f"{document.name} block rewritten; run again without GRADVIZ_UPDATE_README")
    for (command, expected), output in zip(pairs, outputs, strict=True):
        assert output == expected, f"{document.name}: the output of `{command}` is out of date"


def _pycon_params() -> list:
    return [
        pytest.param(document, index, id=f"{document.name}-{index}")
        for document in DOCUMENTS
        for index, _ in enumerate(PYCON.findall(document.read_text("utf-8")))
    ]


def test_lesson_has_python_sessions() -> None:
    assert len(PYCON.findall(LESSON.read_text("utf-8"))) >= 3


@pytest.mark.parametrize(("document", "block_index"), _pycon_params())
def test_python_session_runs_as_shown(document: Path, block_index: int) -> None:
    """The block as the standard library's doctest runs it: every `>>>` line, every output."""
    text = document.read_text("utf-8")
    match = list(PYCON.finditer(text))[block_index]
    if "import torch" in match.group(1):  # the README's "From PyTorch": torch or skip
        from torch_support import require_torch

        require_torch()
    # the manual's framework pages (lightning.md, huggingface.md, tensorboard.md): the
    # framework or skip (under CI, a failure: .ci/run installs them)
    for framework in ("lightning", "transformers", "tensorboard"):
        if re.search(rf"^>>> (import|from) {framework}\b", match.group(1), re.M):
            from torch_support import require_framework

            require_framework(framework)
    line = text.count("\n", 0, match.start(1))
    name = f"{document.name} (pycon block {block_index}, line {line + 1})"
    test = doctest.DocTestParser().get_doctest(match.group(1), {}, name, str(document), line)
    assert test.examples, f"{name} has no >>> lines"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    failures: list[str] = []
    runner.run(test, out=failures.append)
    assert runner.failures == 0, "".join(failures)


def _sections(text: str) -> list[str]:
    return re.split(r"^## ", text, flags=re.MULTILINE)


NUMBER = re.compile(r"`(-?\d[\d.,]*(?:e-?\d+)?%?)`")


def test_numbers_the_lesson_quotes_are_in_its_outputs() -> None:
    """A number the prose quotes in code style (`-7.94`) is read off an output: it must
    appear in a checked output or a Python session of the same section, so a change of
    output that leaves the prose behind fails here, not in a student's hands."""
    stale = []
    for section in _sections(LESSON.read_text("utf-8")):
        outputs = "\n".join(block for _, block in BLOCK.findall(section))
        outputs += "\n".join(PYCON.findall(section))
        prose = BLOCK.sub("", PYCON.sub("", section))
        for number in NUMBER.findall(prose):
            if not re.search(rf"(?<![\d.]){re.escape(number)}(?![\d])", outputs):
                stale.append(f"{section.splitlines()[0]!r}: `{number}`")
    assert not stale, "numbers quoted in the lesson but not in its outputs: " + ", ".join(stale)


def _anchors(document: Path) -> set[str]:
    """GitHub's anchors for a document's headings: lower case, punctuation dropped."""
    headings = re.findall(r"^#+ (.*)$", document.read_text("utf-8"), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_readme_links_the_lesson_and_the_lessons_links_resolve() -> None:
    readme = README.read_text("utf-8")
    head = readme.split("\n## ", 1)[0]
    assert "(docs/lesson.md)" in head, "the README links the lesson near the top"
    assert re.findall(r"\]\(([^):]*)\)", LESSON.read_text("utf-8"))


@pytest.mark.parametrize("document", (README, *SITE_PAGES), ids=lambda d: d.name)
def test_links_between_pages_resolve(document: Path) -> None:
    """Every relative link of the README and of the site's pages leads to a file, and to a
    heading of it when it names one (on GitHub and, for the site, in mkdocs --strict)."""
    links = re.findall(r"\]\(([^):\s]*)\)", document.read_text("utf-8"))
    broken = []
    for link in links:
        path, _, anchor = link.partition("#")
        target = (document.parent / path).resolve() if path else document
        if not target.exists() or (
            anchor and target.suffix == ".md" and anchor not in _anchors(target)
        ):
            broken.append(link)
    assert not broken, f"links that lead nowhere: {broken}"
