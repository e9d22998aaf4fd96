"""What the views call a node and how they write an op: names from labels, constants and
graph order (`n3`), ops as a learner writes them (`a·b`, `tanh(a)`). Apart from the trace,
so that `gradviz draw` loads none of its step classes."""

from __future__ import annotations

import re

from gradviz.engine import Constant, Op, Value, topological_order
from gradviz.numbers import fmt
from gradviz.text import operand, printable
from gradviz.text import output_name as name_output


def node_names(order: list[Value]) -> dict[Value, str]:
    """A unique name for every node: its label (`#2`, `#3` … after its first use, control
    characters escaped), a constant's number (`-1`), `output_name` for an unlabelled output,
    or `n<i>`, its position in topological order (the diagrams' id)."""
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
    """What the output is called in `dL/dx`, by `gradviz.text.output_name`'s rule."""
    labels = () if root.label else (v.label for v in order or topological_order(root))
    return name_output(root.label, labels)


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
