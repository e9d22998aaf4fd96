"""The diagram as JSON, for other tools: nodes (op, data, grad) and edges.

Always valid JSON (RFC 8259), which has no NaN or infinity: those are written as the
strings "nan", "inf" and "-inf", so a reader sees them instead of a parse error or a
silent null. Finite numbers are JSON numbers with every digit of the float64 (they
round-trip exactly). A batch (numpy array) becomes a list. Text is UTF-8 as is.

`label` is the name the pictures show: a variable's name, an op's symbol, and for an
unlabelled output the name `trace` and `check` give it (`L`, see
`gradviz.text.output_name`); null for a node shown without a name (an unnamed
intermediate result, a constant).

    {"format": "gradviz.graph", "version": 1, "has_grad": true, "title": null,
     "nodes": [{"id": "n0", "kind": "value", "role": "input", "label": "a",
                "op": null, "data": 2.0, "grad": 6.0, ...}, ...],
     "edges": [{"source": "n0", "target": "n2_op", "index": 0}, ...]}
"""

from __future__ import annotations

import json
from typing import Any

from gradviz.numbers import is_array
from gradviz.numbers import json_number as number
from gradviz.render.diagram import Diagram, Node

FORMAT = "gradviz.graph"
VERSION = 1


def _numbers(x: object) -> Any:
    if x is None:
        return None
    if is_array(x):
        return [number(v) for v in x.ravel().tolist()]
    return number(x)  # type: ignore[arg-type]


def _node(node: Node) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": node.id,
        "kind": node.kind,
        "role": node.role,
        "label": node.label or None,
        "op": node.op,
        "data": _numbers(node.data),
        "grad": _numbers(node.grad),
    }
    if node.cluster is not None:
        entry["cluster"] = node.cluster
    if node.state is not None:
        entry["state"] = node.state
    if node.grad_rms is not None:
        entry["grad_rms"] = number(node.grad_rms)
    if node.extra_lines:
        entry["extra_lines"] = list(node.extra_lines)
    entry["detail"] = node.detail
    return entry


def to_dict(diagram: Diagram) -> dict[str, Any]:
    """The JSON document as Python data (the same numbers encoding)."""
    edges = []
    for edge in diagram.edges:
        entry: dict[str, Any] = {"source": edge.source, "target": edge.target, "index": edge.index}
        if edge.label:
            entry["label"] = edge.label
        if edge.emphasis:
            entry["emphasis"] = True
        edges.append(entry)
    return {
        "format": FORMAT,
        "version": VERSION,
        "has_grad": diagram.has_grad,
        "title": diagram.title,
        "nodes": [_node(n) for n in diagram.nodes],
        "edges": edges,
    }


def to_json(diagram: Diagram) -> str:
    """Indented, key order fixed, ends with a newline; `allow_nan=False` guarantees that
    no bare NaN slips through. Non-ASCII text stays readable unless it holds something
    UTF-8 cannot carry (a lone surrogate), which is then written as a \\u escape."""
    data = to_dict(diagram)
    text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(data, indent=2, ensure_ascii=True, allow_nan=False)
    return text + "\n"
