"""gradviz's numbers in TensorBoard: each recorded layer's statistics as scalars, one tag per
layer and statistic (`gradviz/net.0/rms`, `gradviz/net.0/update_data`, ...), the statuses
and the verdict as text (`gradviz/verdict`), beside what a TensorBoard user logs already.

Live, `write_step(writer, step, diagnosis, history)` writes one recorded step (a
`torch.utils.tensorboard.SummaryWriter`, or anything with its `add_scalar` and `add_text`);
afterwards, `convert("run.json", "runs/gradviz")` writes a whole run file (its recorded
steps, its loss and accuracy curves as `gradviz/loss` and `gradviz/accuracy`, and the
verdict at the last step). Imports torch's TensorBoard writer (the `tensorboard` package)
when this module is imported: `import gradviz.torch` never does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torch.utils.tensorboard import SummaryWriter

from gradviz.records import Run
from gradviz.schema import load_run
from gradviz.stats import Diagnosis, History, verdict

PREFIX = "gradviz"
# The per-layer statistics written, by their names in the run file (LayerStats): the
# gradient's size (rms, mean and max |g|, ‖g‖, the bias gradients' rms), its size beside
# the weights' (grad:data) and the last update's (update:data), the activations' mean,
# std, slope, saturated and dead fractions, and the count of NaN/inf.
STATISTICS: tuple[str, ...] = (
    "rms",
    "mean_abs",
    "max_abs",
    "norm",
    "signal",
    "grad_data",
    "update_data",
    "act_mean",
    "act_std",
    "mean_slope",
    "saturated",
    "dead",
    "nonfinite",
)


def tag(layer: str, statistic: str) -> str:
    """The scalar's tag: `gradviz/<layer>/<statistic>`."""
    return f"{PREFIX}/{layer}/{statistic}"


def scalars(diagnosis: Diagnosis) -> list[tuple[str, float]]:
    """(tag, value) of every statistic of every layer the step has (a statistic it did not
    measure, None, is left out: no point stands for a number that was not read)."""
    out = []
    for layer in diagnosis.layers:
        for statistic in STATISTICS:
            value = getattr(layer, statistic)
            if value is not None:
                out.append((tag(layer.name, statistic), float(value)))
    return out


def status_text(diagnosis: Diagnosis) -> str:
    """Each layer's status and why, as a Markdown table (what TensorBoard's text tab shows)."""
    rows = ["| layer | status | why |", "|---|---|---|"]
    rows += [
        f"| {_cell(lay.name)} | {lay.status} | {_cell(lay.reason)} |" for lay in diagnosis.layers
    ]
    return "\n".join(rows)


def verdict_text(diagnosis: Diagnosis, history: History | None = None) -> str:
    """The verdict's sentences, one Markdown bullet each."""
    lines = verdict(diagnosis, history if history is not None else [])
    return "\n".join(f"- {line}" for line in lines)


def write_step(
    writer: Any, step: int, diagnosis: Diagnosis, history: History | None = None
) -> None:
    """Write one recorded step: its scalars, the statuses and the verdict (read over
    `history`, the steps recorded so far, when given) as text at `step`."""
    for name, value in scalars(diagnosis):
        writer.add_scalar(name, value, global_step=step)
    writer.add_text(f"{PREFIX}/status", status_text(diagnosis), global_step=step)
    writer.add_text(f"{PREFIX}/verdict", verdict_text(diagnosis, history), global_step=step)


def write_run(writer: Any, run: Run) -> None:
    """A whole run: each recorded step's scalars and statuses, the loss and accuracy curves,
    and the verdict at the last recorded step (over the whole history)."""
    for i, (step, diagnosis) in enumerate(run.history):
        for name, value in scalars(diagnosis):
            writer.add_scalar(name, value, global_step=step)
        writer.add_text(f"{PREFIX}/status", status_text(diagnosis), global_step=step)
        if i == len(run.history) - 1:
            text = verdict_text(diagnosis, run.history)
            writer.add_text(f"{PREFIX}/verdict", text, global_step=step)
    for step, loss, accuracy in zip(run.curve_steps, run.loss, run.accuracy, strict=True):
        if loss is not None:
            writer.add_scalar(f"{PREFIX}/loss", loss, global_step=step)
        if accuracy is not None:
            writer.add_scalar(f"{PREFIX}/accuracy", accuracy, global_step=step)


def convert(run: str | Path | Run, logdir: str | Path) -> Path:
    """Write a run file (or a `Run`) as TensorBoard event files in `logdir`; the folder.
    A run file that cannot be read is a ModelError naming it, before anything is written."""
    if not isinstance(run, Run):
        run = load_run(run)
    writer = SummaryWriter(log_dir=str(logdir))
    try:
        write_run(writer, run)
    finally:
        writer.close()
    return Path(logdir)


def _cell(text: str) -> str:
    """Text in a Markdown table cell: its pipes escaped, on one line."""
    return " ".join(text.replace("|", "\\|").split())
