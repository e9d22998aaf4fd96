"""What `gradviz train` and `gradviz inspect` show of a training run (`training_view` of a
`gradviz.report.Report`): sparklines of the curves and of clipping, the predictions, the
spec's summary, a saved model's layers, the gradients. Pure: rich renderables out."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from gradviz.numbers import fmt
from gradviz.render.layers import report as layers_report
from gradviz.text import printable

if TYPE_CHECKING:  # the data drawn (a report's parts), never loaded or computed here
    from gradviz.data import Dataset
    from gradviz.report import LayerRow, Report
    from gradviz.spec import Spec

PREDICTION_ROWS = 16  # rows of the predictions table (all of them up to this many)
_RAMP = "▁▂▃▄▅▆▇█"

# What a run recorded elsewhere lacks (no network, no data), in one line.
RUN_LACKS = "no predictions, no decision boundary: a recorded run holds no network and no data"


def sparkline(values: Sequence[float], width: int = 60, log: bool = True) -> str:
    """One character per column, its height the value's (log10 when all are positive);
    NaN and inf show as `!` so they are never mistaken for small numbers."""
    if not values:
        return ""
    n = len(values)
    shown = min(width, n)  # columns: every value, or evenly spaced ones
    columns = [values[(i * n) // shown] for i in range(shown)]
    finite = [v for v in columns if math.isfinite(v)]
    use_log = log and finite and min(finite) > 0
    scaled = [math.log10(v) if use_log else v for v in finite]
    lo, hi = (min(scaled), max(scaled)) if scaled else (0.0, 0.0)
    out = []
    for v in columns:
        if not math.isfinite(v):
            out.append("!")
            continue
        s = math.log10(v) if use_log else v
        # halves: values spanning ±1e308 would overflow hi - lo to inf (and inf/inf is NaN)
        level = 0 if hi == lo else round((s / 2 - lo / 2) / (hi / 2 - lo / 2) * (len(_RAMP) - 1))
        out.append(_RAMP[level])
    return "".join(out)


def curve_text(
    loss: Sequence[float],
    accuracy: Sequence[float],
    every: int = 1,
    width: int = 160,
    unit: str = "epoch",
) -> Text:
    """The loss (log scale) and the accuracy over the epochs as two sparklines in `width`
    columns. Each point is an epoch's mean as training saw its examples, not the final
    weights' loss (`final_text`)."""
    text = Text()
    if not loss:
        return text
    last = every * len(loss)
    finite = [v for v in loss if math.isfinite(v)]
    scale = "log scale" if finite and min(finite) > 0 else "linear scale"
    ends = max(len(fmt(loss[-1])), len(percent(accuracy[-1])))
    per = "mean per epoch" if unit == "epoch" else f"each logged {unit}'s batch"
    note = f"   ({per}, {every}–{last}, {scale})"
    columns = max(10, min(60, width - 21 - 1 - ends - len(note)))
    text.append(f"loss      {fmt(loss[0]):>10} ")
    text.append(sparkline(loss, columns), style="cyan")
    text.append(f" {fmt(loss[-1]):<{ends}}{note}\n")
    if not any(math.isfinite(a) for a in accuracy):  # (a recorded run that logged none)
        return text
    text.append(f"accuracy  {percent(accuracy[0]):>10} ")
    text.append(sparkline(accuracy, columns, log=False), style="green")
    text.append(f" {percent(accuracy[-1])}\n")
    return text


def clipping_text(
    clipping: Sequence[tuple[int, int, float, float]],
    clip: tuple[str, float],
    every: int = 1,
    width: int = 160,
) -> Text:
    """How many updates the `clip` rule ("value" or "norm", its bound) clipped, and the
    mean gradient norm ‖g‖ per epoch before and after it; said plainly when it never
    engaged, which is what a vanishing gradient does to it."""
    text = Text()
    if not clipping:
        return text
    kind, at = clip
    updates = sum(row[0] for row in clipping)
    clipped = sum(row[1] for row in clipping)
    before = [row[2] for row in clipping]
    after = [row[3] for row in clipping]
    share = f" ({100 * clipped / updates:.3g}%)" if updates and clipped else ""
    counted = "" if every == 1 else f" (of the epochs kept, every {every})"
    text.append(
        f"clipping  clip {kind} {fmt(at)}: {clipped:,} of {updates:,} updates clipped{share}"
        f"{counted}\n",
        style="bold" if clipped else "",
    )
    if not clipped:
        finite = [v for v in before if math.isfinite(v)]
        largest = f" (mean per epoch at most {fmt(max(finite))})" if finite else ""
        text.append(
            f"          it never engaged: the gradient norm stayed within {fmt(at)}{largest}\n",
            style="dim",
        )
        return text
    last = every * len(before)
    ends = max(len(fmt(before[-1])), len(fmt(after[-1])))
    finite = [v for v in before + after if math.isfinite(v)]
    scale = "log scale" if finite and min(finite) > 0 else "linear scale"
    note = f"   (mean per epoch, {every}–{last}, {scale})"
    if width - 21 - 1 - ends - len(note) < 10:
        note = ""  # a narrow terminal: the curves before their caption
    columns = max(10, min(60, width - 21 - 1 - ends - len(note)))
    # both lines on one scale, so that "after" reads against "before"
    line = sparkline(before + after, 2 * columns)
    half = len(line) // 2
    text.append(f"‖g‖ before {fmt(before[0]):>9} ")
    text.append(line[:half], style="magenta")
    text.append(f" {fmt(before[-1]):<{ends}}{note}\n")
    text.append(f"‖g‖ after  {fmt(after[0]):>9} ")
    text.append(line[half:], style="magenta")
    text.append(f" {fmt(after[-1])}\n")
    return text


def percent(x: float) -> str:
    return "nan" if not math.isfinite(x) else f"{100 * x:.4g}%"


def predictions_table(
    data: Dataset,
    outputs: Sequence[float],
    right: Sequence[bool],
    rows: int = PREDICTION_ROWS,
    signed: bool = False,
) -> RenderableType:
    """Inputs, target and output per example: all of them for small sets, else the first
    rows and every wrong one up to `rows`. A `signed` loss's (hinge) target shows as ±1."""
    right = list(right)
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    for name in [*map(Text, data.feature_names), "target", "output"]:
        table.add_column(name, justify="right")
    table.add_column("", justify="left")
    chosen = list(range(data.size))
    if data.size > rows:
        wrong = [i for i in chosen if not right[i]]
        wrong = wrong[: rows - rows // 2]
        chosen = sorted(set(range(rows - len(wrong))) | set(wrong))
    for i in chosen:
        cells = [fmt(v) for v in data.X[i].tolist()]
        mark = Text("✓", style="green") if right[i] else Text("✗ wrong", style="bold red")
        target = 2.0 * data.Y[i] - 1.0 if signed else data.Y[i]
        table.add_row(*cells, fmt(target), fmt(outputs[i]), mark)
    notes = []
    if data.size > len(chosen):
        n_wrong = right.count(False)
        shown = f"{len(chosen)} of {data.size} rows shown"
        if n_wrong:
            shown += f": the first, then wrong ones; {n_wrong} wrong in all"
        else:
            shown += ", the first ones; none is wrong"
        notes.append(Text(f"({shown})", style="dim"))
    return Group(table, *notes)


def shape_text(layers: Sequence[int]) -> str:
    """`2-4-1`; three or more equal layers in a row as one, `2-16×9-1`."""
    parts = [(size, len(list(run))) for size, run in itertools.groupby(layers)]
    return "-".join(
        f"{size}×{count}" if count >= 3 else "-".join([str(size)] * count) for size, count in parts
    )


def summary_text(spec: Spec, data: Dataset) -> Text:
    """The spec and the data in two lines (printed before training, and atop a report)."""
    shape = shape_text(spec.layers)
    hidden = sorted(set(spec.activations[:-1]))
    acts = f"{'/'.join(hidden) or 'no hidden layer'} → {spec.activations[-1]}"
    clip = ""
    if spec.clip_value is not None:
        clip = f", clip value {fmt(spec.clip_value)}"
    elif spec.clip_norm is not None:
        clip = f", clip norm {fmt(spec.clip_norm)}"
    l2 = f" + {fmt(spec.l2)}·Σp²" if spec.l2 else ""
    rate = fmt(spec.learning_rate)
    words = {"full": "full-batch updates", "online": "online updates (shuffled)"}
    updates = words.get(spec.update, f"minibatches of {spec.batch_size} (shuffled)")
    if spec.lr_schedule == "linear" and spec.lr_end is not None:
        rate += f" → {fmt(spec.lr_end)} (linear)"
    return Text(
        f"{spec.name}: {shape} ({acts}), {spec.n_parameters} parameters, init {spec.init}, "
        f"loss {spec.loss}{l2}\n"
        f"data {data.name}, {data.size} examples, {updates}, "
        f"lr {rate}{clip}, {spec.epochs} epochs, seed {spec.seed}"
    )


def gradient_report(report: Report, title: str, more: str | None = None) -> RenderableType:
    """The per-layer gradient table, heat map and verdict; `more` says where the columns
    left out for lack of width are."""
    past = report.snapshots or None
    return layers_report(report.diagnosis, list(report.verdict), past, title=title, more=more)


def final_text(loss: float, accuracy: float, size: int) -> Text:
    """The trained weights on every example (not the curve's last point, a mean measured
    during the last epoch)."""
    correct = round(accuracy * size) if math.isfinite(accuracy) else 0
    return Text(
        f"final loss {fmt(loss)}, accuracy {percent(accuracy)} ({correct}/{size}) after training",
        style="bold",
    )


def layers_table(layers: Sequence[LayerRow]) -> Table:
    """A saved model's layers: shape, activation, parameters and the size of its weights."""
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    for name in ("layer", "shape", "activation"):
        table.add_column(name, justify="left")
    for name in ("params", "|w| mean", "|w| max", "b mean"):
        table.add_column(name, justify="right")
    for row in layers:
        table.add_row(
            row.name,
            f"{row.inputs} → {row.outputs}",
            row.activation,
            str(row.parameters),
            *(fmt(m) for m in (row.w_mean, row.w_max, row.b_mean)),
        )
    return table


def training_view(
    report: Report,
    *,
    width: int,
    boundary_map: RenderableType | None = None,
    header: bool = True,
    more: str | None = None,
    stopped_words: str = "",
) -> list[RenderableType]:
    """The report as `train` and `inspect` print it: with `header` its title, summary and
    layers, then the curves, clipping, a warning when training diverged (then the CLI's
    `stopped_words`), the final loss, the predictions, the `boundary_map` and the
    gradients; a part the report does not hold gets a one-line note."""
    shown: list[RenderableType] = []
    spec, data, final = report.spec, report.data, report.final
    if header:
        shown.append(Text(printable(report.title), style="bold"))
        shown.append(summary_text(spec, data) if spec and data else Text(report.summary or ""))
        shown.append("")
        if report.layers is not None:
            shown += [layers_table(report.layers), ""]
    shown.append(
        curve_text(report.loss, report.accuracy, report.every, width=width, unit=report.unit)
    )
    if report.clipping and report.clip is not None:
        shown.append(clipping_text(report.clipping, report.clip, report.every, width=width))
    if report.stopped:
        shown.append(Text(f"warning: {report.stopped}{stopped_words}", style="bold red"))
    if final is not None and data is not None:
        shown.append(final_text(final.loss, final.accuracy, data.size))
    elif final is not None:
        accuracy = f", accuracy {percent(final.accuracy)}" if math.isfinite(final.accuracy) else ""
        shown.append(Text(f"last recorded loss {fmt(final.loss)}{accuracy}"))
    if data is None or report.outputs is None or report.correct is None:
        shown.append(Text(RUN_LACKS, style="dim"))
    else:
        shown.append(predictions_table(data, report.outputs, report.correct, signed=report.signed))
        if boundary_map is not None:
            shown += ["", Text("Decision boundary (output over the input plane)", style="bold")]
            shown.append(boundary_map)
    shown += ["", gradient_report(report, report.gradients_title, more)]
    return shown
