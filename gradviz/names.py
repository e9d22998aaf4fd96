"""What the views call a node and how they write an op: names from labels, constants and
graph order (`n3`), and an op written as a learner writes it (`a·b`, `tanh(a)`).

Shared by the trace, the gradient check and every renderer; kept apart from the trace so
that drawing an expression (`gradviz draw`) loads none of the trace's step classes.
"""

from __future__ import annotations

import re

from gradviz.engine import Constant, Op, Value, topological_order
from gradviz.numbers import fmt
from gradviz.text import output_name as name_output
from gradviz.text import printable


def node_names(order: list[Value]) -> dict[Value, str]:
    """A short name for every node: its label, a constant's number (`-1`), or `n<i>`.

    The output (last in `order`) is called by `output_name` when it has no label.
    `n<i>` is the node's position in topological order, the same id the diagrams use,
    so an unnamed intermediate result can be found in a frame. A label used by several
    nodes gets `#2`, `#3` … after its first use, so names stay unique. Control
    characters in labels are shown as escapes (`\\n`), since names are for display.
    """
    names: dict[Value, str] = {}
    taken: dict[str, int] = {}
    root = order[-1]
    for i, v in enumerate(order):
        if v.label:
            name = printable(v.label)
        elif v is root:
            name = output_name(root, order)
        elif type(v) is Constant:
            name = fmt(v.data)
        else:
            name = f"n{i}"
        if name in taken and (v.label or v.op is not None):
            taken[name] += 1
            name = f"{name}#{taken[name]}"
        else:
            taken.setdefault(name, 1)
        names[v] = name
    return names


def output_name(root: Value, order: list[Value] | None = None) -> str:
    """What the output is called in `dL/dx`: its label, else `L` (the usual name), by
    the rule `draw` uses too (`gradviz.text.output_name`)."""
    if root.label:
        return printable(root.label)
    order = order if order is not None else topological_order(root)
    return name_output(None, (v.label for v in order))


def operand(name: str) -> str:
    """A name as an operand: negative constants get parentheses (`x·(-1)`)."""
    return f"({name})" if name.startswith("-") else name


def op_form(op: Op, a: str = "a", b: str = "b") -> str:
    """The op applied to operands, as a learner writes it: `a·b`, `tanh(a)`, `a^2`."""
    if op.form is not None:
        return op.form.format(a=operand(a), b=operand(b))
    if op.arity == 2:
        return f"{op.name}({a}, {b})"
    return f"{op.name}({a})"


# `a`, `b` standing alone (`b²` too: ² counts as a word character for `\\b`)
_OPERAND = re.compile(r"(?<![A-Za-z0-9_])[ab](?![A-Za-z0-9_])")


def substitute(formula: str, a: str, b: str = "b") -> str:
    """A formula in `a`, `b` rewritten with the graph's names (`b` -> `f`)."""
    names = {"a": operand(a), "b": operand(b)}
    return _OPERAND.sub(lambda m: names[m.group(0)], formula)


def definition(node: Value, names: dict[Value, str]) -> str | None:
    """How a node is computed from its inputs, with names: `d·f`. None for a leaf."""
    if node.op is None:
        return None
    parents = [names[p] for p in node.parents]
    return op_form(node.op, *parents)
