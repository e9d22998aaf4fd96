"""Per-layer gradient diagnostics in the terminal: the rich table with a log-scale `rel`
bar, the side-by-side comparison and the over-training heat map (the --plot picture is
gradviz.render.plots, drawn by matplotlib).

Pure functions from `gradviz.stats` results to rich renderables; the CLI prints them.
Layer names reach rich as `Text`, never markup.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from gradviz.numbers import fmt
from gradviz.stats import Diagnosis, History, LayerStats, ParamGrad, series

STATUS_STYLES = {
    "NaN": "bold red",
    "exploding": "bold red",
    "dead": "red",
    "vanishing": "red",
    "stalled": "magenta",
    "saturated": "yellow",
    "weak": "yellow",
    "converged": "green",
    "ok": "green",
}
BAR_DECADES = 8  # the rel bar spans 1e-8 .. 1
BAR_WIDTH = 8
_EIGHTHS = " ▏▎▍▌▋▊▉"
_RAMP = "▁▂▃▄▅▆▇█"
# Cold to hot for the heat map: a small gradient is blue, a large one red.
_HEAT = ("#313695", "#4575b4", "#74add1", "#abd9e9", "#fee090", "#fdae61", "#f46d43", "#d73027")
DIGITS = 3


def _num(x: float | None) -> Text:
    return Text("—", style="dim") if x is None else Text(fmt(x, DIGITS))


def _pct(x: float | None) -> Text:
    if x is None:
        return Text("—", style="dim")
    if x == 0:
        return Text("0")
    return Text(f"{100 * x:.0f}" if x >= 0.01 else "<1")


def log_bar(rel: float | None, width: int = BAR_WIDTH, decades: int = BAR_DECADES) -> Text:
    """A bar whose length is log10(rel) on a fixed scale (1e-8 empty .. 1 full), so 1e-6
    and 1e-2 look different instead of both looking like zero."""
    if rel is None:
        return Text("")
    if not math.isfinite(rel):
        return Text("nan", style="bold red")
    if rel <= 0:
        return Text("·", style="dim")
    filled = max(0.0, min(1.0, (math.log10(rel) + decades) / decades)) * width
    eighths = round(filled * 8)
    full, part = divmod(eighths, 8)
    text = "█" * full + (_EIGHTHS[part] if part else "")
    if not text:
        text = "▏"  # below the scale, but not zero
    style = "red" if rel < 1e-2 else ("yellow" if rel < 1e-1 else "green")
    return Text(text.ljust(width), style=style)


def _status(layer: LayerStats) -> Text:
    return Text(layer.status, style=STATUS_STYLES.get(layer.status, ""))


# Columns of the layer table: (header, right-aligned, keep priority: higher stays longer
# when the terminal is narrow).
_COLUMNS = (
    ("layer", False, 99),
    ("act", False, 90),
    ("n", True, 30),
    ("mean|g|", True, 20),
    ("max|g|", True, 25),
    ("rms g", True, 95),
    ("rel", True, 80),
    ("log rel", False, 96),
    ("hop", True, 85),
    ("bound", True, 50),
    ("grad:data", True, 60),
    ("update:data", True, 65),
    ("act mean", True, 35),
    ("act std", True, 36),
    ("slope", True, 70),
    ("sat%", True, 44),
    ("dead%", True, 42),
    ("NaN", True, 40),
    ("status", False, 100),
)
# These columns matter far more when they hold something other than zero.
_ALARMS = {"sat%", "dead%", "NaN"}


def _above_bound(layer: LayerStats) -> bool:
    """The bound holds per sample; the batch-averaged signals can exceed it when the
    samples' signals cancel (a network near the mean prediction)."""
    return (
        layer.hop is not None
        and layer.hop_bound is not None
        and layer.hop > layer.hop_bound * (1 + 1e-9)
    )


def _row(layer: LayerStats) -> dict[str, Text]:
    hop = _num(None) if layer.hop is None else Text("×" + fmt(layer.hop, DIGITS))
    if _above_bound(layer):
        hop = Text("×" + fmt(layer.hop, DIGITS) + "*", style="dim")
    bound = _num(None) if layer.hop_bound is None else Text("≤" + fmt(layer.hop_bound, DIGITS))
    return {
        "layer": Text(layer.name),
        "act": Text(layer.activation),
        "n": Text(str(layer.n_params)),
        "mean|g|": _num(layer.mean_abs),
        "max|g|": _num(layer.max_abs),
        "rms g": _num(layer.rms),
        "rel": _num(layer.rel),
        "log rel": log_bar(layer.rel),
        "hop": hop,
        "bound": bound,
        "grad:data": _num(layer.grad_data),
        "update:data": _num(layer.update_data),
        "act mean": _num(layer.act_mean),
        "act std": _num(layer.act_std),
        "slope": _num(layer.mean_slope),
        "sat%": _pct(layer.saturated),
        "dead%": _pct(layer.dead),
        "NaN": Text(str(layer.nonfinite), style="bold red" if layer.nonfinite else ""),
        "status": _status(layer),
    }


def layer_table(diagnosis: Diagnosis, title: str | None = None, width: int | None = None) -> Table:
    """One row per layer: gradient sizes, rel (number and log bar: 1e-8 empty, 1 full),
    the hop factor of the backpropagated signal beside its bound, grad:data,
    update:data, activation statistics, and the status.

    Given a `width` (the terminal's), the least important columns are left out until the
    table fits, and the caption names them (`--json` has every number)."""
    rows = [_row(layer) for layer in diagnosis.layers]
    columns = [
        c
        for c in _COLUMNS
        if c[0] != "update:data" or any(layer.update_data is not None for layer in diagnosis.layers)
    ]

    def keep(column: tuple[str, bool, int]) -> int:
        name, _, priority = column
        alarming = name in _ALARMS and any(r[name].plain not in ("0", "—") for r in rows)
        return priority + 50 if alarming else priority

    def size(name: str) -> int:
        return max(
            [len(name), BAR_WIDTH if name == "log rel" else 0] + [r[name].cell_len for r in rows]
        )

    dropped: list[str] = []
    if width is not None:
        while sum(size(c[0]) + 3 for c in columns) - 3 > width and len(columns) > 4:
            weakest = min(columns, key=keep)
            columns.remove(weakest)
            dropped.append(weakest[0])
    caption = Text(f"log rel: 1e-{BAR_DECADES} empty, 1 full", style="dim")
    if any(_above_bound(layer) for layer in diagnosis.layers) and any(
        c[0] == "hop" for c in columns
    ):
        caption.append("; hop*: above the per-sample bound, the samples' signals cancel")
    if dropped:
        caption.append(f"; not shown for lack of width: {', '.join(dropped)} (see --json)")
    table = Table(
        title=Text(title) if title else None,
        caption=caption,
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        pad_edge=False,
        show_edge=False,
        title_justify="left",
        caption_justify="left",
    )
    for name, right, _ in columns:
        table.add_column(name, justify="right" if right else "left", no_wrap=True)
    for row in rows:
        table.add_row(*(row[name] for name, _, _ in columns))
    return table


def verdict_text(lines: Sequence[str]) -> Text:
    """The verdict sentences, one per line, as plain text (never markup)."""
    return Text("\n").join(Text("• " + line) for line in lines)


def heat_map(snapshots: History, width: int = 60) -> RenderableType:
    """Layers × time: one character per recorded moment, its height and colour the rms
    gradient on a log scale shared by all layers (`·` zero, `!` NaN/inf)."""
    epochs, names, rows = series(snapshots)
    if not epochs:
        return Text("")
    picks = _pick(len(epochs), width)
    finite = [v for row in rows for i in picks if (v := row[i]) > 0 and math.isfinite(v)]
    lo = math.log10(min(finite)) if finite else 0.0
    hi = math.log10(max(finite)) if finite else 0.0
    span = max(hi - lo, 1e-12)
    acts = {layer.name: layer.activation for layer in snapshots[-1][1].layers}
    label_width = max(len(f"{n} {acts.get(n, '')}") for n in names)
    lines = [
        Text.assemble(
            ("rms gradient over training", "bold"),
            (f"   log scale: ▁ {fmt(10**lo, 2)} … █ {fmt(10**hi, 2)}", "dim"),
        )
    ]
    first, last = str(epochs[picks[0]]), str(epochs[picks[-1]])
    axis = f"epoch {first}".ljust(max(len(picks) - len(last), len(first) + 7)) + last
    lines.append(Text(" " * (label_width + 2) + axis, style="dim"))
    for name, row in zip(names, rows, strict=True):
        line = Text(f"{name} {acts.get(name, '')}".ljust(label_width) + "  ")
        for i in picks:
            v = row[i]
            if not math.isfinite(v):
                line.append("!", style="bold red")
            elif v <= 0:
                line.append("·", style="dim")
            else:
                level = min(len(_RAMP) - 1, int((math.log10(v) - lo) / span * len(_RAMP)))
                line.append(_RAMP[level], style=_HEAT[level])
        start, end = row[picks[0]], row[picks[-1]]
        line.append(f"  {fmt(start, 2)} → {fmt(end, 2)}", style="dim")
        lines.append(line)
    return Text("\n").join(lines)


def _pick(n: int, width: int) -> list[int]:
    """At most `width` evenly spread indices of n, always keeping the first and last."""
    if n <= width:
        return list(range(n))
    return sorted({round(i * (n - 1) / (width - 1)) for i in range(width)})


class FittedLayerTable:
    """`layer_table` built when printed, as wide as the console allows."""

    def __init__(self, diagnosis: Diagnosis, title: str | None = None) -> None:
        self.diagnosis = diagnosis
        self.title = title

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield layer_table(self.diagnosis, self.title, options.max_width)


def report(
    diagnosis: Diagnosis,
    verdict: Sequence[str],
    snapshots: History | None = None,
    title: str | None = None,
    width: int | None = None,
) -> RenderableType:
    """What `train`, `inspect` and `grads` print: the table, the heat map when there is
    more than one recorded moment, and the verdict. The table fits `width` if given,
    else the console's width when printed (see `layer_table`)."""
    table = (
        FittedLayerTable(diagnosis, title)
        if width is None
        else layer_table(diagnosis, title, width)
    )
    parts: list[RenderableType] = [table]
    if snapshots and len(snapshots) > 1:
        parts += [heat_map(snapshots), Text("")]
    parts.append(verdict_text(verdict))
    return Group(*parts)


def compare_table(a: Diagnosis, b: Diagnosis, name_a: str = "A", name_b: str = "B") -> Table:
    """Two networks side by side, layer against layer: rms gradient, rel bar, status."""
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False, show_edge=False)
    table.add_column("layer", no_wrap=True)
    for tag in (name_a, name_b):
        table.add_column(f"{tag} act", no_wrap=True)
        table.add_column(f"{tag} rms g", justify="right", no_wrap=True)
        table.add_column(f"{tag} rel (log)", no_wrap=True, min_width=BAR_WIDTH)
        table.add_column(f"{tag} status", no_wrap=True)
    depth = max(len(a.layers), len(b.layers))
    for i in range(depth):
        row: list[Text] = []
        names = []
        for d in (a, b):
            if i < len(d.layers):
                layer = d.layers[i]
                names.append(layer.name)
                row += [Text(layer.activation), _num(layer.rms), log_bar(layer.rel), _status(layer)]
            else:
                row += [Text(""), Text(""), Text(""), Text("")]
        table.add_row(Text(" / ".join(dict.fromkeys(names))), *row)
    return table


def compare_report(
    a: Diagnosis,
    b: Diagnosis,
    verdict_a: Sequence[str],
    verdict_b: Sequence[str],
    label_a: str,
    label_b: str,
) -> RenderableType:
    """The comparison table with both verdicts under it."""
    header = Text.assemble(("A", "bold"), f" = {label_a}\n", ("B", "bold"), f" = {label_b}")
    parts: list[RenderableType] = [header, compare_table(a, b)]
    for tag, lines in (("A", verdict_a), ("B", verdict_b)):
        for line in lines:
            parts.append(Text.assemble((f"{tag}: ", "bold"), line))
    return Group(*parts)


def params_table(params: Sequence[ParamGrad]) -> RenderableType:
    """Every parameter with its gradient and a log bar relative to the largest |grad|,
    then the parameters that get the least credit."""
    finite = [abs(p.grad) for p in params if math.isfinite(p.grad)]
    top = max(finite, default=0.0)
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False, show_edge=False)
    table.add_column("parameter", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("grad", justify="right", no_wrap=True)
    table.add_column("|grad| / largest", justify="right", no_wrap=True)
    table.add_column(f"log 1e-{BAR_DECADES}..1", no_wrap=True, min_width=BAR_WIDTH)
    for p in params:
        rel = abs(p.grad) / top if top and math.isfinite(p.grad) else None
        if not math.isfinite(p.grad):
            rel = math.nan
        table.add_row(Text(p.name), _num(p.value), _num(p.grad), _num(rel), log_bar(rel))
    ranked = sorted((p for p in params if math.isfinite(p.grad)), key=lambda p: abs(p.grad))
    least = ", ".join(f"{p.name} ({fmt(p.grad, 2)})" for p in ranked[:3])
    note = Text(f"least credit: {least}" if least else "no finite gradients", style="dim")
    return Group(table, note)
