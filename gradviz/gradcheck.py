"""The old, healthy check: analytic gradients against central finite differences.

For a leaf x the backward pass claims dL/dx; nudging x by ±h and re-running the
forward pass measures (L(x+h) - L(x-h)) / 2h. The two agree to many digits when
every op's local derivative is right. The step h trades truncation error (∝ h²)
against rounding error (∝ ε/h); both are balanced near h = ∛ε ≈ 6e-6 for float64,
scaled by |x| so that large inputs are nudged by a visible amount.

`detach` stops the gradient on purpose: to the backward pass its output is a
constant. The nudged forward passes hold it so too (every detach keeps its value),
so a leaf with one path through detach and one without is compared normally.

Points where the comparison means nothing are reported as such rather than as
failures, judged only on the paths from the leaf to the output that carry credit:
a kink of an op (`Op.kinks`: relu or abs with input 0, or crossing 0 within ±h),
a local derivative that is infinite (sqrt at 0), non-finite numbers, and a leaf
whose every path to the output runs through `detach`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from gradviz.engine import Number, Value, backpropagate, evaluate, topological_order
from gradviz.errors import InputError
from gradviz.numbers import fmt
from gradviz.trace import definition, node_names, output_name

MACHINE_EPS = float(np.finfo(np.float64).eps)
EPS_SCALE = MACHINE_EPS ** (1 / 3)  # ≈ 6.06e-6: balances truncation and rounding error
DEFAULT_TOL = 1e-6  # relative error; a wrong derivative is off by far more
NOISE_ULPS = 100.0  # rounding noise of L(x±h), in multiples of ε·|L|

Status = Literal["pass", "fail", "non-differentiable", "non-finite", "detached"]


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


def _reached(order: list[Value]) -> set[Value]:
    """The nodes the credit reaches: those with a path to the output free of detach."""
    reached = {order[-1]}
    for v in reversed(order):
        if v in reached and v.op is not None and v.op.passes_credit:
            reached.update(v.parents)
    return reached


def _on_path(
    order: list[Value], leaf: Value, reached: set[Value]
) -> tuple[list[Value], set[Value]]:
    """The non-leaf nodes on the paths that carry credit from `leaf` to the output (in
    topological order), and everything whose value moves with the leaf once every
    detach is held fixed (the leaf, those nodes, and nodes behind a detach)."""
    moves = {leaf}
    nodes = []
    for v in order:
        if v.op is not None and v.op.passes_credit and any(p in moves for p in v.parents):
            moves.add(v)
            if v in reached:
                nodes.append(v)
    return nodes, moves


def _live_inputs(v: Value, moves: set[Value]) -> list[int]:
    """The input positions of `v` that move with the leaf: the only slopes that matter."""
    return [i for i, p in enumerate(v.parents) if p in moves]


def _at_kink(v: Value, moves: set[Value]) -> bool:
    """True when a kink op's input (on the leaf's path) sits exactly on a kink."""
    return bool(v.op.kinks) and v.a in moves and any(np.any(v.a.data == k) for k in v.op.kinks)


def _singular(nodes: list[Value], moves: set[Value], names: dict[Value, str]) -> str | None:
    """Why the output is not differentiable in the leaf at the current point, or None.

    A kink op with its input exactly on the kink, or a local derivative with respect to
    an input that moves with the leaf that is not finite while the inputs are (sqrt at
    0: 1/(2·√0) = inf). Slopes in other inputs do not matter: (-3)^(1+1) has no slope
    in its exponent, but its slope in the base is fine.
    """
    for v in nodes:
        op = v.op
        if _at_kink(v, moves):
            return (
                f"{op.name} at {fmt(v.a.data)}: {names[v]} = {definition(v, names)} has a "
                "corner there (the slopes on each side differ)"
            )
        inputs = [p.data for p in v.parents]
        if not all(_finite(x) for x in inputs):
            continue
        locals_ = op.local(v.data, *inputs)
        if not all(_finite(locals_[i]) for i in _live_inputs(v, moves)):
            shown = ", ".join(fmt(x) for x in inputs)
            return (
                f"{op.name} at {shown}: the local derivative of {names[v]} = "
                f"{definition(v, names)} is not finite there"
            )
    return None


def _crossed(below: list[Number], above: list[Number], nodes: list[Value], names) -> str | None:
    """A kink crossed between x-h and x+h: the finite difference straddles a corner."""
    for lo, hi, v in zip(below, above, nodes, strict=True):
        if any(bool(np.any(np.sign(lo - k) != np.sign(hi - k))) for k in v.op.kinks):
            return (
                f"the input of {names[v]} = {definition(v, names)} crosses "
                f"{fmt(v.op.kinks[0]) if len(v.op.kinks) == 1 else 'a kink'} within ±h: "
                f"too close to {v.op.name}'s corner for a finite difference"
            )
    return None


def _kink_inputs(nodes: list[Value]) -> list[Number]:
    return [v.a.data for v in nodes]


def _nudged(order: list[Value], held: list[Value]) -> Number:
    """The output after a leaf changed, with every detach held at its value: to the
    backward pass a detached value is a constant, so the nudge must not move it."""
    evaluate(held)
    return order[-1].data


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
    reached = _reached(order)
    held = [v for v in order if v.op is None or v.op.passes_credit]  # every detach held
    rows = []
    for leaf in leaves:
        x = leaf.data
        h = eps if eps is not None else default_eps(x)
        nodes, moves = _on_path(order, leaf, reached)
        kinks = [v for v in nodes if v.op.kinks and v.a in moves]
        try:
            leaf.data = x + h
            f_plus = _nudged(order, held)
            above = _kink_inputs(kinks)
            leaf.data = x - h
            f_minus = _nudged(order, held)
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
        singular = _singular(nodes, moves, names)
        if leaf not in reached:
            status = "detached"
            note = (
                f"every path from {names[leaf]} to {out} runs through detach, which stops "
                "the gradient on purpose: there is nothing to compare"
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
