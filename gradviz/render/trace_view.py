"""The trace (`gradviz.tracing`) and the gradient check (`gradviz.checking`) as rich
renderables for the terminal. User text goes in through `Text`, never markup: `w[0]` prints
as it is."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from rich.console import Group, RenderableType
from rich.text import Text

from gradviz.errors import OptionWords, keyword
from gradviz.numbers import fmt
from gradviz.records import Contribution, ForwardStep, LeafGradient, Row, Step, UnitStep, summary
from gradviz.render.diagram import Diagram
from gradviz.render.frames import Change, Frames
from gradviz.text import operand

if TYPE_CHECKING:
    from gradviz.engine import Number

NAME = "bold"
FORMULA = "cyan"
CREDIT = "yellow"
STOPPED = "red"
DIM = "dim"
STATUS_STYLES = {
    "pass": "green",
    "fail": "bold red",
    "non-differentiable": "yellow",
    "non-finite": "yellow",
    "detached": "yellow",
}


def d(out: str, name: str) -> str:
    """Leibniz notation for a credit: `dL/da`, `dL/d(-1)` for a constant."""
    return f"d{out}/d{operand(name)}"


# A product whose slope overflowed but whose credit did not (log's 1/x at 1e-310: the row
# divides, `Op.chain`), said so: `1e-310 · inf = 1` alone reads as a mistake.
ONE_QUOTIENT = " (taken as one quotient: the slope alone overflows)"


def _factor(x: Number) -> str:
    """A number as the right-hand factor of a product: negatives in parentheses."""
    text = fmt(x)
    return f"({text})" if text.startswith("-") else text


def columns(rows: list[tuple[Text, ...]], justify: str = "", gap: int = 3) -> list[Text]:
    """Rows of cells padded into aligned columns, with no trailing spaces (so piped
    output diffs cleanly). `justify` has one letter per column: `l` or `r` (default l)."""
    widths = [max(cell.cell_len for cell in column) for column in zip(*rows, strict=True)]
    lines = []
    for row in rows:
        padded = []
        for i, cell in enumerate(row):
            pad = Text(" " * (widths[i] - cell.cell_len))
            padded.append(pad + cell if justify[i : i + 1] == "r" else cell + pad)
        line = Text(" " * gap).join(padded)
        line.rstrip()
        lines.append(line)
    return lines


def _indented(lines: list[Text], by: int = 2) -> list[Text]:
    return [Text(" " * by) + line for line in lines]


def _heading(text: str, note: str) -> Text:
    return Text.assemble((text, "bold underline"), ("  " + note, DIM))


def _named(line: Text, name: str, definition: str | None) -> Text:
    """`line` then the node's name and, when it has one, how it is computed (`e = a·b`)."""
    line.append(name, style=NAME)
    if definition is not None:
        line.append_tokens([(" = ", None), (definition, FORMULA)])
    return line


def _step_header(index: int, total: int, name: str, definition: str | None = None) -> Text:
    return _named(Text(f"Step {index + 1}/{total}  ", style="bold"), name, definition)


def forward_view(steps: list[ForwardStep]) -> RenderableType:
    """The forward pass: each node in topological order, how it is computed, its value."""
    rows = []
    for step in steps:
        line = _named(Text(), step.name, step.definition).append(" = " + fmt(step.data))
        rows.append((Text(str(step.index + 1), style=DIM), line))
    return Group(
        _heading("Forward pass", "(topological order: every input before its use)"),
        *_indented(columns(rows, "r", gap=2)),
    )


def _contribution_cells(step: Step, c: Contribution, out: str, twice: bool) -> tuple[Text, ...]:
    """Three cells for one edge: the input, its local derivative, the credit it gets."""
    target = Text.assemble("→ ", (c.parent_name, NAME))
    if twice:  # x*x: say which use of x this is
        target.append(f" (input {'ab'[c.position]})", style=DIM)
    local = Text(c.named_formula, style=FORMULA)
    if c.passes and c.local_text != fmt(c.local):
        local.append(f" = {fmt(c.local)}")
    if not c.passes:
        stopped = f"{step.node.op.name} passes no credit: the gradient stops here"
        return target, local, Text(stopped, style=STOPPED)
    passed = Text(f"{d(out, c.parent_name)} += {d(out, step.name)} · ")
    passed.append(c.local_text if " " not in c.local_text else f"({c.local_text})", style=FORMULA)
    quotient = np.all(np.isfinite(c.amount)) and not np.all(np.isfinite(c.local))
    how = ONE_QUOTIENT if quotient else ""
    passed.append(f" = {fmt(step.credit)} · {_factor(c.local)}{how} = ")
    passed.append(fmt(c.amount), style=CREDIT)
    if c.earlier:
        passed.append(_so_far(c.before, c.amount, c.total), style=DIM)
    return target, local, passed


def _so_far(before: Number, amount: Number, total: Number) -> str:
    return f"   (so far {fmt(before)} + {_factor(amount)} = {fmt(total)})"


def _credit_line(step: Step, out: str) -> Text:
    """Where the node's credit came from, summed when it has several uses."""
    line = Text.assemble("  ", (d(out, step.name), NAME), " = ")
    if step.is_output:
        line.append("1", style=CREDIT)
        line.append(f"  (the output: a nudge of {out} moves {out} by the same amount)", style=DIM)
        return line
    if len(step.sources) > 1:
        parts = [f"{_factor(s.amount) if i else fmt(s.amount)}" for i, s in enumerate(step.sources)]
        line.append(" + ".join(parts) + " = ")
    line.append(fmt(step.credit), style=CREDIT)
    senders = ", ".join(s.consumer_name for s in step.sources)
    uses = f"{len(step.sources)} uses: " if len(step.sources) > 1 else ""
    line.append(f"  (from {uses}{senders})", style=DIM)
    if step.is_leaf:
        line.append("  — the credit stops at a leaf: its gradient", style=DIM)
    return line


def backward_view(steps: list[Step], out: str) -> RenderableType:
    """The backward pass, one block per step: credit in, local derivatives, credit out."""
    order = "(reverse topological order: a node's credit is complete when its turn comes)"
    blocks: list[RenderableType] = [_heading("Backward pass", order)]
    for step in steps:
        header = _step_header(step.index, len(steps), step.name, step.definition)
        kind = "the output" if step.is_output else ("leaf" if step.is_leaf else "")
        if kind:
            header.append(f"  ({kind})", style=DIM)
        blocks += [Text(""), header, _credit_line(step, out)]
        twice = len({id(c.parent) for c in step.contributions}) < len(step.contributions)
        rows = [_contribution_cells(step, c, out, twice) for c in step.contributions]
        blocks.extend(_indented(columns(rows)))
    return Group(*blocks)


def gradients_view(rows: list[LeafGradient], out: str, unreached: list[str] = ()) -> RenderableType:
    """Every leaf's gradient with its plain-words meaning."""
    cells = [
        (Text(d(out, row.name), style=NAME), Text(fmt(row.grad), style=CREDIT), Text(row.sentence))
        for row in rows
    ]
    parts: list[RenderableType] = [
        _heading("Gradients", f"(what a small nudge of each leaf does to {out})"),
        *_indented(columns(cells, "lr", gap=2)),
    ]
    if unreached:
        names = ", ".join(unreached)
        parts.append(Text(f"Not reached by any credit (behind detach): {names}", style=DIM))
    return Group(*parts)


def check_view(
    rows: list[Row], out: str, *, show: bool = False, words: OptionWords = keyword
) -> RenderableType:
    """The gradient check as a table, notes for rows that need one, and a summary line.

    The table fits 80 columns: it leaves out the absolute error (`show=True` prints it
    with each leaf's L(x+h), L(x−h) and D(h)) and calls the estimate `finite diff`."""
    header = tuple(
        Text(t, style="bold")
        for t in ("leaf", "value", f"analytic ∂{out}/∂leaf", "finite diff", "rel error", "status")
    )
    cells = [
        (
            Text(row.name, style=NAME),
            *(Text(fmt(x)) for x in (row.data, row.analytic, row.numeric)),
            Text(fmt(row.rel_error, 2)),
            Text(row.status, style=STATUS_STYLES[row.status]),
        )
        for row in rows
    ]
    lines = columns([header, *cells], "lrrrrl", gap=2)
    rule = Text("─" * max(line.cell_len for line in lines), style=DIM)
    notes = [
        Text.assemble(
            (f"{row.name}: ", NAME),
            (_with_remedy(row, words), STATUS_STYLES[row.status]),
        )
        for row in rows
        if row.note
    ]
    verdict = Text(summary(rows), style="bold red" if any(r.failed for r in rows) else "bold")
    shown = [Text(""), *by_hand(rows, out)] if show else []
    return Group(lines[0], rule, *lines[1:], *notes, *shown, verdict)


def _with_remedy(row: Row, words: OptionWords) -> str:
    """The row's note, and the option it advises (`words` names it: `--eps` in the CLI)."""
    return row.note if row.remedy is None else f"{row.note} ({words(row.remedy)})"


def _digits_to_tell_apart(x: Number, y: Number) -> int:
    """Significant digits that show x and y differ, and their difference to 3 digits:
    L(x±h) agree in about log10(|L| / |L(x+h) − L(x−h)|) digits (17 when equal)."""
    try:
        a, b = float(np.mean(x)), float(np.mean(y))
    except (TypeError, ValueError):
        return 17
    size, gap = max(abs(a), abs(b)), abs(a - b)
    if not (math.isfinite(size) and math.isfinite(gap)) or size == 0:
        return 4
    if gap == 0:
        return 17
    return max(4, min(17, math.ceil(math.log10(size / gap)) + 3))


def by_hand(rows: list[Row], out: str) -> list[Text]:
    """Each leaf's finite difference as the lesson computes it: L(x+h), L(x−h), their
    difference over 2h, and the backward pass's gradient, with the digits it takes to see
    them differ. The table's estimate is D(h) and D(h/2) extrapolated, closer still."""
    lines = [_heading("Finite differences by hand", f"D = ({out}(x+h) − {out}(x−h)) / 2h")]
    for row in rows:
        x = row.name
        h = row.step / 2 if isinstance(row.step, float) else row.eps
        p = _digits_to_tell_apart(row.plus, row.minus)
        q = _digits_to_tell_apart(row.central, row.analytic)
        pairs = [
            (f"{out}({x}+h)", fmt(row.plus, p)),
            (f"{out}({x}−h)", fmt(row.minus, p)),
            ("D", fmt(row.central, q)),
            (f"analytic ∂{out}/∂{x}", fmt(row.analytic, q)),
            ("table's abs error", f"{fmt(row.abs_error, 2)} (D(h), D(h/2) extrapolated)"),
        ]
        table = columns([(Text(name), Text(value)) for name, value in pairs])
        head = Text.assemble((x, NAME), f" = {fmt(row.data)}, h = {fmt(h)}")
        lines += [head, *_indented(table)]
    return lines


# -- frames: the backward pass as a sequence of diagrams ---------------------------


def frame_title(step: Step, total: int, out: str) -> str:
    """One line saying what happens in this step, with the numbers."""
    head = f"Step {step.index + 1}/{total}: "
    credit = f"{d(out, step.name)} = {fmt(step.credit)}"
    if step.is_leaf:
        return head + f"{step.name} is a leaf, {credit} is its gradient"
    # No `;` in titles: Mermaid would show it as an entity code in a title.
    what = f"{step.name} = {step.definition} with {credit}"
    if step.stops_credit:
        return head + what + f" passes nothing on ({step.node.op.name})"
    passed = " and ".join(f"{fmt(c.amount)} to {c.parent_name}" for c in step.contributions)
    return head + what + f" passes {passed}"


# -- a network's backward pass, by neuron or by layer -------------------------------------

MAX_SHOWN = 8  # entries of a vector shown before "…"


def _vector(values: tuple[Number, ...]) -> str:
    """One number plain, several as a short list: `[0.1, -2, …]` (with how many more)."""
    if len(values) == 1:
        return fmt(values[0])
    shown = ", ".join(fmt(v) for v in values[:MAX_SHOWN])
    more = f", … {len(values) - MAX_SHOWN} more" if len(values) > MAX_SHOWN else ""
    return f"[{shown}{more}]"


def _sum_line(label: str, sources: tuple[tuple[str, Number], ...], total: str) -> Text:
    line = Text.assemble("  ", (label, NAME), " = ")
    if len(sources) > MAX_SHOWN:
        line.append(f"sum of {len(sources)} credits = ")
    elif len(sources) > 1:
        line.append(
            " + ".join(fmt(a) if i == 0 else _factor(a) for i, (_, a) in enumerate(sources)) + " = "
        )
    line.append(total, style=CREDIT)
    if sources:
        senders = ", ".join(name for name, _ in sources[:MAX_SHOWN])
        more = ", …" if len(sources) > MAX_SHOWN else ""
        line.append(f"  (from {senders}{more})", style=DIM)
    return line


def network_view(steps: list[UnitStep], title: str) -> RenderableType:
    """A network's backward pass for one example, a neuron or a layer per step."""
    blocks: list[RenderableType] = [_heading("Backward pass", title)]
    for step in steps:
        units = f"{len(step.credit)} {step.activation} unit{'s' if len(step.credit) != 1 else ''}"
        kind = {
            "loss": "the output: dL/dL = 1",
            "inputs": "leaves: the credit stops here",
            "layer": units,
        }.get(step.kind, step.activation)
        header = _step_header(step.index, len(steps), step.name)
        blocks += [Text(""), header.append(f"  ({kind})", style=DIM)]
        if step.kind == "loss":
            (p,) = step.passed
            line = Text.assemble("  → ", (p.to, NAME), "   ∂loss/∂out = ", (step.formula, FORMULA))
            blocks.append(line.append_tokens([(" = ", None), (fmt(p.amount), CREDIT)]))
            continue
        if step.kind == "inputs":
            for k, (credit, sources) in enumerate(zip(step.credit, step.sources, strict=True)):
                blocks.append(_sum_line(f"dL/dx{k}", sources, fmt(credit)))
            continue
        if step.kind == "neuron":
            blocks.append(_sum_line("dL/da", step.sources[0], fmt(step.credit[0])))
        else:
            blocks.append(_sum_line("dL/da", (), _vector(step.credit)))
        slope = Text.assemble("  dL/dz = dL/da · ", (step.formula, FORMULA))
        slope.append(f" = {_vector(step.credit)} · {_vector(step.local)} = ")
        slope.append_tokens([(_vector(step.credit_z), CREDIT), (f"  (z = {_vector(step.z)})", DIM)])
        blocks.append(slope)
        if step.kind == "neuron":
            bias, grads = fmt(step.bias_grads[0]), ", ".join(fmt(g) for g in step.weight_grads[0])
            blocks.append(Text(f"  dL/db = dL/dz = {bias};  dL/dw = dL/dz · input = [{grads}]"))
            rows = []
            for p in step.passed:
                target = Text.assemble("→ ", (p.to, NAME))
                passed = Text(f"dL/d{p.to} += dL/dz · w = {fmt(step.credit_z[0])} · ")
                passed.append(f"{_factor(p.weight)} = ")
                passed.append(fmt(p.amount), style=CREDIT)
                if p.earlier:
                    passed.append(_so_far(p.total - p.amount, p.amount, p.total), style=DIM)
                rows.append((target, passed))
            blocks.extend(_indented(columns(rows)))
        else:
            flat = [g for row in step.weight_grads for g in row]
            rms = math.sqrt(sum(float(np.mean(np.square(g))) for g in flat) / len(flat))
            biggest = max(float(np.max(np.abs(g))) for g in flat)
            weights = f"rms {fmt(rms)}, max |.| {fmt(biggest)} over {len(flat)} weights"
            blocks.append(Text(f"  dL/db = dL/dz = {_vector(step.bias_grads)};  dL/dW: {weights}"))
            line = Text("  → previous layer: dL/da = Wᵀ · dL/dz = ")
            line.append(_vector(tuple(p.total for p in step.passed)), style=CREDIT)
            line.append(f"  ({', '.join(p.to for p in step.passed[:MAX_SHOWN])}", style=DIM)
            line.append(", …)" if len(step.passed) > MAX_SHOWN else ")", style=DIM)
            blocks.append(line)
    return Group(*blocks)


def network_frames(diagram: Diagram, steps: list[UnitStep], level: str) -> Frames:
    """One frame per network step on the neuron or layer diagram: earlier steps done, the
    current one and the edges its credit goes back along emphasised (`Frames`)."""
    into: dict[str, list[tuple[str, str]]] = {}
    out_of: dict[str, list[tuple[str, str]]] = {}
    for e in diagram.edges:
        into.setdefault(e.target, []).append((e.source, e.target))
        out_of.setdefault(e.source, []).append((e.source, e.target))
    changes = []
    total = len(steps)
    for step in steps:
        along = out_of if step.kind == "inputs" else into
        emphasis = [pair for unit in dict.fromkeys(step.ids) for pair in along.get(unit, ())]
        title = f"Step {step.index + 1}/{total}: {_network_title(step)}"
        changes.append(Change(current=tuple(step.ids), title=title, emphasis=tuple(emphasis)))
    return Frames(diagram.with_states({}), changes)


def _network_title(step: UnitStep) -> str:
    if step.kind == "loss":
        (p,) = step.passed
        return f"loss passes dL/dout = {fmt(p.amount)} to {p.to}"
    if step.kind == "inputs":
        return f"inputs receive dL/dx = {_vector(step.credit)}"
    return f"{step.name}: dL/da = {_vector(step.credit)}, dL/dz = {_vector(step.credit_z)}"
