"""The distribution's name: `gradviz` on PyPI is somebody else's project (it pulls torch,
CUDA and pandas), so gradviz is distributed as `gradviz-backprop` (the import and the
command stay `gradviz`), and every install line in the README, the docs and gradviz's
own words says that name or `pip install .`."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import gradviz

ROOT = Path(__file__).resolve().parent.parent
NAME = "gradviz-backprop"

ELSEWHERE: set[str] = set()  # (files this test leaves out: none)

# `pip install` and what follows on its line, up to the end of the code span or command
_INSTALL = re.compile(r"pip3? install([^`\n]*)")
# the other project's name as a requirement: `gradviz`, `gradviz[torch]`, `gradviz==0.1`
_OTHER = re.compile(r"(?<![\w.-])['\"]?gradviz(?![\w-])(?=\[|[=<>~!]|['\"\s]|$)")


def _texts() -> dict[str, str]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    files += sorted((ROOT / "gradviz").rglob("*.py"))  # messages and docstrings
    return {
        str(path.relative_to(ROOT)): path.read_text("utf-8")
        for path in files
        if str(path.relative_to(ROOT)) not in ELSEWHERE
    }


def _wrong_lines(text: str) -> list[str]:
    wrong = []
    for line in text.splitlines():
        for match in _INSTALL.finditer(line):
            if _OTHER.search(match.group(1)):
                wrong.append(line.strip())
        if re.search(r"(?<![\w-])gradviz\[", line):
            wrong.append(line.strip())
    return wrong


def test_the_checker_finds_the_other_projects_name() -> None:
    for line in (
        "pip install gradviz",
        "`pip install 'gradviz[torch]'`",
        "pip install gradviz mkdocs pymdown-extensions",
        'pip install "gradviz==0.1.2"',
        "pip install -U gradviz",
    ):
        assert _wrong_lines(line), line
    for line in (
        "pip install gradviz-backprop",
        "`pip install 'gradviz-backprop[torch]'`",
        "pip install gradviz-backprop mkdocs pymdown-extensions",
        "pip install .",
        "pip install -e '.[dev]'",
        "pip install graphviz-pure",
        "python -m tools.samples; pip install .",
    ):
        assert not _wrong_lines(line), line


def test_no_install_line_names_the_other_project() -> None:
    wrong = {path: lines for path, text in _texts().items() if (lines := _wrong_lines(text))}
    assert wrong == {}


def test_the_install_lines_name_this_distribution() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    torch_page = (ROOT / "docs" / "manual" / "torch.md").read_text("utf-8")
    for text in (readme, torch_page):
        assert f"pip install '{NAME}[torch]'" in text


def test_the_distribution_is_named_so_and_keeps_its_command() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert project["name"] == NAME == gradviz.DISTRIBUTION
    assert project["scripts"] == {"gradviz": "gradviz.cli:main"}
