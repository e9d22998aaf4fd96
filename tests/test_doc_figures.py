"""The README and docs/development.md quote no test count that goes stale: a count of
tests (`2,670 tests`, `2,632 passed`) stands only in a dated measurement (a paragraph or
table row that says when: 2026-12-02), since every change adds tests. The README quoted
2,670 and development.md's table 2,180 while the suite ran 3,401."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COUNT = re.compile(r"\b\d{1,3}(?:,\d{3})+\s+(?:tests|passed)\b|\babout\s+\d[\d,]*\s+tests\b")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")


def _undated_counts(text: str) -> list[str]:
    """The paragraphs (and table rows) that quote a test count without a date."""
    blocks = []
    for paragraph in re.split(r"\n\s*\n", text):
        lines = paragraph.splitlines()
        rows = [line for line in lines if line.lstrip().startswith("|")]
        prose = "\n".join(line for line in lines if not line.lstrip().startswith("|"))
        blocks += [*rows, prose]
    return [block for block in blocks if COUNT.search(block) and not DATE.search(block)]


def test_the_checker_tells_a_dated_count_from_an_undated_one() -> None:
    assert _undated_counts("The fast suite is about 2,670 tests in 80-120 s.")
    assert _undated_counts("| `make test` | the fast suite: about 2,180 tests | 65 s |")
    assert not _undated_counts("Measured 2026-12-02: `make test` 2,632 passed in 80 s.")
    assert not _undated_counts("pytest's last line says how many tests ran.")


def test_no_undated_test_count() -> None:
    for name in ("README.md", "docs/development.md"):
        text = (ROOT / name).read_text("utf-8")
        assert _undated_counts(text) == [], name
