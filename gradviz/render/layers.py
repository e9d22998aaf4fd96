"""Per-layer gradient diagnostics in the terminal as rich renderables: the table with a
log-scale `rel` bar, the side-by-side comparison and the over-training heat map. Layer names
reach rich as `Text`, never markup, their control characters as escapes (`text.printable`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Container, Iterable, Sequence
from typing import Any

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from gradviz.numbers import fmt
from gradviz.records import Diagnosis, History, LayerStats, ParamGrad, series
from gradviz.text import printable

STATUS_STYLES = {
    "NaN": "bold red",
    "exploding": "bold red",
    "dead": "red",
    "zero": "red",
    "vanishing": "red",
    "stalled": "magenta",
    "saturated": "yellow",
    "weak": "yellow",
    "converged": "green",
    "ok": "green",
    "frozen": "dim",
}
BAR_DECADES = 8  # the rel bar spans 1e-8 .. 1
BAR_WIDTH = 8
_EIGHTHS = " ▏▎▍▌▋▊▉"
_RAMP = "▁▂▃▄▅▆▇█"
# Cold to hot for the heat map: a small gradient is blue, a large one red.
_HEAT = ("#313695", "#4575b4", "#74add1", "#abd9e9", "#fee090", "#fdae61", "#f46d43", "#d73027")
DIGITS = 3
NAME_WIDTH = 48  # cells of a layer's name in the tables and the heat map (then …)


def layer_label(name: str) -> str:
    """A layer's name, printable, cut after NAME_WIDTH cells with … (a module may be named
    with 1,500 characters: the numbers must still fit beside it)."""
    shown = printable(name)
    if cell_len(shown) <= NAME_WIDTH:
        return shown
    while cell_len(shown) > NAME_WIDTH - 1:
        shown = shown[:-1]
    return shown + "…"


def _num(x: float | None, prefix: str = "") -> Text:
    return Text("—", style="dim") if x is None else Text(prefix + fmt(x, DIGITS))


def _pct(x: float | None) -> Text:
    if x is None:
        return Text("—", style="dim")
    if x == 0:
        return Text("0")
    return Text(f"{100 * x:.0f}" if x >= 0.01 else "<1")


def log_bar(rel: float | None) -> Text:
    """log10(rel) on a fixed scale (1e-8 empty .. 1 full): 1e-6 and 1e-2 look different."""
    if rel is None:
        return Text("")
    if not math.isfinite(rel):
        return Text("nan", style="bold red")
    if rel <= 0:
        return Text("·", style="dim")
    filled = max(0.0, min(1.0, (math.log10(rel) + BAR_DECADES) / BAR_DECADES)) * BAR_WIDTH
    full, part = divmod(round(filled * 8), 8)  # whole cells, eighths of one
    # nothing to draw: below the scale, but not zero
    text = ("█" * full + (_EIGHTHS[part] if part else "")) or "▏"
    style = "red" if rel < 1e-2 else ("yellow" if rel < 1e-1 else "green")
    return Text(text.ljust(BAR_WIDTH), style=style)


def _status(layer: LayerStats) -> Text:
    return Text(layer.status, style=STATUS_STYLES.get(layer.status, ""))


def _hop(layer: LayerStats) -> Text:
    if _above_bound(layer):
        return Text("×" + fmt(layer.hop, DIGITS) + "*", style="dim")
    return _num(layer.hop, "×")


def _nonfinite(layer: LayerStats) -> Text:
    return Text(str(layer.nonfinite), style="bold red" if layer.nonfinite else "")


def _above_bound(layer: LayerStats) -> bool:
    """The bound holds per sample; the batch-averaged signals can exceed it when the
    samples' signals cancel (a network near the mean prediction)."""
    bound = layer.hop_bound
    return layer.hop is not None and bound is not None and layer.hop > bound * (1 + 1e-9)


# Columns of the layer table: (header, right-aligned, keep priority: higher stays longer
# when the terminal is narrow, a layer's cell).
_COLUMNS: tuple[tuple[str, bool, int, Callable[[LayerStats], Text]], ...] = (
    ("layer", False, 99, lambda layer: Text(layer_label(layer.name))),
    ("act", False, 90, lambda layer: Text(layer.activation)),
    ("n", True, 30, lambda layer: Text(str(layer.n_params))),
    ("mean|g|", True, 20, lambda layer: _num(layer.mean_abs)),
    ("max|g|", True, 25, lambda layer: _num(layer.max_abs)),
    ("rms g", True, 95, lambda layer: _num(layer.rms)),
    ("rel", True, 80, lambda layer: _num(layer.rel)),
    ("log rel", False, 96, lambda layer: log_bar(layer.rel)),
    ("hop", True, 85, _hop),
    ("bound", True, 50, lambda layer: _num(layer.hop_bound, "≤")),
    ("grad:data", True, 60, lambda layer: _num(layer.grad_data)),
    ("update:data", True, 65, lambda layer: _num(layer.update_data)),
    ("act mean", True, 35, lambda layer: _num(layer.act_mean)),
    ("act std", True, 36, lambda layer: _num(layer.act_std)),
    ("slope", True, 70, lambda layer: _num(layer.mean_slope)),
    ("sat%", True, 44, lambda layer: _pct(layer.saturated)),
    ("dead%", True, 42, lambda layer: _pct(layer.dead)),
    ("NaN", True, 40, _nonfinite),
    ("status", False, 100, _status),
)
# These columns matter far more when they hold something other than zero.
_ALARMS = {"sat%", "dead%", "NaN"}
# The columns of the activations: "?" in a row whose activations were not read, not a
# number that looks measured.
_ACTIVATION_COLUMNS = {"act", "act mean", "act std", "slope", "sat%", "dead%"}
_CELLS = {name: cell for name, _, _, cell in _COLUMNS}
_RIGHT = {name for name, right, _, _ in _COLUMNS if right}


def _cell(layer: LayerStats, name: str, cell: Callable[[LayerStats], Text]) -> Text:
    unread = layer.activations_unread
    return Text("?", style="dim") if unread and name in _ACTIVATION_COLUMNS else cell(layer)


def layer_table(
    diagnosis: Diagnosis,
    title: str | None = None,
    width: int | None = None,
    more: str | None = None,
) -> Table:
    """One row per layer, its columns `_COLUMNS`. Given a `width` (the terminal's), the least
    important columns are left out until the table fits, and the caption names them and
    where every number is, in the caller's words (`more`: `see --json` in the CLI)."""
    layers = diagnosis.layers
    cells = {name: [_cell(layer, name, cell) for layer in layers] for name, _, _, cell in _COLUMNS}
    if all(layer.update_data is None for layer in layers):
        del cells["update:data"]
    keep = {name: priority for name, _, priority, _ in _COLUMNS}
    for name in _ALARMS:
        if any(cell.plain not in ("0", "—", "?") for cell in cells[name]):
            keep[name] += 50
    dropped: list[str] = []
    while width is not None and not _fits(cells, width) and len(cells) > 4:
        weakest = min(cells, key=keep.__getitem__)
        del cells[weakest]
        dropped.append(weakest)
    caption = Text(f"log rel: 1e-{BAR_DECADES} empty, 1 full", style="dim")
    if "hop" in cells and any(_above_bound(layer) for layer in layers):
        caption.append("; hop*: above the per-sample bound, the samples' signals cancel")
    if any(layer.unread for layer in diagnosis.layers):
        caption.append("; ?: not read (the notes say why)")
    if dropped:
        caption.append(f"; {_not_shown(dropped, more)}")
    title_text = Text(title) if title else None
    rows = zip(*cells.values(), strict=True)
    return _table(cells, _RIGHT, (), rows, title=title_text, caption=caption, title_justify="left")


def _fits(columns: dict[str, list[Text]], width: int) -> bool:
    """Whether the columns, each as wide as its header, its widest cell or a bar, fit `width`."""
    bar = ("log rel", "rel (log)")
    wide = [
        max([len(name), BAR_WIDTH if name.endswith(bar) else 0, *(c.cell_len for c in cells)])
        for name, cells in columns.items()
    ]
    return sum(wide) + 3 * (len(wide) - 1) <= width


def _table(
    columns: Iterable[str],
    right: Container[str] = (),
    bars: Container[str] = (),
    rows: Iterable[Sequence[Text]] = (),
    **options: Any,
) -> Table:
    """A table in the views' one style: a rule under the header, no frame, no cell wrapped."""
    look = {"box": box.SIMPLE_HEAD, "padding": (0, 1), "caption_justify": "left"}
    table = Table(pad_edge=False, show_edge=False, **{**look, **options})
    for name in columns:
        justify = "right" if name in right else "left"
        min_width = BAR_WIDTH if name in bars else None
        table.add_column(name, justify=justify, no_wrap=True, min_width=min_width)
    for row in rows:
        table.add_row(*row)
    return table


def _not_shown(dropped: list[str], more: str | None) -> str:
    where = f" ({more})" if more else ""
    return f"not shown for lack of width: {', '.join(dropped)}{where}"


def verdict_text(lines: Sequence[str], prefix: str = "• ") -> VerdictLines:
    """The verdict sentences, one per line, as plain text (never markup)."""
    return VerdictLines([(prefix, line) for line in lines])


# where a verdict line may break: after a clause's punctuation, so that what belongs
# together ("Xavier/He init", "×0.44 per layer") stays on one line
_CLAUSE_END = re.compile(r"(?<=[,;:.)])\s+")


class VerdictLines:
    """Sentences, each after its prefix (`• `, `A: `), wrapped to the terminal between clauses
    (`wrap_clauses`); where the console does not wrap (piped output), one sentence a line."""

    def __init__(self, items: Sequence[tuple[str, str]]) -> None:
        # a sentence names layers, which may hold a tab or an escape sequence
        self.items = [(prefix, printable(sentence)) for prefix, sentence in items]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for prefix, sentence in self.items:
            if options.no_wrap or console.soft_wrap:
                yield Text(prefix + sentence)
                continue
            for line in wrap_clauses(sentence, options.max_width, prefix):
                yield Text(line)


def wrap_clauses(sentence: str, width: int, prefix: str = "") -> list[str]:
    """`prefix + sentence` in lines of at most `width` cells, broken between clauses
    (after `,` `;` `:` `.` `)`), between words only in a clause too wide for a line."""
    indent = " " * cell_len(prefix)
    lines: list[str] = []
    line, empty = prefix, True  # `empty`: nothing of the sentence on this line yet
    for clause in _CLAUSE_END.split(sentence):
        pieces = [clause]
        if cell_len(indent + clause) > width:  # too wide for any line: by words
            pieces = clause.split(" ")
        for piece in pieces:
            if not empty and cell_len(f"{line} {piece}") > width:
                lines.append(line)
                line, empty = indent, True
            line = line + piece if empty else f"{line} {piece}"
            empty = False
    lines.append(line)
    return lines


def heat_map(snapshots: History) -> RenderableType:
    """Layers × time: one character per recorded moment, its height and colour the rms
    gradient on a log scale shared by all layers (`·` zero, `!` NaN/inf)."""
    epochs, names, rows = series(snapshots)
    if not epochs:
        return Text("")
    picks = _pick(len(epochs), 60)  # at most 60 columns
    finite = [v for row in rows for i in picks if (v := row[i]) > 0 and math.isfinite(v)]
    lo, hi = (math.log10(min(finite)), math.log10(max(finite))) if finite else (0.0, 0.0)
    span = max(hi - lo, 1e-12)
    acts = {layer.name: layer.activation_shown for layer in snapshots[-1][1].layers}
    labels = [f"{layer_label(n)} {acts.get(n, '')}" for n in names]
    label_width = max(cell_len(label) for label in labels)
    scale = f"   log scale: ▁ {fmt(10**lo, 2)} … █ {fmt(10**hi, 2)}"
    lines = [Text.assemble(("rms gradient over training", "bold"), (scale, "dim"))]
    first, last = str(epochs[picks[0]]), str(epochs[picks[-1]])
    unit = snapshots[-1][1].unit  # (an epoch of gradviz's training, or a recorded step)
    axis = f"{unit} {first}".ljust(max(len(picks) - len(last), len(first) + len(unit) + 2)) + last
    lines.append(Text(" " * (label_width + 2) + axis, style="dim"))
    for label, row in zip(labels, rows, strict=True):
        line = Text(label + " " * (label_width - cell_len(label) + 2))
        for i in picks:
            v = row[i]
            if not math.isfinite(v):
                line.append("!", style="bold red")
            elif v <= 0:
                line.append("·", style="dim")
            else:
                level = min(len(_RAMP) - 1, int((math.log10(v) - lo) / span * len(_RAMP)))
                line.append(_RAMP[level], style=_HEAT[level])
        line.append(f"  {fmt(row[picks[0]], 2)} → {fmt(row[picks[-1]], 2)}", style="dim")
        lines.append(line)
    return Text("\n").join(lines)


def _pick(n: int, width: int) -> list[int]:
    """At most `width` evenly spread indices of n, always keeping the first and last."""
    if n <= width:
        return list(range(n))
    return sorted({round(i * (n - 1) / (width - 1)) for i in range(width)})


class _Fitted:
    """A table built when printed, as wide as the console allows."""

    def __init__(self, build: Callable[[int], RenderableType]) -> None:
        self.build = build

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.build(options.max_width)


def fitted(build: Callable[[int], RenderableType], width: int | None) -> RenderableType:
    """`build(width)`, or without a width built to the console's when printed."""
    return _Fitted(build) if width is None else build(width)


def report(
    diagnosis: Diagnosis,
    verdict: Sequence[str],
    snapshots: History | None = None,
    title: str | None = None,
    width: int | None = None,
    more: str | None = None,
) -> RenderableType:
    """What `train`, `inspect` and `grads` print: the table (fitted to `width`, else to the
    console; see `layer_table`), the heat map over several moments, and the verdict."""
    parts = [fitted(lambda room: layer_table(diagnosis, title, room, more), width)]
    if snapshots and len(snapshots) > 1:
        parts += [heat_map(snapshots), Text("")]
    parts.append(verdict_text(verdict))
    return Group(*parts)


# compare's columns per network: its name -> the layer table's column it shows, and the order
# they are left out in when the table is too wide: the bars first, then the activations (the
# numbers and the statuses always stay: a cell is never cut)
_COMPARE_COLUMNS = {"act": "act", "rms g": "rms g", "rel (log)": "log rel", "status": "status"}
_COMPARE_DROP = ("rel (log)", "act")


def compare_table(
    a: Diagnosis,
    b: Diagnosis,
    name_a: str = "A",
    name_b: str = "B",
    width: int | None = None,
    more: str | None = None,
) -> Table:
    """Two networks side by side, layer against layer: rms gradient, rel bar, status; the bars
    and then the activations left out until it fits `width`, as `layer_table` does."""
    depth = max(len(a.layers), len(b.layers))
    tags = (name_a, name_b)
    cells: dict[str, list[Text]] = {"layer": []}
    cells |= {f"{tag} {column}": [] for tag in tags for column in _COMPARE_COLUMNS}
    for i in range(depth):
        pair = [d.layers[i] if i < len(d.layers) else None for d in (a, b)]
        names = [layer_label(layer.name) for layer in pair if layer is not None]
        cells["layer"].append(Text(" / ".join(dict.fromkeys(names))))
        for tag, layer in zip(tags, pair, strict=True):
            for column, shows in _COMPARE_COLUMNS.items():
                cell = _CELLS[shows](layer) if layer is not None else Text("")
                cells[f"{tag} {column}"].append(cell)
    dropped: list[str] = []
    for column in _COMPARE_DROP:
        if width is None or _fits(cells, width):
            break
        for tag in tags:
            del cells[f"{tag} {column}"]
        dropped.append(f"{name_a}/{name_b} {column}")
    right = {
        f"{tag} {c}" for tag in tags for c, shows in _COMPARE_COLUMNS.items() if shows in _RIGHT
    }
    bars = {f"{tag} rel (log)" for tag in tags}
    caption = Text(_not_shown(dropped, more), style="dim") if dropped else None
    return _table(cells, right, bars, zip(*cells.values(), strict=True), caption=caption)


def _scores_table(scores: Sequence[tuple[float, float, int] | None]) -> Table:
    """Each network's loss and accuracy on its data, the weights measured."""
    table = _table(("", "loss", "accuracy"), right=("loss", "accuracy"), box=None)
    for tag, score in zip("AB", scores, strict=True):
        if score is None:
            table.add_row(Text(tag, style="bold"), Text("—"), Text("—"))
            continue
        loss, accuracy, size = score
        right = round(accuracy * size) if math.isfinite(accuracy) else 0
        share = "nan" if not math.isfinite(accuracy) else f"{100 * accuracy:.4g}%"
        table.add_row(Text(tag, style="bold"), _num(loss), Text(f"{share} ({right}/{size})"))
    return table


def compare_report(
    a: Diagnosis,
    b: Diagnosis,
    verdict_a: Sequence[str],
    verdict_b: Sequence[str],
    label_a: str,
    label_b: str,
    width: int | None = None,
    scores: Sequence[tuple[float, float, int] | None] | None = None,
    more: str | None = None,
) -> RenderableType:
    """The two networks' `scores` (loss, accuracy, examples), the comparison table (fitted
    as `report`'s) and both verdicts."""
    # the labels wrapped between clauses, as the verdicts are
    parts: list[RenderableType] = [VerdictLines([("A = ", label_a), ("B = ", label_b)])]
    if scores is not None:
        parts.append(_scores_table(scores))
    table = fitted(lambda room: compare_table(a, b, width=room, more=more), width)
    parts += [table, verdict_text(verdict_a, "A: "), verdict_text(verdict_b, "B: ")]
    return Group(*parts)


def params_table(params: Sequence[ParamGrad]) -> RenderableType:
    """Every parameter with its gradient and a log bar relative to the largest |grad|,
    then the parameters that get the least credit."""
    finite = [abs(p.grad) for p in params if math.isfinite(p.grad)]
    top = max(finite, default=0.0)
    bar = f"log 1e-{BAR_DECADES}..1"
    right = ("value", "grad", "|grad| / largest")
    table = _table(("parameter", *right, bar), right, bars=(bar,))
    for p in params:
        rel = abs(p.grad) / top if top and math.isfinite(p.grad) else None
        if not math.isfinite(p.grad):
            rel = math.nan
        table.add_row(Text(printable(p.name)), _num(p.value), _num(p.grad), _num(rel), log_bar(rel))
    ranked = sorted((p for p in params if math.isfinite(p.grad)), key=lambda p: abs(p.grad))
    least = ", ".join(f"{p.name} ({fmt(p.grad, 2)})" for p in ranked[:3])
    note = Text(f"least credit: {least}" if least else "no finite gradients", style="dim")
    return Group(table, note)
