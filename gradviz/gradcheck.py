"""The old, healthy check: analytic gradients against central finite differences.

For a leaf x the backward pass claims dL/dx; nudging x by ±h and re-running the
forward pass measures (L(x+h) - L(x-h)) / 2h. The two agree to many digits when
every op's local derivative is right. The step h trades truncation error (∝ h²)
against rounding error (∝ ε/h); both are balanced near h = ∛ε ≈ 6e-6 for float64,
scaled by |x| so that large inputs are nudged by a visible amount.

Points where the comparison means nothing are reported as such rather than as
failures: a kink (relu or abs with input 0, or crossing 0 within ±h), a local
derivative that is infinite (sqrt at 0), non-finite numbers, and paths through
`detach` (which stops the gradient on purpose while the forward pass sees through it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from gradviz.engine import (
    ABS,
    RELU,
    Number,
    Value,
    backpropagate,
    evaluate,
    topological_order,
)
from gradviz.errors import InputError
from gradviz.numbers import fmt
from gradviz.trace import definition, node_names, output_name

MACHINE_EPS = float(np.finfo(np.float64).eps)
EPS_SCALE = MACHINE_EPS ** (1 / 3)  # ≈ 6.06e-6: balances truncation and rounding error
DEFAULT_TOL = 1e-6  # relative error; a wrong derivative is off by far more
NOISE_ULPS = 100.0  # rounding noise of L(x±h), in multiples of ε·|L|

Status = Literal["pass", "fail", "non-differentiable", "non-finite", "detached"]
KINKS = (RELU, ABS)  # ops with a corner at input 0 (one-sided slopes differ)


@dataclass(frozen=True, slots=True)
class Row:
    """One leaf compared: the gradient the backward pass gives and the one measured.

    `noise` is the rounding noise of the finite difference (NOISE_ULPS·ε·|L| / h):
    an absolute error below it passes even when the relative error is large (a true
    gradient of 0 measured as 1e-12). `note` says why a row is not a plain pass/fail.
    """

    leaf: Value
    name: str
    data: Number
    analytic: Number
    numeric: Number
    abs_error: float
    rel_error: float
    eps: float
    noise: float
    status: Status
    note: str = ""

    @property
    def failed(self) -> bool:
        return self.status == "fail"


def default_eps(x: Number) -> float:
    """∛ε scaled by the input's magnitude (at least 1): the float64 sweet spot."""
    magnitude = float(np.max(np.abs(x))) if isinstance(x, np.ndarray) else abs(float(x))
    if not math.isfinite(magnitude):
        magnitude = 1.0
    return EPS_SCALE * max(1.0, magnitude)


def _finite(x: Number) -> bool:
    return bool(np.all(np.isfinite(x)))


def _max_abs(x: Number) -> float:
    return float(np.max(np.abs(x)))


def _choose_leaves(order: list[Value], wrt: Iterable[Value | str] | None) -> list[Value]:
    """The leaves to check: those asked for (by Value or name), else the labelled ones
    (all leaves when none has a label, as in a graph built from plain Values)."""
    leaves = [v for v in order if v.op is None]
    if wrt is None:
        labelled = [v for v in leaves if v.label]
        return labelled or leaves
    names = node_names(order)
    by_name = {names[v]: v for v in order}
    chosen: list[Value] = []
    for item in wrt:
        if isinstance(item, Value):
            if item not in names:
                raise InputError("a Value given in wrt is not part of this graph")
            node = item
        else:
            node = by_name.get(item)
            if node is None:
                known = ", ".join(names[v] for v in leaves if v.label) or "none"
                raise InputError(
                    f"no leaf named {item!r} in this graph", hint=f"Leaves with names: {known}."
                )
        if node.op is not None:
            raise InputError(
                f"{names[node]} is computed from other values, not a leaf",
                hint="Check the gradient of the leaves it is computed from instead.",
            )
        if node not in chosen:
            chosen.append(node)
    return chosen


def _dependents(order: list[Value], leaf: Value) -> list[Value]:
    """The non-leaf nodes whose value depends on `leaf`, in topological order."""
    depends = {leaf}
    out = []
    for v in order:
        if v.op is not None and any(p in depends for p in v.parents):
            depends.add(v)
            out.append(v)
    return out


def _singular(nodes: list[Value], names: dict[Value, str]) -> str | None:
    """Why the graph is not differentiable at the current point, or None.

    A kink op with input exactly 0, or a local derivative that is not finite while
    its inputs are (sqrt at 0: 1/(2·√0) = inf).
    """
    for v in nodes:
        op = v.op
        inputs = [p.data for p in v.parents]
        if op in KINKS and bool(np.any(np.asarray(inputs[0]) == 0)):
            return (
                f"{op.name} at 0: {names[v]} = {definition(v, names)} has a corner there "
                "(the slopes on each side differ)"
            )
        if not all(_finite(x) for x in inputs):
            continue
        locals_ = op.local(v.data, *inputs)
        if not all(_finite(d) for d in locals_):
            shown = ", ".join(fmt(x) for x in inputs)
            return (
                f"{op.name} at {shown}: the local derivative of {names[v]} = "
                f"{definition(v, names)} is not finite there"
            )
    return None


def _crossed(below: list[Number], above: list[Number], nodes: list[Value], names) -> str | None:
    """A kink crossed between x-h and x+h: the finite difference straddles a corner."""
    for lo, hi, v in zip(below, above, nodes, strict=True):
        if bool(np.any(np.sign(lo) != np.sign(hi))):
            return (
                f"the input of {names[v]} = {definition(v, names)} crosses 0 within ±h: "
                f"too close to {v.op.name}'s corner for a finite difference"
            )
    return None


def _kink_inputs(nodes: list[Value]) -> list[Number]:
    return [v.a.data for v in nodes]


def gradcheck(
    value: Value,
    wrt: Iterable[Value | str] | None = None,
    *,
    eps: float | None = None,
    tol: float = DEFAULT_TOL,
) -> list[Row]:
    """Compare every chosen leaf's analytic gradient with a central finite difference.

    `wrt` names the leaves (Values or names; default: every labelled leaf). `eps` is
    the step h (default `default_eps(x)` per leaf); a row passes when the relative error
    is at most `tol` or the absolute error is within the rounding noise. The graph is
    left as it was found, with the analytic gradients in `.grad`.
    """
    # nan and inf are results to report here, not warnings to print.
    with np.errstate(all="ignore"):
        return _gradcheck(value, wrt, eps, tol)


def _gradcheck(
    value: Value, wrt: Iterable[Value | str] | None, eps: float | None, tol: float
) -> list[Row]:
    if eps is not None and not (math.isfinite(eps) and eps > 0):
        raise InputError(f"eps must be a positive number, not {eps}")
    if not (math.isfinite(tol) and tol > 0):
        raise InputError(f"tol must be a positive number, not {tol}")
    order = topological_order(value)
    names = node_names(order)
    out = output_name(value, order)
    leaves = _choose_leaves(order, wrt)
    backpropagate(order)
    analytic = {leaf: leaf.grad for leaf in leaves}
    f0 = value.data
    rows = []
    for leaf in leaves:
        x = leaf.data
        h = eps if eps is not None else default_eps(x)
        nodes = _dependents(order, leaf)
        kinks = [v for v in nodes if v.op in KINKS]
        try:
            leaf.data = x + h
            f_plus = evaluate(order)
            above = _kink_inputs(kinks)
            leaf.data = x - h
            f_minus = evaluate(order)
            below = _kink_inputs(kinks)
            step = (x + h) - (x - h)  # the step the floats really took
        finally:
            leaf.data = x
            evaluate(order)
        numeric = (f_plus - f_minus) / step
        grad = analytic[leaf]
        diff = np.abs(np.asarray(grad) - np.asarray(numeric))
        abs_error = float(np.max(diff)) if diff.size else 0.0
        scale = max(_max_abs(grad), _max_abs(numeric)) if _finite(grad) else math.inf
        rel_error = abs_error / scale if scale > 0 else 0.0
        size = max(_max_abs(f0), _max_abs(f_plus), _max_abs(f_minus))
        noise = NOISE_ULPS * MACHINE_EPS * size / float(np.min(step))
        status: Status
        note = ""
        detach = next((v for v in nodes if not v.op.passes_credit), None)
        singular = _singular(nodes, names)
        if detach is not None:
            status = "detached"
            note = (
                f"a path from {names[leaf]} to {out} runs through detach ({names[detach]}), "
                "which stops the gradient on purpose; finite differences see through it"
            )
        elif singular is not None:
            status, note = "non-differentiable", singular
        elif (crossed := _crossed(below, above, kinks, names)) is not None:
            status, note = "non-differentiable", crossed
        elif not all(_finite(v) for v in (x, f0, f_plus, f_minus, grad, numeric)):
            status = "non-finite"
            note = _non_finite_note(names[leaf], out, x, f0, f_plus, f_minus, grad, numeric)
        elif abs_error <= tol * scale or abs_error <= noise:
            status = "pass"
        else:
            status = "fail"
            note = (
                f"the backward pass says {fmt(grad)}, nudging {names[leaf]} measures "
                f"{fmt(numeric)}: a local derivative on the way is wrong"
            )
        rows.append(
            Row(
                leaf=leaf,
                name=names[leaf],
                data=x,
                analytic=grad,
                numeric=numeric,
                abs_error=abs_error,
                rel_error=rel_error,
                eps=float(np.max(h)),
                noise=noise,
                status=status,
                note=note,
            )
        )
    backpropagate(order)  # the grads as they were (the nudges did not touch them, but be sure)
    return rows


def _non_finite_note(name, out, x, f0, f_plus, f_minus, grad, numeric) -> str:
    """Which number is not finite, in words."""
    if not _finite(x):
        return f"{name} itself is {fmt(x)}"
    if not _finite(f0):
        return f"{out} is {fmt(f0)} at this point"
    if not (_finite(f_plus) and _finite(f_minus)):
        return f"{out} is not finite within ±h of this point ({fmt(f_minus)}, {fmt(f_plus)})"
    if not _finite(grad):
        return f"the backward pass gives {fmt(grad)}"
    return f"the finite difference is {fmt(numeric)}"


def summary(rows: list[Row]) -> str:
    """One line: how many leaves were checked and how they came out."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.status] = counts.get(row.status, 0) + 1
    parts = [f"{n} {status}" for status, n in counts.items()]
    noun = "leaf" if len(rows) == 1 else "leaves"
    failed = [r.name for r in rows if r.failed]
    verdict = f"FAILED: {', '.join(failed)}" if failed else "ok"
    return f"{len(rows)} {noun} checked: {', '.join(parts) or 'none'} — {verdict}"
