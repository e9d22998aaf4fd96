"""One engine of truth: the page's JavaScript engine against the Python engine, under Node.

Every op of the op table and a few thousand generated graphs go through both engines
(tests/html/parity.js runs the very script the page embeds); floats travel as their IEEE
bits. Arithmetic (+, *, relu, abs, sqrt, detach, numpy's exact power shortcuts) must agree
to the last bit. exp, log, tanh, sin, cos and a general pow come from each platform's maths
library (numpy's SIMD routines, V8's fdlibm ports), which may round differently: each op is
run on Python's own inputs and must agree within ULP_BOUND; whole graphs whose ops all
agreed bit for bit must then agree bit for bit too (same additions, same order). The number
formats (`fmt`, `repr`) and the shell quoting of the copy-command button are compared too.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import shlex
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

import gradviz.ops as op_table
from gradviz.drawn import diagram_from_value, page_graph
from gradviz.engine import Constant, Value, apply, topological_order
from gradviz.numbers import fmt, fmt_full
from gradviz.ops import ADD, DIV, MUL, NEG, POW, SUB, UNARY_OPS, Op, power_op
from gradviz.render.html import JS_OPS, engine_script, graph_data, op_key, table_ops
from gradviz.tracing import trace

HARNESS = Path(__file__).parent / "html" / "parity.js"
NODE = shutil.which("node")


@pytest.fixture(scope="module", autouse=True)
def _needs_node() -> None:
    """Skip locally without Node; under CI (where Node is installed) fail."""
    if NODE is None:
        if os.environ.get("CI"):
            pytest.fail("the engine parity tests must run in CI: node not installed")
        pytest.skip("node not installed")


# Measured on this machine (numpy 2.4 with AVX-512, Node 20): see test_parity_bound_holds.
ULP_BOUND = 2
EXACT = {"add", "sub", "mul", "div", "neg", "relu", "abs", "sqrt", "detach"}
# What comes from a platform's maths library; an op whose JavaScript calls none of these
# (leaky_relu: a comparison and a product) is IEEE arithmetic and must agree exactly.
PLATFORM_MATHS = re.compile(r"\b(exp|log|log1p|expm1|tanh|sin|cos|sigmoid|pow)\(|Math\.")


def exact_ops() -> set[str]:
    """The ops of the page that must agree to the last bit, found from their JavaScript."""
    return {
        key
        for key, (forward, locals_) in JS_OPS.items()
        if not any(PLATFORM_MATHS.search(text) for text in (forward, *locals_))
    }


SHORTCUTS = (-1.0, 0.0, 0.5, 1.0, 2.0)
EXPONENTS = (2.0, 3.0, -1.0, 0.5, 1.0, 0.0, -2.0, 1.5, 4.0)
GRAPHS = 3000


def bits(x: float) -> str:
    return struct.pack(">d", float(x)).hex()


def ulps(a: float, b: float) -> float:
    """How many representable doubles apart a and b are (NaN equals NaN)."""
    if math.isnan(a) or math.isnan(b):
        return 0 if math.isnan(a) and math.isnan(b) else math.inf

    def ordered(x: float) -> int:
        i = struct.unpack("<q", struct.pack("<d", x))[0]
        return i if i >= 0 else -(i & 0x7FFFFFFFFFFFFFFF)

    return abs(ordered(a) - ordered(b))


def from_bits(h: str) -> float:
    return struct.unpack(">d", bytes.fromhex(h))[0]


def random_graph(rng: random.Random, size: int) -> Value:
    """A seeded graph over every op: reuse (a value used twice), constants, detach."""
    specials = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -2.0, 3.0]
    leaves = [
        Value(rng.choice(specials) if rng.random() < 0.2 else rng.uniform(-3, 3), label=f"x{i}")
        for i in range(rng.randint(1, 4))
    ]
    pool = list(leaves)
    unary = [*UNARY_OPS.values(), NEG]
    for _ in range(size):
        a = rng.choice(pool[-4:] if rng.random() < 0.6 else pool)
        kind = rng.random()
        if kind < 0.4:
            r = rng.random()
            # A constant (no step, no slope shown), or an unnamed input, now and then.
            b = (
                rng.choice(pool)
                if r < 0.7
                else (Constant if r < 0.9 else Value)(rng.uniform(-2, 2))
            )
            op = rng.choice([ADD, MUL, SUB, DIV, ADD, MUL, POW])
            node = apply(op, a, b)
        elif kind < 0.55:
            node = apply(power_op(rng.choice(EXPONENTS)), a)
        else:
            node = apply(rng.choice(unary), a)
        pool.append(node)
    return pool[-1]


def run_node(cases: dict, tmp_path: Path) -> dict:
    engine = tmp_path / "engine.js"
    engine.write_text(engine_script(), encoding="utf-8")
    case_file = tmp_path / "cases.json"
    case_file.write_text(json.dumps(cases), encoding="utf-8")
    done = subprocess.run(
        [NODE, str(HARNESS), str(engine), str(case_file)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def graph_case(root: Value, *, with_trace: bool = False) -> tuple[dict, list[Value]]:
    root.backward()
    diagram = diagram_from_value(root)
    data = graph_data(page_graph(diagram), steps=trace(root) if with_trace else None)
    order = topological_order(root)
    for node, v in zip(data["nodes"], order, strict=True):
        if v.op is None:
            node["bits"] = bits(v.data)
    data["pyData"] = [bits(v.data) for v in order]
    return data, order


@pytest.fixture(scope="module")
def parity(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Both engines on GRAPHS generated graphs (seeded), and the per-op comparison."""
    rng = random.Random(14)
    graphs, orders = [], []
    for i in range(GRAPHS):
        root = random_graph(rng, rng.randint(1, 12))
        case, order = graph_case(root, with_trace=i < 150)
        graphs.append(case)
        orders.append(order)
    numbers = [1.0625, 1234.5, 0.125, 2.5, 9.9995, 1e16, 1e-5, 123456.0, -0.0, 0.1, 1 / 3]
    numbers += [math.nan, math.inf, -math.inf, 5e-324, 1.7976931348623157e308, 0.00012345]
    numbers += [rng.uniform(-1, 1) * 10.0 ** rng.randint(-12, 20) for _ in range(3000)]
    numbers += [rng.randint(-99999, 99999) / 2 ** rng.randint(0, 12) for _ in range(3000)]
    fmt_cases = [[bits(x), p] for x in numbers for p in (1, 2, 4, 6, 17)]
    quotes = [
        "a",
        "a=2",
        "",
        "it's",
        "e = a*b; L = e",
        "x=-1.5",
        "</script>",
        "a b",
        "$(rm)",
        "é=1",
    ]
    out = run_node(
        {"graphs": graphs, "fmt": fmt_cases, "quote": quotes}, tmp_path_factory.mktemp("p")
    )
    return {"graphs": graphs, "orders": orders, "out": out, "fmt": fmt_cases, "quote": quotes}


def _forced_ulps(parity: dict) -> dict[str, int]:
    """The largest ulp difference per op (forward and local derivatives) on Python's inputs."""
    worst: dict[str, float] = {}
    for case, order, got in zip(
        parity["graphs"], parity["orders"], parity["out"]["graphs"], strict=True
    ):
        for node, v, forced in zip(case["nodes"], order, got["forced"], strict=True):
            if v.op is None:
                continue
            expected = [v.data, *v.op.local(v.data, *[p.data for p in v.parents])]
            for position, (want, h) in enumerate(zip(expected, forced, strict=True)):
                key = node["k"]
                if key == "powN":  # a ** n, and its slope n · a ** (n - 1)
                    n = float(node["n"])
                    exact = n in SHORTCUTS if position == 0 else n == 0 or n - 1 in SHORTCUTS
                    key = "powN shortcut" if exact else "powN"
                worst[key] = max(worst.get(key, 0), ulps(float(want), from_bits(h)))
    return worst


def test_every_op_of_the_table_has_a_javascript_entry() -> None:
    """Every Op the op table defines (a new one too: the page could not compute it)."""
    ops = table_ops()
    assert set(ops) == set(JS_OPS)
    defined = [v for v in vars(op_table).values() if isinstance(v, Op)]
    for op in (*defined, *UNARY_OPS.values(), power_op(2.0), power_op(-0.5)):
        assert op_key(op) in JS_OPS
        assert len(JS_OPS[op_key(op)][1]) == op.arity


def test_arithmetic_ops_agree_to_the_last_bit(parity: dict) -> None:
    worst = _forced_ulps(parity)
    assert exact_ops() >= EXACT | {"leaky_relu"}
    for key in (*exact_ops(), "powN shortcut"):
        assert worst[key] == 0, (key, worst[key])


def test_parity_bound_holds(parity: dict) -> None:
    """exp, log, tanh, sin, cos, sigmoid and general pow: within ULP_BOUND (printed)."""
    worst = _forced_ulps(parity)
    print("max ulp per op:", json.dumps(worst, sort_keys=True))
    assert set(worst) >= set(JS_OPS) - {"powN"} | {"powN shortcut"}
    assert max(worst.values()) <= ULP_BOUND, worst


def test_whole_graphs_agree_bit_for_bit_where_every_op_did(parity: dict) -> None:
    checked = exact = 0
    for _case, order, got in zip(
        parity["graphs"], parity["orders"], parity["out"]["graphs"], strict=True
    ):
        ops_exact = all(
            forced is None
            or all(
                ulps(float(w), from_bits(h)) == 0
                for w, h in zip(
                    [v.data, *v.op.local(v.data, *[p.data for p in v.parents])], forced, strict=True
                )
            )
            for v, forced in zip(order, got["forced"], strict=True)
        )
        same = all(
            ulps(v.data, from_bits(d)) == 0 and ulps(v.grad, from_bits(g)) == 0
            for v, d, g in zip(order, got["data"], got["grad"], strict=True)
        )
        if ops_exact:
            checked += 1
            assert same, [v for v in order]
        exact += same
    print(f"{exact}/{len(parity['graphs'])} graphs bit-identical; {checked} with every op exact")
    assert checked > len(parity["graphs"]) // 2


def test_trace_text_is_gradviz_traces(parity: dict) -> None:
    for case, got in zip(parity["graphs"], parity["out"]["graphs"], strict=True):
        if case["trace"] is not None:
            assert got["steps"] == case["trace"]


def test_number_formats_are_pythons(parity: dict) -> None:
    for (h, p), got_fmt, got_repr in zip(
        parity["fmt"], parity["out"]["fmt"], parity["out"]["repr"], strict=True
    ):
        x = from_bits(h)
        assert got_fmt == fmt(x, p), (x, p)
        assert got_repr == fmt_full(x), x


def test_copy_command_quotes_as_shlex(parity: dict) -> None:
    assert parity["out"]["quote"] == [shlex.quote(s) for s in parity["quote"]]
