"""Slopes far out, where a local derivative overflows although the true gradient is an
ordinary number: gelu beyond |x| = 1e50 (a³ overflows, and 0·inf made its slope NaN), and
x·log(x) at x = 1e-310 (log's 1/x is inf, the credit g/x is not). Against PyTorch in
float64 where PyTorch is finite, and against the limits (0 and 1) where it is not."""

from __future__ import annotations

import math
import re

import pytest
from click.testing import CliRunner

from gradviz.checking import gradcheck
from gradviz.cli import cli
from gradviz.engine import Value, backpropagate, topological_order
from gradviz.ops import GELU, LOG

# gelu's slope: 0 far left, 1 far right (PyTorch gives NaN above about 3.7e154)
GELU_FAR = [(-1e300, 0.0), (-1e103, 0.0), (-9.5e102, 0.0), (-1e60, 0.0), (1e60, 1.0)]
GELU_FAR += [(4e154, 1.0), (1e300, 1.0), (-math.inf, 0.0), (math.inf, 1.0)]


def _torch_gelu_slope(x: float) -> float:
    from torch_support import require_torch

    torch = require_torch()
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    torch.nn.functional.gelu(t, approximate="tanh").backward()
    return float(t.grad)


def _grads(build, x: float) -> tuple[float, float]:
    """d build(x)/dx by the engine's generated pass and by its plain chain rule (the trace's)."""
    leaf = Value(x)
    out = build(leaf)
    out.backward()
    fast = leaf.grad
    order = topological_order(out)
    backpropagate(order, on_edge=lambda *edge: None)
    return fast, leaf.grad


@pytest.mark.parametrize(("x", "slope"), GELU_FAR)
def test_gelu_far_out_has_its_limit_slope(x, slope) -> None:
    assert _grads(lambda v: v.gelu(), x) == (slope, slope)
    (local,) = GELU.local(GELU.forward(x), x)
    assert local == slope


@pytest.mark.parametrize(
    "x",
    [-1e103, -1e60, -1e50, -9.99e49, -30.0, -3.0, -0.5, 0.0, 0.7, 3.0, 30.0, 9.99e49, 1e50, 1e60],
)
def test_gelu_matches_pytorch_where_pytorch_is_finite(x) -> None:
    expected = _torch_gelu_slope(x)
    fast, plain = _grads(lambda v: v.gelu(), x)
    assert math.isclose(fast, expected, rel_tol=1e-14, abs_tol=1e-300) and plain == fast


def test_x_log_x_at_a_subnormal_x_matches_pytorch() -> None:
    """d/dx x·log(x) = log(x) + x·(1/x): the second term is the credit x sends through
    log, g/x with g = x = 1e-310 (1, where g·(1/x) = 1e-310·inf was inf)."""
    expected = -712.8013788281542  # PyTorch 2.13, float64; log(1e-310) + 1 by hand
    assert math.isclose(math.log(1e-310) + 1.0, expected, rel_tol=1e-15)
    assert _grads(lambda v: v * v.log(), 1e-310) == (expected, expected)
    assert LOG.credit(1e-310, math.log(1e-310), 1e-310) == (1.0,)
    assert LOG.local(math.log(1e-310), 1e-310) == (math.inf,)  # the local slope itself


def test_the_compiled_trainer_writes_logs_credit_from_the_same_row() -> None:
    """The trainer's backward lines take log's credit from `Op.chain` (g/x), and give the
    engine's gradient bit for bit (a network whose loss goes through one more log)."""
    import gradviz.compile as C
    import gradviz.nn as nn
    from gradviz.engine import apply

    net = nn.Network((2, 2, 1), ("tanh", "sigmoid"))
    net.initialise("xavier", 1)
    original = nn.Network.build

    def build(self, inputs, target):
        built = original(self, inputs, target)
        built.loss = apply(LOG, built.loss + 1e-3) * (built.loss + 1.0)
        return built

    try:
        nn.Network.build = build  # type: ignore[method-assign]
        compiled = C._compile.__wrapped__(net.sizes, net.activations, "mse", None, False)
        total, grads = compiled.gradient(net.flat(), [(0.5, -1.0)], [1.0], [0])
        built = net.build([Value(0.5), Value(-1.0)], Value(1.0))
        built.loss.backward()
    finally:
        nn.Network.build = original  # type: ignore[method-assign]
    assert total == built.loss.data
    assert grads == [p.grad for p in net.parameters()]
    # the log credits its input by one division, g/x, not g·(1/x)
    assert re.search(r"= \(?div\(g\w+, v\w+\)\)?$", compiled.source, re.M), compiled.source
    assert "div(1.0, " not in compiled.source


def test_training_through_log_at_a_subnormal_credits_g_over_x_every_way(monkeypatch) -> None:
    """A loss u·log(u) with u = 1e-310 · (the network's loss): the credit u sends through
    log is g/u (finite), not g·(1/u) (inf). The compiled trainer, the engine and the plain
    reference (GRADVIZ_PLAIN=1, the engine's pass) give the same finite gradient."""
    import gradviz.compile as C
    import gradviz.nn as nn
    from gradviz.engine import apply

    net = nn.Network((2, 2, 1), ("tanh", "sigmoid"))
    net.initialise("xavier", 1)
    original = nn.Network.build

    def build(self, inputs, target):
        built = original(self, inputs, target)
        u = built.loss * 1e-310
        built.loss = u * apply(LOG, u)
        return built

    data = ([(0.5, -1.0)], [1.0], [0])
    try:
        nn.Network.build = build  # type: ignore[method-assign]
        compiled = C._compile.__wrapped__(net.sizes, net.activations, "mse", None, False)
        total, grads = compiled.gradient(net.flat(), *data)
        built = net.build([Value(0.5), Value(-1.0)], Value(1.0))
        built.loss.backward()
        monkeypatch.setenv(C.PLAIN, "1")
        plain = C.compile_network(net).gradient(net.flat(), *data)
    finally:
        nn.Network.build = original  # type: ignore[method-assign]
    assert all(math.isfinite(g) for g in grads) and any(grads)
    assert grads == [p.grad for p in net.parameters()]
    assert plain == (total, grads)


def test_check_compares_a_finite_gradient_through_an_infinite_local_slope() -> None:
    """Was "non-differentiable … ok": log's 1/x is inf at 1e-310, but the gradient is
    finite, and so is the finite difference with a step the floats can take."""
    x = Value(1e-310, label="x")
    rows = gradcheck(x * x.log(), eps=1e-312)
    assert [row.status for row in rows] == ["pass"]
    assert math.isclose(rows[0].numeric, -712.8013788281542, rel_tol=1e-9)
    done = CliRunner().invoke(cli, ["check", "gelu(x)", "x=-1e103"])
    assert done.exit_code == 0 and "non-differentiable" not in done.output
    assert "1 pass" in done.output


def test_an_infinite_slope_with_an_infinite_gradient_is_still_non_differentiable() -> None:
    x = Value(0.0, label="x")
    assert [row.status for row in gradcheck(x.sqrt())] == ["non-differentiable"]


def test_the_trace_says_when_a_credit_outlived_its_overflowing_slope() -> None:
    """`1e-310 · inf = 1` alone reads as a mistake: the trace says it was one quotient."""
    done = CliRunner().invoke(cli, ["trace", "x*log(x)", "x=1e-310"])
    assert done.exit_code == 0
    (line,) = [ln for ln in done.stdout.splitlines() if "· 1/x" in ln]
    assert "1e-310 · inf (taken as one quotient: the slope alone overflows) = 1" in line
    done = CliRunner().invoke(cli, ["trace", "x*log(x)", "x=2"])
    assert "one quotient" not in done.stdout


def test_the_pages_engine_credits_log_as_the_engine_does(tmp_path) -> None:
    """The live page (assets/engine.js, GV_OPS.c) divides too: x·log(x) at 1e-310."""
    import os

    from test_html_parity import NODE, from_bits, graph_case, run_node

    if NODE is None:
        if os.environ.get("CI"):
            pytest.fail("the page engine's test must run in CI: node not installed")
        pytest.skip("node not installed")
    x = Value(1e-310, label="x")
    case, order = graph_case(x * x.log(), with_trace=True)
    (got,) = run_node({"graphs": [case], "fmt": [], "quote": []}, tmp_path)["graphs"]
    grads = [from_bits(g) for g in got["grad"]]
    assert grads == [v.grad for v in order]
    assert grads[order.index(x)] == -712.8013788281542
