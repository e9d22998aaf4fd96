"""Golden files: the exact DOT, Mermaid, JSON and terminal text of a few samples.

Any change to the output shows up as a diff here. After an intended change, rewrite
them with `GRADVIZ_UPDATE_SNAPSHOTS=1 pytest tests/test_render_snapshots.py` (every
rewritten file is reported as a skip, never as a pass) and review the diff under
tests/snapshots/.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gradviz.drawn import to_dot, to_json, to_mermaid, to_text
from gradviz.expr import parse_program

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
SAMPLES = ["hand", "sigmoid_neuron", "tanh_by_hand", "used_twice", "detach", "saturated"]
RENDERERS = {"dot": to_dot, "mmd": to_mermaid, "json": to_json, "txt": to_text}


@pytest.mark.parametrize("extension", list(RENDERERS))
@pytest.mark.parametrize("sample", SAMPLES)
def test_snapshot(sample, extension):
    program = parse_program((ROOT / "samples" / f"{sample}.expr").read_text(encoding="utf-8"))
    program.output.backward()
    text = RENDERERS[extension](program.output)
    golden = SNAPSHOTS / f"{sample}.{extension}"
    if os.environ.get("GRADVIZ_UPDATE_SNAPSHOTS"):
        # Never a pass: comparing with what was just written would prove nothing.
        golden.write_text(text, encoding="utf-8")
        pytest.skip(f"updated {golden.name}: review the diff, then run without the variable")
    assert golden.is_file(), f"missing {golden}: run with GRADVIZ_UPDATE_SNAPSHOTS=1"
    assert text == golden.read_text(encoding="utf-8")


def test_updating_snapshots_never_passes(tmp_path, monkeypatch):
    """With GRADVIZ_UPDATE_SNAPSHOTS set the golden file is rewritten and the test is
    skipped as "updated": a run that rewrites its own expectations cannot pass."""
    monkeypatch.setitem(globals(), "SNAPSHOTS", tmp_path)  # the real golden files stay
    monkeypatch.setenv("GRADVIZ_UPDATE_SNAPSHOTS", "1")
    with pytest.raises(pytest.skip.Exception, match=r"updated hand\.dot"):
        test_snapshot("hand", "dot")
    assert (tmp_path / "hand.dot").read_text(encoding="utf-8").startswith("digraph gradviz {")
