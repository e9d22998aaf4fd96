"""JSON output: always valid JSON, exact numbers, NaN/inf as documented strings."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import gradviz
from gradviz import Value
from gradviz.drawn import diagram_from_value, to_json
from gradviz.render.diagram import Diagram, Node


def strict_loads(text: str):
    """json.loads that refuses the NaN/Infinity extensions Python would accept."""

    def refuse(name):
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def hand() -> Value:
    return gradviz.expr.parse_program("e = a*b; d = e + c; L = d*f", dict(a=2, b=-3, c=10, f=-2))


def test_hand_example_nodes_and_edges():
    program = hand()
    program.output.backward()
    doc = strict_loads(to_json(program.output))
    assert doc["format"] == "gradviz.graph" and doc["version"] == 1 and doc["has_grad"]
    values = {n["label"]: (n["data"], n["grad"]) for n in doc["nodes"] if n["kind"] == "value"}
    assert values == {
        "a": (2.0, 6.0),
        "b": (-3.0, -4.0),
        "e": (-6.0, -2.0),
        "c": (10.0, -2.0),
        "d": (4.0, -2.0),
        "f": (-2.0, 4.0),
        "L": (-8.0, 1.0),
    }
    ops = [(n["id"], n["op"], n["label"]) for n in doc["nodes"] if n["kind"] == "op"]
    assert ops == [("n2_op", "mul", "*"), ("n4_op", "add", "+"), ("n6_op", "mul", "*")]
    assert doc["edges"][:2] == [
        {"source": "n0", "target": "n2_op", "index": 0},
        {"source": "n1", "target": "n2_op", "index": 1},
    ]
    assert [n["role"] for n in doc["nodes"] if n["label"] == "L"] == ["output"]


def test_numbers_keep_every_digit():
    x = Value(0.1, label="x")
    y = x * (1 / 3)
    y.backward()
    doc = strict_loads(to_json(y))
    assert doc["nodes"][-1]["data"] == 0.1 * (1 / 3)
    assert doc["nodes"][0]["grad"] == 1 / 3


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nan_and_inf_are_strings_and_the_json_is_strict():
    x = Value(0.0, label="x")
    y = x.log() * 0.0  # -inf * 0 = nan
    y.backward()
    text = to_json(y)
    doc = strict_loads(text)
    by_id = {n["id"]: n for n in doc["nodes"]}
    assert by_id["n1"]["data"] == "-inf"
    assert by_id["n3"]["data"] == "nan"
    assert by_id["n0"]["grad"] == "nan"  # inf * 0
    assert "NaN" not in text and "Infinity" not in text


def test_batches_become_lists():
    x = Value(np.array([1.0, -2.0, np.inf]), label="x")
    y = x * x
    y.backward()
    doc = strict_loads(to_json(y))
    assert doc["nodes"][0]["data"] == [1.0, -2.0, "inf"]
    assert doc["nodes"][0]["grad"] == [2.0, -4.0, "inf"]


def test_no_grad_and_hostile_text_round_trip():
    name = 'a"\\\n\x00{}<>&😀'
    x = Value(1.0, label=name)
    doc = strict_loads(to_json(x * 2.0, grad=False))
    assert doc["has_grad"] is False
    assert doc["nodes"][0]["label"] == name
    assert all(n["grad"] is None for n in doc["nodes"])


def test_lone_surrogates_still_give_utf8_encodable_json():
    x = Value(1.0, label="bad\udc80")
    text = to_json(x * 2.0)
    text.encode("utf-8")
    assert strict_loads(text)["nodes"][0]["label"] == "bad\udc80"


def test_states_clusters_and_library_api():
    diagram = Diagram(
        nodes=(Node("g", "group", "L1", cluster="layer 1", state="current", extra_lines=("x",)),),
        edges=(),
        has_grad=False,
        title="frame 1",
    )
    doc = strict_loads(to_json(diagram))
    assert doc["title"] == "frame 1"
    assert doc["nodes"][0] | {"detail": ""} == {
        "id": "g",
        "kind": "group",
        "role": "intermediate",
        "label": "L1",
        "op": None,
        "data": None,
        "grad": None,
        "cluster": "layer 1",
        "state": "current",
        "extra_lines": ["x"],
        "detail": "",
    }
    x = Value(2.0, label="x")
    assert gradviz.to_json(x) == to_json(diagram_from_value(x))
    assert not math.isnan(strict_loads(gradviz.to_json(x))["nodes"][0]["data"])


def test_unnamed_output_is_L_and_unnamed_nodes_have_a_null_label():
    x = Value(2.0, label="x")
    out = (x * 3.0).tanh()  # an unnamed intermediate result, a constant, unnamed output
    out.backward()
    nodes = strict_loads(to_json(diagram_from_value(out)))["nodes"]
    values = [
        (n["role"], n["label"], n["detail"].split(":")[0]) for n in nodes if n["kind"] == "value"
    ]
    assert values == [
        ("input", "x", "x"),
        ("constant", "3", "3"),  # named by its number, as the trace names it
        ("intermediate", None, "n2"),  # the trace's name for it, in the tooltip
        ("output", "L", "L"),
    ]
