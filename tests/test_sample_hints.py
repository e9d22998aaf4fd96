"""samples/exploding.toml says what the divergence error then suggests: the error's hint
(clip_norm = 1) and the sample's comment (clip_norm = 0.5) disagreed. The comment now names
both, with what each does, and those figures are what training reports."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from gradviz.cli import cli

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "exploding.toml"


def _trained(clip: str) -> dict:
    done = CliRunner().invoke(cli, ["train", str(SAMPLE), "--clip-norm", clip, "--json"])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def test_the_samples_comment_follows_the_errors_hint() -> None:
    done = CliRunner().invoke(cli, ["train", str(SAMPLE), "--quiet"])
    assert done.exit_code == 1
    (hint,) = re.findall(r"clip gradients \(clip_norm = ([\d.]+)\)", done.stderr)
    comment = "\n".join(
        line for line in SAMPLE.read_text("utf-8").splitlines() if line.startswith("#")
    )
    assert f"error's hint, clip_norm = {hint}" in comment
    assert f"--clip-norm {hint} " in comment
    # the figures the comment gives, for the hint's bound and for 0.5
    suggested, half = _trained(hint), _trained("0.5")
    shown = f"{100 * suggested['final']['accuracy']:g}%"
    clipped = f"clipping {sum(suggested['clipping']['clipped'])} of 200 updates"
    assert f"{shown}, {clipped} to {sum(half['clipping']['clipped'])} at 0.5" in comment
    assert half["final"]["accuracy"] == 1.0 and "trains to 100%" in comment
