"""The README is a promise: every console block marked as checked is run and compared.

A block is checked when the line before its opening fence is `<!-- checked -->`. Each
`$ gradviz …` line in it is run through click's CliRunner (stdout and stderr as a
terminal user sees them, no colour, 100 columns) and must print exactly the lines that
follow it in the README, up to the next `$` line or the end of the block. A block marked
`<!-- checked slow -->` (it trains networks: seconds) is a test marked slow, run by
`make test-all` and CI but not by `make test`.

After a deliberate change of output, `GRADVIZ_UPDATE_README=1 pytest tests/test_readme.py`
rewrites the blocks (and skips, so an update never passes as a check).
"""

from __future__ import annotations

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
BLOCK = re.compile(r"^<!-- checked( slow)? -->\n```console\n(.*?)^```$", re.MULTILINE | re.DOTALL)


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
                assert words[0] == "gradviz", f"README blocks run gradviz only, not {words[0]}"
                result = runner.invoke(cli, words[1:], catch_exceptions=False)
                lines = result.output.rstrip("\n").splitlines()
                outputs.append("\n".join(line.rstrip() for line in lines))
        finally:
            os.chdir(here)
    return outputs


def _blocks() -> list[str]:
    return [block for _, block in BLOCK.findall(README.read_text(encoding="utf-8"))]


def _block_params() -> list:
    """One test per block, marked slow where the README marks it so."""
    return [
        pytest.param(index, marks=pytest.mark.slow) if slow else index
        for index, (slow, _) in enumerate(BLOCK.findall(README.read_text(encoding="utf-8")))
    ]


def test_readme_has_checked_blocks() -> None:
    assert len(_blocks()) >= 5


@pytest.mark.parametrize("block_index", _block_params())
def test_readme_block_matches_what_gradviz_prints(block_index: int) -> None:
    block = _blocks()[block_index]
    pairs = _commands(block)
    outputs = _run_block([command for command, _ in pairs])
    if os.environ.get("GRADVIZ_UPDATE_README"):
        text = README.read_text(encoding="utf-8")
        fresh = "".join(
            f"$ {command}\n{output}\n" if output else f"$ {command}\n"
            for (command, _), output in zip(pairs, outputs, strict=True)
        )
        README.write_text(text.replace(block, fresh, 1), encoding="utf-8")
        pytest.skip("README block rewritten; run again without GRADVIZ_UPDATE_README")
    for (command, expected), output in zip(pairs, outputs, strict=True):
        assert output == expected, f"README output of `{command}` is out of date"
