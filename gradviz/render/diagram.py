"""The drawing model every renderer reads: nodes, edges, and what to show on them.

A `Diagram` is format-neutral: a network collapsed into neuron or layer `group` nodes, or
a step of the backward pass with nodes `done`/`current`/`dim`, gets every output format.
Node ids come from graph order (`n0`, `n1`, … and `n3_op` for the op that made `n3`),
never from `id()`, so the same graph always gives byte-identical text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from gradviz.errors import Worded
from gradviz.numbers import DEFAULT_PRECISION, fmt, is_array
from gradviz.render import colours

if TYPE_CHECKING:  # the Values a diagram was drawn from: named, never computed here
    from gradviz.engine import Number, Value
    from gradviz.render.colours import Band

NodeKind = Literal["value", "op", "group"]
Role = Literal["input", "constant", "intermediate", "output", "op", "group"]
State = Literal["done", "current", "dim"] | None

STATES: tuple[str, ...] = ("done", "current", "dim")
# The label of an edge no credit travels back along (into detach): drawn dashed.
STOPS = "no grad"
# The line that marks the frontier of a recorded PyTorch graph (`gradviz.torch.draw`): the
# node nearest the output whose gradient is below a tenth of the output's.
FRONTIER = "▶ frontier: grad below ⅒ of the output's"


@dataclass(frozen=True, slots=True)
class Node:
    """One box of a diagram.

    `label` is what names the node (a variable name, an op symbol such as `*` or
    `tanh`, or a group's title; the output is named by `gradviz.text.output_name`
    when it has no label of its own, `L` as in the trace; a constant's number, `-1`,
    as the trace names it; empty for unnamed intermediate results).
    `data`/`grad` are None when there is nothing to show (op nodes, `--no-grad`, and
    the grad of a constant: nobody nudges it).
    `detail` is the long text for tooltips: full-precision numbers, local derivatives.
    `cluster` names a box drawn around nodes that share it; `state` is for step-by-step
    frames; `extra_lines` are short lines shown under the numbers (group statistics).
    """

    id: str
    kind: NodeKind
    label: str
    data: Number | None = None
    grad: Number | None = None
    detail: str = ""
    cluster: str | None = None
    state: State = None
    extra_lines: tuple[str, ...] = ()
    op: str | None = None  # the op's name: for op nodes, and for value nodes an op made
    role: Role = "intermediate"
    ordered: bool = False  # an op whose inputs' order matters (a − b): drawn with a and b
    # the |grad| a node is coloured by when `grad` holds no one number: a tensor's (or a
    # module's) rms gradient, its numbers written in `extra_lines`
    grad_rms: float | None = None

    @property
    def magnitude(self) -> float | None:
        """|grad| as one number for colouring (a batch's mean, or `grad_rms`), or None."""
        if self.grad is None:
            return self.grad_rms
        if is_array(self.grad):
            return float(abs(self.grad).mean()) if self.grad.size else 0.0
        return abs(float(self.grad))

    @property
    def is_finite(self) -> bool:
        """False when data or grad holds a NaN or an infinity anywhere."""
        return not (is_bad(self.data) or is_bad(self.grad) or is_bad(self.grad_rms))


@dataclass(frozen=True, slots=True)
class Edge:
    """An arrow from `source` to `target` (node ids). `index` is the input position on
    the target op (0 for `a`, 1 for `b`), so `x*x` has two distinct edges."""

    source: str
    target: str
    label: str | None = None
    emphasis: bool = False
    index: int = 0
    weight: float | None = None  # a network's weight on this edge: the line's width is |w|
    grad: Number | None = None  # the gradient through it (∂L/∂w): the line's colour
    detail: str = ""  # tooltip text

    @property
    def band(self) -> Band | None:
        """The colour band of the gradient through the edge; None without one."""
        if self.grad is None:
            return None
        return colours.band_for(abs(float(self.grad)), not is_bad(self.grad))


def captioned(name: str | None, *clauses: str) -> dict[str, Any]:
    """A title of several lines (a name as typed, then gradviz's own clauses), as a
    Diagram's fields: `title` in one line (`name — clause; clause`, for the terminal,
    JSON and Mermaid) and `caption`, its lines, which a picture shows one under another.
    A name is never broken at a `; ` it holds: only the caption's own lines break."""
    said = "; ".join(clauses)
    title = (f"{name} — {said}" if said else name) if name else said or None
    return {"title": title, "caption": tuple(line for line in (name, *clauses) if line)}


def title_lines(diagram: Diagram) -> list[str]:
    """The title's lines as a picture shows them: its caption, while the title is still
    the one the caption was made with (a frame given a title of its own by `replace`
    shows that), else the title whole."""
    lines = diagram.caption
    if lines and diagram.title in (
        captioned(lines[0], *lines[1:])["title"],
        captioned(None, *lines)["title"],
    ):
        return list(lines)
    return [diagram.title] if diagram.title else []


@dataclass(frozen=True, slots=True)
class Diagram:
    """Nodes in graph order (inputs first, output last) and the edges between them.

    `value_ids` maps each Value drawn to its node id (`id_of`, `op_id_of`: the trace
    addresses nodes by Value). `level` is the level a saved network is drawn at (None
    for an expression), so a size warning suggests only the coarser views."""

    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    has_grad: bool = True
    title: str | None = None
    caption: tuple[str, ...] = ()  # the title as lines, for pictures (`captioned`)
    level: str | None = None
    value_ids: Mapping[Value, str] = field(default_factory=dict, compare=False, repr=False)

    def node(self, node_id: str) -> Node:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    def id_of(self, value: Value) -> str:
        """The id of the value node drawn for `value`."""
        return self.value_ids[value]

    def op_id_of(self, value: Value) -> str | None:
        """The id of the op node that produced `value` (None for a leaf)."""
        return None if value.op is None else op_id(self.value_ids[value])

    @property
    def clusters(self) -> list[str]:
        """Cluster names in order of first appearance."""
        return list(dict.fromkeys(n.cluster for n in self.nodes if n.cluster is not None))

    def with_states(
        self,
        states: Mapping[str, State],
        emphasis: Iterable[tuple[str, str]] = (),
        *,
        default: State = None,
    ) -> Diagram:
        """A copy with node states set (`default` for nodes not named) and the edges
        between the given (source, target) pairs emphasised: one frame of a trace."""
        for node_id, state in states.items():
            if state not in (None, *STATES):
                raise ValueError(f"unknown state {state!r} for node {node_id}")
        emphasised = set(emphasis)
        return replace(
            self,
            nodes=tuple(replace(n, state=states.get(n.id, default)) for n in self.nodes),
            edges=tuple(
                replace(e, emphasis=(e.source, e.target) in emphasised) for e in self.edges
            ),
        )


def value_id(index: int) -> str:
    return f"n{index}"


def op_id(value_node_id: str) -> str:
    return f"{value_node_id}_op"


# A formula that is a number, maybe in parentheses, maybe with a remark: `1`, `(-1)`,
# `0 (stop-gradient)`.
_NUMBER_FORMULA = re.compile(r"\(?([^()\s]+)\)?(?: \(.*\))?")


def _states_a_value(text: str, value: Number) -> bool:
    """A formula that is just a number equal to `value` (`= value` would say it twice)."""
    match = _NUMBER_FORMULA.fullmatch(text)
    if match is None or is_array(value):
        return False
    try:
        return float(match.group(1)) == float(value)
    except ValueError:
        return False


def constant_text(node: Node, precision: int = DEFAULT_PRECISION) -> str | None:
    """What a constant named by its number shows (that number, at `precision`, once,
    not as `-1 | data -1`); None for any other node, a labelled constant included."""
    if node.role != "constant" or node.data is None or node.label != fmt(node.data):
        return None
    return number_text(node.data, precision)


def band_of(node: Node) -> Band | None:
    """The colour band of a node: None without a grad (op nodes, --no-grad)."""
    return colours.band_for(node.magnitude, node.is_finite)


def is_bad(x: Number | None) -> bool:
    """True when a number (or any sample of a batch) is NaN or infinite."""
    if is_array(x):
        import numpy as np  # lazy: start-up (loaded already: an array is here)

        return not bool(np.all(np.isfinite(x)))
    return x is not None and not math.isfinite(float(x))


def number_text(x: Number, precision: int = DEFAULT_PRECISION) -> str:
    """A number as a node shows it; NaN/inf (in any sample) followed by BAD_MARK."""
    text = fmt(x, precision)
    return f"{text} {colours.BAD_MARK}" if is_bad(x) else text


RANKDIRS = ("LR", "TB", "RL", "BT")
# The layer view is a chain: top to bottom it reads as a table, one row per layer.
LAYER_RANKDIR = "TB"


def check_rankdir(rankdir: str) -> None:
    if rankdir not in RANKDIRS:
        raise ValueError(f"rankdir must be one of {', '.join(RANKDIRS)}, not {rankdir!r}")


# Left to right, wider than this (px, estimated) shrinks text below about two thirds when
# fitted to a docs page of 800 px: such graphs are drawn top to bottom, where nodes stack
# their fields and stay narrow (the one-neuron samples: 1,600 px left to right, 550 px
# top to bottom).
WIDE_PX = 1200
_CHAR_PX, _BOX_PX, _OP_PX, _GAP_PX = 8.8, 30.0, 36.0, 34.0  # DejaVu Sans 11 pt, measured


# The last diagram's ranks: drawing one asks for them up to four times (its direction,
# the layout's cost twice, the widest rank), and a diagram never changes (frozen).
_last_ranks: tuple[Diagram, dict[str, int]] | None = None


def ranks(diagram: Diagram) -> dict[str, int]:
    """Each node's rank (longest path from a source), as Graphviz places them (read only:
    the same dict for the same diagram)."""
    global _last_ranks
    last = _last_ranks
    if last is not None and last[0] is diagram:
        return last[1]
    incoming = {n.id: 0 for n in diagram.nodes}
    outgoing: dict[str, list[str]] = {n.id: [] for n in diagram.nodes}
    for edge in diagram.edges:
        if edge.source in outgoing and edge.target in incoming:
            outgoing[edge.source].append(edge.target)
            incoming[edge.target] += 1
    rank = dict.fromkeys(incoming, 0)
    ready = [node_id for node_id, count in incoming.items() if count == 0]
    while ready:
        node_id = ready.pop()
        for target in outgoing[node_id]:
            rank[target] = max(rank[target], rank[node_id] + 1)
            incoming[target] -= 1
            if incoming[target] == 0:
                ready.append(target)
    _last_ranks = (diagram, rank)
    return rank


def _node_width(node: Node, stacked: bool = False) -> float:
    """A node's width in px, roughly: its fields side by side (name | data | grad, left
    to right) or `stacked` (top to bottom, where records stack their fields)."""
    if node.kind == "op":
        return max(_OP_PX, _BOX_PX + _CHAR_PX * 0.9 * len(node.label))  # 10 pt, not 11
    fields = [len(node.label)]  # each field as drawn: `data 0.5`, `grad -1.7e-08`
    fields += [5 + len(number_text(node.data))] if node.data is not None else []
    fields += [5 + len(number_text(node.grad))] if node.grad is not None else []
    longest = max((len(line) for line in node.extra_lines), default=0)
    text = max(fields) if stacked or node.kind == "group" else sum(fields)
    return _BOX_PX + _CHAR_PX * max(text, longest)


# Top to bottom, a record stacks its fields (narrow) unless every rank fits a docs page
# with the fields side by side: a chain is then half as tall.
SIDE_BY_SIDE_PX = 760


def widest_rank(diagram: Diagram, stacked: bool = False) -> float:
    """The widest rank top to bottom, in px, every record's fields side by side (or
    `stacked`)."""
    rank = ranks(diagram)
    rows: dict[int, float] = {}
    for node in diagram.nodes:
        rows[rank[node.id]] = rows.get(rank[node.id], 0.0) + _node_width(node, stacked) + _GAP_PX
    return max(rows.values(), default=0.0)


def preferred_rankdir(diagram: Diagram) -> str:
    """The direction a drawing reads best in when the user names none: a chain of layers
    top to bottom, as a table; anything else left to right (as one reads a formula) unless
    that is wider than WIDE_PX and top to bottom is narrower."""
    if diagram.level in ("layer", "module"):  # (a PyTorch model's modules: a chain too)
        return LAYER_RANKDIR
    rank = ranks(diagram)
    columns: dict[int, float] = {}
    for node in diagram.nodes:
        columns[rank[node.id]] = max(columns.get(rank[node.id], 0.0), _node_width(node))
    wide = sum(columns.values()) + _GAP_PX * len(columns)
    return "TB" if wide > WIDE_PX and widest_rank(diagram, stacked=True) < wide else "LR"


# The levels of a recorded PyTorch graph (gradviz.torch.draw): its gradients are known when
# it is drawn, so its page steps through the backward pass; it is set in one font size and
# laid out by graphviz-pure first (`gradviz.output.pure_first`).
TORCH_LEVELS = ("module", "op")

# The views of a saved network that draw less than each level (`level`).
COARSER_LEVELS = {
    "scalar": ("neuron", "layer"),
    "neuron": ("layer",),
    "layer": (),
    "op": ("module",),  # a PyTorch graph (gradviz.torch.draw)
    "module": (),
}


def draw_less(diagram: Diagram) -> Worded:
    """How to draw less of this diagram, for size warnings and errors: a network (its
    layers are clusters, or `level` says so) has the collapsed views coarser than the
    one drawn, each named as an option (`level='layer'`; the CLI says `--level layer`);
    an expression has none."""
    if diagram.level is None and not diagram.clusters:
        return Worded("draw a part of the expression")
    coarser = COARSER_LEVELS.get(diagram.level or "scalar", ())
    if not coarser:
        return Worded("draw a smaller network")
    levels = tuple(f"level={level!r}" for level in coarser)
    views = " or ".join("{" + level + "}" for level in levels)
    return Worded(f"draw a collapsed view ({views})", levels)
