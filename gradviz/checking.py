"""The old, healthy check: analytic gradients against finite differences.

The central difference D(h) = (L(x+h) - L(x-h)) / 2h is off by c·h² (truncation) plus
ε·|L|/h (rounding); h = ∛ε·max(1, |x|) ≈ 6e-6 balances the two for |x| ≤ 1 and grows with
|x| so that x ± h is another float. Then the h² term grows too (exp at 700: 3e-6), hence
Richardson's (4·D(h/2) − D(h)) / 3, whose h² terms cancel; D(h/2) − D(h) bounds the rest.
The nudged passes hold every `detach` at its value, as the backward pass does.

Points where the comparison means nothing are reported as such, judged only on the paths
from the leaf that carry credit, in this order: nan or inf on the way (at the point, in
the backward pass, or at a nudged point), an infinite local derivative (sqrt at 0), a kink
(`Op.kinks`: relu or abs at 0, or crossing it within ±h), and a leaf behind `detach` only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from gradviz.engine import Constant, Number, Value, backpropagate, evaluate, topological_order
from gradviz.engine import reached as credit_reaches
from gradviz.errors import InputError, OptionWords, keyword, listing, quoted
from gradviz.names import definition, node_names, output_name
from gradviz.numbers import fmt
from gradviz.records import Row, Status, summary

MACHINE_EPS = float(np.finfo(np.float64).eps)
EPS_SCALE = MACHINE_EPS ** (1 / 3)  # ≈ 6.06e-6: balances truncation and rounding error
DEFAULT_TOL = 1e-6  # relative error; a wrong derivative is off by far more
NOISE_ULPS = 100.0  # rounding noise of L(x±h), in multiples of ε·|L|


def default_eps(x: Number) -> float:
    """∛ε scaled by the input's magnitude (at least 1): the float64 sweet spot."""
    magnitude = _max_abs(x)
    return EPS_SCALE * (max(1.0, magnitude) if math.isfinite(magnitude) else 1.0)


# The smallest step, in ulps of the leaf, that the extrapolation can use: x ± h/2 must be
# floats apart from x ± h (h = 1e-20 at x = 3 moves x not at all: 0/0).
MIN_STEP_ULPS = 16


def _check_step(eps: float, x: Number, name: str) -> None:
    """Refuse a step given by the user that float64 cannot take at this leaf."""
    magnitude = _max_abs(x) if _finite(x) else 0.0
    x = x if isinstance(x, float) else magnitude  # a batch: its largest value
    smallest = MIN_STEP_ULPS * float(np.spacing(magnitude))
    if not math.isfinite(magnitude + 2 * eps):  # x ± h, and the 2h between them
        size, why = "large", "x ± h and the 2h between them overflow float64"
    elif eps < smallest:
        size, why = "small", f"float64 cannot take steps below {smallest:.2g} there"
    else:
        return
    raise InputError(
        f"eps {eps:g} is too {size} to measure a slope at {name} = {fmt(x)}: {why} (give a "
        f"{'smaller' if size == 'large' else 'larger'} eps, or none for the default, "
        f"{default_eps(x):.2g})"
    )


def _finite(x: Number) -> bool:
    return bool(np.all(np.isfinite(x)))


def _max_abs(x: Number) -> float:
    return float(np.max(np.abs(x)))


def _choose_leaves(order: list[Value], wrt: Iterable[Value | str] | None) -> list[Value]:
    """The leaves asked for (by Value or name), else the labelled ones (all when none has a
    label; never the constants, which nobody nudges)."""
    leaves = [v for v in order if v.op is None and type(v) is not Constant]
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
                known = listing([names[v] for v in leaves if v.label]) or "none"
                raise InputError(
                    f"no leaf named {quoted(item)} in this graph",
                    hint=f"Leaves with names: {known}.",
                )
        if node.op is not None:
            raise InputError(
                f"{names[node]} is computed from other values, not a leaf",
                hint="Check the gradient of the leaves it is computed from instead.",
            )
        if node not in chosen:
            chosen.append(node)
    return chosen


def _on_path(
    order: list[Value], leaf: Value, reached: set[Value]
) -> tuple[list[Value], set[Value]]:
    """The op nodes on the credit-carrying paths from `leaf` (in topological order), and all
    that moves with the leaf once every detach is held (the leaf, those, and nodes behind a
    detach)."""
    moves = {leaf}
    nodes = []
    for v in order:
        if v.op is not None and v.op.passes_credit and any(p in moves for p in v.parents):
            moves.add(v)
            if v in reached:
                nodes.append(v)
    return nodes, moves


def _infinite_slope(nodes: list[Value], moves: set[Value], names: dict[Value, str]) -> str | None:
    """A local derivative in an input that moves with the leaf that is not finite while the
    inputs are (sqrt at 0): no slope to compare. Other inputs' slopes do not matter."""
    for v in nodes:
        inputs = [p.data for p in v.parents]
        if not (_finite(v.data) and all(_finite(x) for x in inputs)):
            continue
        if not all(_finite(d) for d, p in zip(v.locals, v.parents, strict=True) if p in moves):
            shown = ", ".join(fmt(x) for x in inputs)
            return (
                f"{v.op.name} at {shown}: the local derivative of {names[v]} = "
                f"{definition(v, names)} is not finite there"
            )
    return None


@dataclass(frozen=True, slots=True)
class _Probe:
    """The output at one nudged point (the leaf's value as the floats hold it), the kink ops'
    inputs there, and where the first nan or inf appeared, if one did."""

    point: Number
    value: Number
    kink_inputs: list[Number]
    origin: str | None


def _on_kink(probes: list[_Probe], kinks: list[Value], names: dict[Value, str]) -> str | None:
    """A kink op on the leaf's path whose input sits on its kink, or crosses it between the
    nudged points (the finite difference straddles a corner)."""
    for v in kinks:
        if any(np.any(v.a.data == k) for k in v.op.kinks):
            return (
                f"{v.op.name} at {fmt(v.a.data)}: {names[v]} = {definition(v, names)} has a "
                "corner there (the slopes on each side differ)"
            )
    for i, v in enumerate(kinks):
        seen = [np.asarray(p.kink_inputs[i], dtype=np.float64) for p in probes]
        seen.append(np.asarray(v.a.data, dtype=np.float64))
        for k in v.op.kinks:
            offsets = np.stack([s - k for s in np.broadcast_arrays(*seen)])
            if np.any((np.min(offsets, axis=0) < 0) & (np.max(offsets, axis=0) > 0)):
                return (
                    f"the input of {names[v]} = {definition(v, names)} crosses "
                    f"{fmt(k)} within ±h: too close to {v.op.name}'s corner for a "
                    "finite difference"
                )
    return None


def _spell(x: Number) -> str:
    """A value that is not finite, in words: `inf`, or `nan in 3 of 80 examples`."""
    if not isinstance(x, np.ndarray) or x.ndim == 0:
        return fmt(x)
    bad = ~np.isfinite(x)
    first = x.flat[int(np.argmax(bad))]
    return f"{fmt(first)} in {int(bad.sum())} of {x.size} examples"


def _sample(x: Number, index: int) -> Number:
    return x.flat[index] if isinstance(x, np.ndarray) and x.ndim > 0 else x


def _origin(order: list[Value], names: dict[Value, str], leaf: Value) -> tuple[Value, str]:
    """The first node (its inputs finite) holding a nan or an inf, and why: a leaf holds one,
    or an op overflows, hits a pole or is undefined at its inputs."""
    for v in order:
        if _finite(v.data):
            continue
        bad = _spell(v.data)
        if v.op is None:
            if v is leaf:
                return v, f"{names[v]} itself is {bad}"
            if type(v) is Constant:
                return v, f"a constant is {bad}"
            return v, f"the leaf {names[v]} is {bad}"
        index = int(np.argmax(~np.isfinite(np.asarray(v.data)).ravel()))
        inputs = [_sample(p.data, index) for p in v.parents]
        shown = ", ".join(fmt(x) for x in inputs)
        value = float(_sample(v.data, index))
        what = f"{names[v]} = {definition(v, names)}"
        if math.isnan(value):
            return v, f"{what} is {bad} ({v.op.name} is undefined at {shown})"
        if any(float(x) == 0 for x in inputs):
            return v, f"{what} is {bad} ({v.op.name} has a pole at {shown})"
        return v, f"{what} overflows to {bad} ({v.op.name} of {shown})"
    return order[-1], f"{names[order[-1]]} is {_spell(order[-1].data)}"


OFFSETS = ((1.0, "+ h"), (-1.0, "− h"), (0.5, "+ h/2"), (-0.5, "− h/2"))


@np.errstate(all="ignore")  # nan and inf are results to report here, not warnings to print
def gradcheck(
    value: Value,
    wrt: Iterable[Value | str] | None = None,
    *,
    eps: float | None = None,
    tol: float = DEFAULT_TOL,
) -> list[Row]:
    """Compare every chosen leaf's analytic gradient with a finite-difference estimate
    (Richardson's extrapolation of central differences with steps h and h/2).

    `wrt` names the leaves (Values or names; default: every labelled leaf); `eps` is h
    (default `default_eps(x)` per leaf). A row passes when the relative error is at most
    `tol`, or the absolute error is within the estimate's rounding noise plus its
    truncation bound. `.grad` holds the gradients of one pass from zero afterwards.
    """
    if eps is not None and not (math.isfinite(eps) and eps > 0):
        raise InputError(f"eps must be a positive number, not {eps}")
    if not (math.isfinite(tol) and tol > 0):
        raise InputError(f"tol must be a positive number, not {tol}")
    order = topological_order(value)
    names = node_names(order)
    out = output_name(value, order)
    leaves = _choose_leaves(order, wrt)
    backpropagate(order)  # the nudges below change data and locals only: never a grad
    f0 = value.data
    reached = credit_reaches(order)
    held = [v for v in order if v.op is None or v.op.passes_credit]  # every detach held
    rows = []
    for leaf in leaves:
        x = leaf.data
        h = eps if eps is not None else default_eps(x)
        if eps is not None:
            _check_step(eps, x, names[leaf])
        nodes, moves = _on_path(order, leaf, reached)
        kinks = [v for v in nodes if v.op.kinks and v.a in moves]
        at_point = None  # why the forward pass holds a nan or an inf on the leaf's way
        if not (_finite(x) and _finite(f0) and all(_finite(v.data) for v in nodes)):
            node, at_point = _origin(order, names, leaf)
            if node is not order[-1] and not _finite(f0):
                at_point += f", so {out} is {_spell(f0)}"
        probes = []
        try:
            for k, _ in OFFSETS:
                leaf.data = x + k * h
                evaluate(held)  # every detach held: the backward pass treats it as a constant
                f = value.data
                origin = None if _finite(f) else _origin(order, names, leaf)[1]
                probes.append(_Probe(leaf.data, f, [v.a.data for v in kinks], origin))
        finally:
            leaf.data = x
            evaluate(order)
        plus, minus, half_plus, half_minus = probes
        full = plus.point - minus.point  # the steps the floats really took
        half = half_plus.point - half_minus.point
        d_full = (plus.value - minus.value) / full
        d_half = (half_plus.value - half_minus.value) / half
        ratio = (full / half) ** 2  # 4, up to the rounding of x ± h
        numeric = d_half + (d_half - d_full) / (ratio - 1)
        if not _finite(numeric) and _finite(d_half):  # L(x±h) overflowed, L(x±h/2) did not
            numeric = d_half
        grad = leaf.grad
        diff = np.abs(np.asarray(grad) - np.asarray(numeric))
        abs_error = float(np.max(diff)) if diff.size else 0.0
        scale = max(_max_abs(grad), _max_abs(numeric)) if _finite(grad) else math.inf
        rel_error = abs_error / scale if scale > 0 else 0.0
        if math.isnan(abs_error):  # nothing to compare: no relative error either
            rel_error = math.nan
        size = max(_max_abs(f0), *(_max_abs(p.value) for p in probes))
        # Each L(·) carries rounding noise δ = NOISE_ULPS·ε·|L| / 2; the extrapolation
        # weighs the two differences by ratio/(ratio − 1) and 1/(ratio − 1).
        noise = _max_finite(
            NOISE_ULPS * MACHINE_EPS * (size / half * ratio + size / full) / (ratio - 1)
        )
        truncation = _max_finite(np.abs(d_half - d_full) / (ratio - 1))
        status: Status
        note = ""
        remedy = None
        if leaf not in reached:
            status = "detached"
            note = (
                f"every path from {names[leaf]} to {out} runs through detach, which stops "
                "the gradient on purpose: there is nothing to compare"
            )
        elif at_point is not None:
            status, note = "non-finite", at_point
        elif not _finite(grad):
            # an infinite local slope on the way (sqrt at 0) explains it; one the chain
            # rule's product stays finite through (x·log(x) at 1e-310: g/x, not g·(1/x))
            # leaves a finite gradient to compare, and so is not asked about
            slope = _infinite_slope(nodes, moves, names)
            first = next(v for v in reversed(order) if not _finite(v.grad))  # the leaf at worst
            status = "non-differentiable" if slope is not None else "non-finite"
            note = slope or (
                f"the backward pass gives {_spell(grad)}: the gradient is already "
                f"{_spell(first.grad)} at {names[first]}"
            )
        elif (nudged := next((p for p in probes if p.origin), None)) is not None:
            where = OFFSETS[probes.index(nudged)][1]
            status = "non-finite"
            note = (
                f"{out} is {_spell(nudged.value)} at {names[leaf]} {where} = "
                f"{fmt(nudged.point)}: {nudged.origin}"
            )
        elif (kink := _on_kink(probes, kinks, names)) is not None:
            status, note = "non-differentiable", kink
        elif not (np.all(full != 0) and np.all(half != 0)):
            status = "non-finite"
            note = (
                f"h = {fmt(h)} is too small to move {names[leaf]} = {fmt(x)} in float64: "
                "give a larger step"
            )
            remedy = "eps"
        elif not _finite(numeric):
            status = "non-finite"
            note = (
                f"the finite difference overflows: {out} is {fmt(minus.value)} at "
                f"{names[leaf]} − h and {fmt(plus.value)} at {names[leaf]} + h"
            )
        elif abs_error <= tol * scale or abs_error <= noise + truncation:
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
                truncation=truncation,
                status=status,
                note=note,
                remedy=remedy,
                plus=plus.value,
                minus=minus.value,
                step=full,
                central=d_full,
            )
        )
    return rows


def _max_finite(x: Number) -> float:
    """The largest finite element (0 when there is none): a bound for the pass test."""
    values = np.asarray(x, dtype=np.float64)
    values = values[np.isfinite(values)]
    return float(np.max(values)) if values.size else 0.0


def document(rows: list[Row], output: str, words: OptionWords = keyword) -> dict:
    """What `check --json` prints: every leaf with the numbers the table leaves out, the
    summary line, and whether all passed; `words` names the option a note advises (`--eps`)."""
    numbers = ("analytic", "numeric", "abs_error", "rel_error", "status")
    bounds = ("eps", "noise", "truncation", "plus", "minus", "central")
    return {
        "output": output,
        "leaves": [
            {
                "name": row.name,
                "value": row.data,
                **{key: getattr(row, key) for key in numbers},
                "note": row.note or None,
                "remedy": None if row.remedy is None else words(row.remedy),
                **{key: getattr(row, key) for key in bounds},
            }
            for row in rows
        ],
        "summary": summary(rows),
        "passed": not any(row.failed for row in rows),
    }
