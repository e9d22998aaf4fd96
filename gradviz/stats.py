"""Per-layer gradient statistics, a status per layer, and a verdict in words.

Pure functions of `gradviz.nn.LayerSample`s (one layer at one moment, raw gradients before
clipping) filling `gradviz.records`. Statuses, first match wins: `STATUS_TABLE`, one row
per status, from which `grads --help` and docs/manual/grads.md are made.
"""

from __future__ import annotations

import itertools
import math
import textwrap
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from gradviz.errors import InputError, quoted
from gradviz.nn import LayerSample
from gradviz.numbers import fmt
from gradviz.ops import ACTIVATIONS, Op
from gradviz.records import Diagnosis, History, LayerStats, ParamGrad

# -- thresholds: the float constants here, which STATUS_TABLE's words name (the manual and
# `gradviz grads --help` show them)
VANISHING_RATIO = 1e-2  # rms gradient below this fraction of a layer nearer the output
WEAK_RATIO = 1e-1
EXPLODING_GROWTH = 1e2  # rms gradient at least this many times the output layer's
EXPLODING_GRAD_DATA = 10.0  # ‖g‖ / ‖w‖
AT_REST_RMS = 1e-4  # every rms weight and bias gradient below this: the network is at rest
STALLED_SPREAD = 1e-3  # output std across the batch (relative to max(1, |mean|))
SATURATED_FRACTION = 0.5
DEAD_FRACTION = 0.5
HEALTHY_UPDATE_DATA = 1e-3  # ‖Δw‖ / ‖w‖ per step, the usual rule of thumb
NEAR_ZERO_WEIGHTS = 1e-2  # rms weight below this fraction of the median layer's: near zero

# The quantities of a layer in the order the forward then backward pass makes them.
_QUANTITIES = (
    ("weights", "weights"),
    ("biases", "biases"),
    ("pre_activations", "pre-activations"),
    ("activations", "activations"),
    ("bias_grads", "gradients"),
    ("weight_grads", "gradients"),
)
_FORWARD = {"weights", "biases", "pre-activations", "activations"}


# -- the numbers of one layer -------------------------------------------------------


def _activation_op(activation: str) -> Op | None:
    """The op of an activation (None for linear): its slopes come from the op table."""
    if activation not in ACTIVATIONS:
        known = ", ".join(ACTIVATIONS)
        raise InputError(f"unknown activation {quoted(activation)}; expected one of {known}")
    return ACTIVATIONS[activation]


def slope(activation: str, pre: np.ndarray, act: np.ndarray) -> np.ndarray:
    """The activation's derivative at each pre-activation (σ′ = σ(1-σ) ≤ 0.25)."""
    op = _activation_op(activation)
    if op is None:
        return np.ones_like(act)
    return np.asarray(op.local(act, pre)[0], dtype=np.float64)


def max_slope(activation: str) -> float:
    """The activation's largest slope: the most of the signal it can pass back."""
    op = _activation_op(activation)
    return 1.0 if op is None or op.max_slope is None else op.max_slope


def _saturation_masks(
    activation: str, pre: np.ndarray, act: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """(low end, high end) masks of saturated units, or None: by the outputs where the op
    only rises, else by the inputs (where it dips, an output near 0 says nothing)."""
    op = ACTIVATIONS.get(activation)
    if op is not None and op.saturation is not None:
        return act < op.saturation[0], act > op.saturation[1]
    if op is not None and op.saturation_input is not None:
        return pre < op.saturation_input[0], pre > op.saturation_input[1]
    return None


# -- many layers at once ----------------------------------------------------------------
# The layers of one kind (`_layer_kind`) at every recorded moment are stacked on a first
# axis and reduced in one numpy call per quantity. Each layer's sums run in the same order
# as on that layer alone, so its numbers do not depend on what it was diagnosed with.
_EACH = (1, 2)  # the axes of one layer's (rows, columns) in a stack of layers

_Item = TypeVar("_Item")
_Out = TypeVar("_Out")

# The most numbers of one kind per call: larger stacks outgrow the cache (deep-sigmoid's
# 20 moments: 2**17, 10-14 ms; unbounded, 16-18 ms; 2**13, 21 ms).
BLOCK_FLOATS = 2**17


def _grouped(
    items: Sequence[_Item],
    keys: Sequence[Hashable],
    compute: Callable[[list[_Item]], list[_Out]],
    block: int | None = None,
) -> list[_Out]:
    """`compute` of each key's items together (at most `block` numbers a call), in order."""
    groups: dict[Hashable, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    out: list = [None] * len(items)
    for indices in groups.values():
        step = len(indices)
        if block is not None:  # how many items of this kind hold `block` numbers
            size = items[indices[0]].size  # type: ignore[attr-defined]
            step = max(1, block // max(1, size))
        for start in range(0, len(indices), step):
            part = indices[start : start + step]
            for i, value in zip(part, compute([items[i] for i in part]), strict=True):
                out[i] = value
    return out


def _layer_kind(sample: LayerSample) -> tuple:
    """What layers computed together share: shapes, activation, being the output."""
    return (
        np.shape(sample.weights),
        np.shape(sample.biases),
        np.shape(sample.activations),
        sample.activation,
        sample.is_output,
    )


def _stack(column: Sequence[LayerSample], attribute: str) -> np.ndarray:
    """The layers' `attribute` as a (layers, rows, columns) array."""
    stack = np.array([getattr(sample, attribute) for sample in column], dtype=float)
    return stack if stack.ndim == 3 else stack.reshape(len(column), 1, -1)


def _sums(x: np.ndarray) -> list[float]:
    return np.add.reduce(x, axis=_EACH).tolist()


def _means(x: np.ndarray) -> list[float]:
    size = x.shape[1] * x.shape[2]
    return [total / size for total in _sums(x)] if size else [math.nan] * len(x)


def _nonfinite(
    stacks: dict[str, np.ndarray], sums: dict[str, list[float]]
) -> list[tuple[int, str | None]]:
    """Each layer's count of NaN/inf and the first quantity holding one (forward pass first),
    counted only where a sum (from `sums`, where it has one) is not finite."""
    found: list[tuple[int, str | None]] = [(0, None)] * len(stacks["weights"])
    for attribute, label in _QUANTITIES:
        values = stacks[attribute]
        with np.errstate(all="ignore"):  # (a sum may overflow: then its terms are counted)
            totals = sums.get(attribute) or _sums(values)
        suspect = [k for k, total in enumerate(totals) if not math.isfinite(total)]
        if not suspect:
            continue
        size = values.shape[1] * values.shape[2]
        finite = np.count_nonzero(np.isfinite(values[suspect]), axis=_EACH).tolist()
        for k, ok in zip(suspect, finite, strict=True):
            count, first = found[k]
            found[k] = (count + size - ok, first if first is not None or ok == size else label)
    return found


def _dead_units(
    activation: str,
    is_output: bool,
    act: np.ndarray,
    masks: tuple[np.ndarray, np.ndarray] | None,
) -> list[int]:
    """Each layer's units that pass nothing back for every sample: at or below the op's
    `dies_at`, or (hidden layers) stuck at one end of the saturation `masks` (a unit that
    flips between ends still tells the inputs apart)."""
    if act.shape[1] == 0:
        return [0] * len(act)
    op = ACTIVATIONS.get(activation)
    if op is not None and op.dies_at is not None:
        stuck = np.logical_and.reduce(act <= op.dies_at, axis=1)
    elif masks is None or is_output:
        return [0] * len(act)
    else:
        low, high = masks
        stuck = np.logical_and.reduce(low, axis=1) | np.logical_and.reduce(high, axis=1)
    return np.count_nonzero(stuck, axis=1).tolist()


def _ratio(top: float, bottom: float) -> float | None:
    if not (math.isfinite(top) and math.isfinite(bottom)) or bottom == 0:
        return None
    return top / bottom


def _roots(values: list[float]) -> list[float]:
    return [math.sqrt(v) if v == v else math.nan for v in values]


def _magnitudes(x: np.ndarray, *inputs: np.ndarray) -> np.ndarray:
    """|x|, in place when x is an array of its own (a new one costs its page faults)."""
    if x.flags.owndata and x.flags.writeable and all(x is not a for a in inputs):
        return np.abs(x, out=x)
    return np.abs(x)


def _layer_stats(column: Sequence[LayerSample]) -> list[LayerStats]:
    """Each layer's own numbers (`_compare` fills in those that depend on the others)."""
    first = column[0]
    stacks = {attribute: _stack(column, attribute) for attribute, _ in _QUANTITIES}
    g, w = stacks["weight_grads"], stacks["weights"]
    pre, act = stacks["pre_activations"], stacks["activations"]
    n_out, n_in = w.shape[1], w.shape[2]
    size = n_out * n_in
    with np.errstate(all="ignore"):
        square_sums, w_square_sums = _sums(g * g), _sums(w * w)
        norms, w_norms = _roots(square_sums), _roots(w_square_sums)
        rms = _roots([t / size for t in square_sums]) if size else [math.nan] * len(g)
        magnitudes = np.abs(g)
        mean_abs = _means(magnitudes)
        max_abs = np.max(magnitudes, axis=_EACH).tolist()
        bias_grads = stacks["bias_grads"]
        bias_square_means = _means(bias_grads * bias_grads)
        signal = _roots(bias_square_means)
        updates: list[float | None] = [None] * len(column)
        moved = [k for k, sample in enumerate(column) if sample.previous_weights is not None]
        if moved:
            before = np.array([column[k].previous_weights for k in moved], dtype=float)
            steps = (w if len(moved) == len(column) else w[moved]) - before
            for k, step in zip(moved, _roots(_sums(steps * steps)), strict=True):
                updates[k] = _ratio(step, w_norms[k])
        masks = _saturation_masks(first.activation, pre, act)
        saturated = [None] * len(column) if masks is None else _means(masks[0] | masks[1])
        dead = _dead_units(first.activation, first.is_output, act, masks)
        act_means = _means(act)
        centred = act - np.array(act_means).reshape(-1, 1, 1)
        act_stds = _roots(_means(np.multiply(centred, centred, out=centred)))
        slopes = _means(_magnitudes(slope(first.activation, pre, act), pre, act))
    nonfinite = _nonfinite(
        stacks,
        {  # a mean is finite when its sum is
            "weights": w_square_sums,
            "activations": act_means,
            "bias_grads": bias_square_means,
            "weight_grads": square_sums,
        },
    )
    return [
        LayerStats(
            index=sample.index,
            name=sample.name,
            activation=sample.activation,
            is_output=sample.is_output,
            n_in=n_in,
            n_out=n_out,
            n_params=int(size + stacks["biases"].shape[2]),
            batch=int(act.shape[1]),
            mean_abs=mean_abs[k],
            max_abs=max_abs[k],
            rms=rms[k],
            norm=norms[k],
            signal=signal[k],
            grad_data=_ratio(norms[k], w_norms[k]),
            update_data=updates[k],
            act_mean=act_means[k],
            act_std=act_stds[k],
            # |slope|: how much signal passes (a non-monotone op's slope dips below 0)
            mean_slope=slopes[k],
            saturated=saturated[k],
            dead=dead[k] / n_out if n_out else 0.0,
            dead_units=dead[k],
            nonfinite=nonfinite[k][0],
            nonfinite_in=nonfinite[k][1],
        )
        for k, sample in enumerate(column)
    ]


def _delta_norms(column: Sequence[LayerSample]) -> list[float]:
    """‖δ‖, each layer's bias gradient's norm (BLAS's dot, as np.linalg.norm)."""
    b = _stack(column, "bias_grads")
    return np.sqrt(np.matmul(b, b.transpose(0, 2, 1))[:, 0, 0]).tolist()


def _spectral_norms(matrices: Sequence[np.ndarray]) -> list[float]:
    """‖W‖₂ (as np.linalg.norm(W, 2)) of finite matrices of one shape, in one LAPACK call."""
    stack = np.array(matrices, dtype=float)
    return np.max(np.linalg.svd(stack, compute_uv=False), axis=-1).tolist()


def _output_spreads(outputs: Sequence[LayerSample]) -> list[tuple[float, float]]:
    """(largest std across the batch, max(1, mean |output|)) of output layers, for `assess`."""
    act = _stack(outputs, "activations")
    spreads, scales = [0.0] * len(outputs), [1.0] * len(outputs)
    with np.errstate(all="ignore"):
        if act.shape[1]:
            spreads = np.max(np.std(act, axis=1), axis=1).tolist()
        if act.size:
            scales = [max(1.0, mean) for mean in _means(np.abs(act))]
    return list(zip(spreads, scales, strict=True))


# -- the whole network ----------------------------------------------------------------


def _check(samples: Sequence[LayerSample]) -> None:
    if not samples:
        raise InputError("no layers to diagnose")
    for before, after in itertools.pairwise(samples):
        if after.weights.shape[1] != before.weights.shape[0]:
            raise InputError(
                f"layer {after.name} takes {after.weights.shape[1]} inputs but "
                f"{before.name} gives {before.weights.shape[0]}"
            )
    if not samples[-1].is_output:
        raise InputError(f"the last layer ({samples[-1].name}) is not marked as the output")


def first_in_order(found: Sequence[tuple[int, str | None]]) -> tuple[int, str] | None:
    """From each layer's (index, first quantity holding a NaN/inf): where one first shows up
    in the order the numbers are made (forward pass up, then backward pass down), or None."""
    for index, what in found:
        if what in _FORWARD:
            return index, what
    for index, what in reversed(found):
        if what is not None:
            return index, what
    return None


def diagnose(samples: Sequence[LayerSample], epoch: int | None = None) -> Diagnosis:
    """Statistics and a status for every layer (statuses compare the layers)."""
    return diagnose_all([(epoch, samples)])[0]


Moment = tuple[int | None, Sequence[LayerSample]]  # (epoch, every layer's samples)


def diagnose_all(moments: Sequence[Moment]) -> list[Diagnosis]:
    """`diagnose` of each moment: the same numbers, layers of one kind computed together."""
    for _, samples in moments:
        _check(samples)
    flat = [sample for _, samples in moments for sample in samples]
    kinds = [_layer_kind(sample) for sample in flat]
    stats = _grouped(flat, kinds, _layer_stats, BLOCK_FLOATS)
    deltas = _grouped(flat, kinds, _delta_norms)
    bounds = _hop_bounds(flat, stats)
    outputs = [samples[-1] for _, samples in moments]
    spreads = _grouped(outputs, [np.shape(s.activations) for s in outputs], _output_spreads)
    diagnoses = []
    ends = itertools.accumulate(len(samples) for _, samples in moments)
    for (epoch, samples), (spread, scale), end in zip(moments, spreads, ends, strict=True):
        span = slice(end - len(samples), end)
        layers = stats[span]
        first = first_in_order([(lay.index, lay.nonfinite_in) for lay in layers])
        batch = layers[-1].batch
        diagnoses.append(
            assess(layers, spread, scale, batch, first, epoch, deltas[span], bounds[span])
        )
    return diagnoses


def _hop_bounds(flat: Sequence[LayerSample], stats: Sequence[LayerStats]) -> list[float | None]:
    """Each layer's largest slope × ‖next W‖₂ (None: the output, or no finite next W)."""
    known: list[tuple[int, str, np.ndarray]] = []  # (a layer's place, activation, next W)
    for place, (sample, after) in enumerate(itertools.pairwise(flat)):
        read = stats[place + 1]  # (the last layer of a moment is its output: no next W)
        if not sample.is_output and read.n_out * read.n_in and read.nonfinite_in != "weights":
            known.append((place, sample.activation, after.weights))
    matrices = [w for _, _, w in known]
    norms = _grouped(matrices, [np.shape(w) for w in matrices], _spectral_norms)
    bounds: list[float | None] = [None] * len(flat)
    for (place, activation, _), norm in zip(known, norms, strict=True):
        bounds[place] = max_slope(activation) * norm
    return bounds


def assess(
    layers: list[LayerStats],
    spread: float,
    scale: float,
    batch: int,
    first: tuple[int, str] | None,
    epoch: int | None,
    deltas: Sequence[float],
    hop_bounds: Sequence[float | None] | None,
    *,
    unit: str = "epoch",
    judged_by: str = "gradient",
    optimizer: str | None = None,
    clip_scale: float | None = None,
) -> Diagnosis:
    """Compare the layers and give each its status: gradviz's engine and the PyTorch
    recorder both end here, so they share the one status table. `spread`: the outputs'
    largest std across the batch, `scale` max(1, mean |output|), `deltas` each layer's
    ‖bias gradient‖, `hop_bounds` None where unknown.
    `judged_by="update"` (an adaptive optimizer) compares update:data, not gradients."""
    active = [lay for lay in layers if not lay.frozen]
    adaptive = judged_by == "update"
    if judged_by == "update" and any(lay.update_data is None for lay in active):
        judged_by = "gradient"  # (no update measured: the raw gradients it is)
    # At rest: no weight gradient and no backpropagated signal (bias gradient) left
    # (a NaN or inf is never below the bound).
    at_rest = bool(active) and all(
        _rms_before_clipping(lay) < AT_REST_RMS and lay.signal < AT_REST_RMS for lay in active
    )
    with np.errstate(all="ignore"):
        stalled = at_rest and batch >= 2 and spread < STALLED_SPREAD * scale
        near_zero = _near_zero(layers)
        _compare(layers, deltas, hop_bounds, judged_by, near_zero)
        # grad:data tells of explosion only where a step is lr·g (not rescaled by the
        # optimizer) and over weights not ~0 (a step of a zero-initialised weight is ∞× it)
        for layer in active:
            layer.grad_data_moot = adaptive or layer.index in near_zero
        for layer in layers:  # the first status that applies, and the numbers that made it
            for status in STATUS_TABLE:
                reason = status.test(layer, at_rest, stalled)
                if reason is not None:
                    layer.status, layer.reason = status.name, reason
                    break
    return Diagnosis(
        layers=layers,
        at_rest=at_rest,
        output_spread=spread,
        stalled=stalled,
        first_nonfinite=first,
        epoch=epoch,
        unit=unit,
        judged_by=judged_by,
        optimizer=optimizer,
        clip_scale=clip_scale,
    )


def _compare(
    layers: list[LayerStats],
    deltas: Sequence[float],
    hop_bounds: Sequence[float | None] | None,
    judged_by: str,
    near_zero: set[int],
) -> None:
    """Fill in what depends on the other layers (a frozen one is compared with none), from
    the output back: `most` is the largest size of a later layer that is compared (under
    update:data, not one of the `near_zero` layers: a zero-initialised weight's update is
    large by construction)."""
    active = [lay for lay in layers if not lay.frozen]
    strongest = max((lay.rms for lay in active if math.isfinite(lay.rms)), default=0.0)
    output = active[-1] if active else layers[-1]
    if judged_by != "update":
        near_zero = set()
    most: float | None = None
    for i in reversed(range(len(layers))):
        layer = layers[i]
        if layer.frozen:
            continue
        size = _size(layer, judged_by)
        layer.rel = _ratio(layer.rms, strongest)
        # a weight gradient exactly 0 with a bias gradient that is not: the input is all 0
        # (g_W = δ xᵀ), which says nothing of the gradient reaching the layer
        judged = layer.compared and not _fed_zeros(layer)
        layer.below = _ratio(size, most) if most is not None and judged else None
        if layer.compared and math.isfinite(size) and layer.index not in near_zero:
            most = size if most is None else max(most, size)
        growth = _ratio(layer.rms, output.rms)
        layer.growth = math.nan if growth is None else growth
        if layer.is_output:
            continue
        # δ_i = f'(z_i) ⊙ (W_{i+1}ᵀ δ_{i+1}), so ‖δ_i‖ ≤ max f' · ‖W_{i+1}‖₂ · ‖δ_{i+1}‖ per sample
        layer.hop = _ratio(deltas[i], deltas[i + 1])
        if hop_bounds is not None:
            layer.hop_bound = hop_bounds[i]


def _near_zero(layers: list[LayerStats]) -> set[int]:
    """The indices of the trained layers whose weights are near zero (a zero-initialised
    LoRA B, a cls token): rms below NEAR_ZERO_WEIGHTS of the median compared layer's
    (rms w = rms g / grad:data; 0 where ‖w‖ = 0, the one finite case grad:data is None)."""
    sizes = {}
    for lay in layers:
        if lay.frozen or lay.nonfinite or not math.isfinite(lay.rms):
            continue
        if lay.grad_data is None:
            sizes[lay.index] = 0.0
        elif lay.grad_data > 0:
            sizes[lay.index] = lay.rms / lay.grad_data
    typical = [sizes[lay.index] for lay in layers if lay.compared and lay.index in sizes]
    if not typical:
        return set()
    bound = NEAR_ZERO_WEIGHTS * float(np.median(typical))
    return {index for index, size in sizes.items() if size < bound}


def _rms_before_clipping(layer: LayerStats) -> float:
    """The rms weight gradient before clipping (the rms itself where nothing was clipped):
    clipping to a small norm must not make an explosion look at rest."""
    if layer.clipped_from is not None and layer.norm > 0:
        return layer.rms * layer.clipped_from / layer.norm
    return layer.rms


def _fed_zeros(layer: LayerStats) -> bool:
    """Its weight gradient exactly 0 while its bias gradient is not: its input is all 0."""
    return not layer.frozen and layer.max_abs == 0 and layer.signal > 0


def _size(layer: LayerStats, judged_by: str) -> float:
    """What layers are compared by: the rms gradient, or update:data (NaN: unknown)."""
    if judged_by == "update":
        return math.nan if layer.update_data is None else layer.update_data
    return layer.rms


# -- the statuses: ONE table -----------------------------------------------------------
# Each test sees one layer and whether the whole network is at rest / stalled, and returns
# the reason (the numbers that made the status apply) or None.
StatusTest = Callable[[LayerStats, bool, bool], str | None]


def _is_exploding(layer: LayerStats, at_rest: bool, stalled: bool) -> str | None:
    if at_rest:
        return None
    if not layer.is_output and layer.growth >= EXPLODING_GROWTH:
        return f"rms gradient {fmt(layer.growth, 3)}× the output layer's"
    if layer.grad_data_moot:
        return None
    if layer.grad_data is not None and layer.grad_data >= EXPLODING_GRAD_DATA:
        return f"gradient {fmt(layer.grad_data, 3)}× its weights"
    # grad:data before clipping scaled the gradient
    if layer.clipped_from is not None and layer.grad_data is not None and layer.norm > 0:
        before = layer.grad_data * layer.clipped_from / layer.norm
        if before >= EXPLODING_GRAD_DATA:
            return f"gradient {fmt(before, 3)}× its weights before clipping"
    return None


def _below(layer: LayerStats, ratio: float) -> str | None:
    """The reason of vanishing and weak: rms below `ratio` of a layer nearer the output."""
    if layer.below is not None and layer.below < ratio:
        return f"{fmt(layer.below, 3)} of a later layer's gradient"
    return None


@dataclass(frozen=True)
class Status:
    """One status: its rule in words for the manual (`rule`, Markdown) and for `grads --help`
    (`brief`, plain text, lines of at most 79 columns), both templates over the thresholds,
    and the `test` that decides it."""

    name: str
    rule: str
    brief: str
    test: StatusTest


STATUS_TABLE: tuple[Status, ...] = (
    Status(
        "NaN",
        "a NaN or ±inf anywhere in the layer's numbers",
        "a NaN or inf in the layer's weights, biases, gradients or activations",
        lambda layer, at_rest, stalled: (
            f"{layer.nonfinite} NaN/inf, first in its {layer.nonfinite_in}"
            if layer.nonfinite
            else None
        ),
    ),
    Status(
        "frozen",
        "its parameters get no gradient by design (`requires_grad` off, or in no optimizer's "
        "groups): left out of every comparison and of the verdict",
        "no gradient by design (requires_grad off, or in no optimizer): left out",
        lambda layer, at_rest, stalled: (
            "no gradient by design: not trained" if layer.frozen else None
        ),
    ),
    Status(
        "exploding",
        "`rms g` ≥ {EXPLODING_GROWTH:g}× the output layer's, or ‖g‖ ≥ {EXPLODING_GRAD_DATA:g}·‖w‖ "
        "before or after gradient clipping (never when the network is at rest; the ‖g‖ test "
        "not under an adaptive optimizer, nor for weights near zero: rms < "
        "{NEAR_ZERO_WEIGHTS:g} of the median layer's)",
        # ‖g‖ ≥ 10·‖w‖: one step at learning rate 0.1 would move the weights by their own size
        "rms >= {EXPLODING_GROWTH:g}x the output layer's, or |g| >= {EXPLODING_GRAD_DATA:g}x |w|",
        _is_exploding,
    ),
    Status(
        "dead",
        "≥ {DEAD_FRACTION:.0%} of the units inactive for every sample (see `dead%`)",
        ">= {DEAD_FRACTION:.0%} of units inactive on every sample (ReLU at 0, or a\n"
        "hidden unit stuck at one end of its saturation band)",
        lambda layer, at_rest, stalled: (
            f"{layer.dead_units} of {layer.n_out} units dead"
            if layer.dead >= DEAD_FRACTION
            else None
        ),
    ),
    Status(
        "stalled",
        "the network is at rest (every layer's rms weight *and* bias gradient < {AT_REST_RMS_e}) "
        "while its outputs vary by < {STALLED_SPREAD_e} across the batch: stuck at the mean "
        "prediction",
        "at rest (every rms, of weight and of bias gradients, < {AT_REST_RMS:g}) and\n"
        "the outputs vary by < {STALLED_SPREAD:g}: stuck at the mean prediction",
        lambda layer, at_rest, stalled: (
            "outputs barely vary and every gradient is tiny" if stalled else None
        ),
    ),
    Status(
        "zero",
        "every gradient of the layer exactly 0 (or none reached it): nothing reaches it, "
        "which is never success",
        "every gradient exactly 0 (or none reached it): nothing reaches the layer",
        # exactly 0, not small: nothing reaches the layer (never "ok", never "converged")
        lambda layer, at_rest, stalled: (
            "every gradient exactly 0: nothing reaches it"
            if layer.max_abs == 0 and not layer.signal > 0
            else None
        ),
    ),
    Status(
        "converged",
        "at rest, and the outputs do vary with the input: tiny gradients everywhere are success, "
        "not vanishing",
        "at rest and the outputs vary: tiny gradients everywhere, not vanishing",
        lambda layer, at_rest, stalled: (
            f"every rms gradient below {fmt(AT_REST_RMS)}" if at_rest else None
        ),
    ),
    Status(
        "vanishing",
        "`rms g` < 1/{VANISHING_RATIO_inv} of some layer nearer the output",
        # relative to the other layers: saturation is not required, and the output layer
        # (nothing between it and the loss) never vanishes
        "rms < {VANISHING_RATIO:g} of a layer nearer the output",
        lambda layer, at_rest, stalled: _below(layer, VANISHING_RATIO),
    ),
    Status(
        "saturated",
        "a hidden layer with ≥ {SATURATED_FRACTION:.0%} of its outputs saturated; the output "
        "layer is never flagged saturated (a confident output is the goal)",
        "hidden layer, >= {SATURATED_FRACTION:.0%} of outputs saturated ({bands}); never the "
        "output layer",
        # ({bands}: each activation's band, from the op table)
        lambda layer, at_rest, stalled: (
            f"{round(100 * layer.saturated)}% of outputs saturated"
            if not layer.is_output
            and layer.saturated is not None
            and layer.saturated >= SATURATED_FRACTION
            else None
        ),
    ),
    Status(
        "weak",
        "`rms g` < 1/{WEAK_RATIO_inv} of some layer nearer the output",
        "rms < {WEAK_RATIO:g} of a layer nearer the output",
        lambda layer, at_rest, stalled: _below(layer, WEAK_RATIO),
    ),
    Status("ok", "none of the above", "none of the above", lambda layer, at_rest, stalled: ""),
)
STATUSES = tuple(status.name for status in STATUS_TABLE)


def _threshold_fields() -> dict[str, object]:
    """The values the rules' templates may name: every threshold (read now, so a changed one
    changes the words), and the few spellings the words need (1e-4, 1/100, a band's ends)."""
    values: dict[str, object] = {
        k: v for k, v in globals().items() if k.isupper() and isinstance(v, float)
    }
    for name in ("AT_REST_RMS", "STALLED_SPREAD"):
        values[f"{name}_e"] = f"{values[name]:.0e}".replace("e-0", "e-")
    for name in ("VANISHING_RATIO", "WEAK_RATIO"):
        values[f"{name}_inv"] = f"{1 / values[name]:g}"  # type: ignore[operator]
    bands = [_band(name, op) for name, op in ACTIVATIONS.items() if op is not None]
    values["bands"] = ", ".join(band for band in bands if band)
    return values


def _band(name: str, op: Op) -> str:
    """An activation's saturation band in words, from the op table ('tanh |a| > 0.97')."""
    if op.saturation is not None:
        low, high = op.saturation
        if low == -high:
            return f"{name} |a| > {high:g}"
        return f"{name} < {low:g}" + (f" or > {high:g}" if math.isfinite(high) else "")
    if op.saturation_input is not None:
        return f"{name} input < {op.saturation_input[0]:g}"
    return ""


def status_help() -> str:
    """The status list `gradviz grads --help` prints (no click markup)."""
    values = _threshold_fields()
    lines = ["Statuses, first match wins (rms = root mean square of a layer's weight gradients):"]
    for status in STATUS_TABLE:
        brief = status.brief.format(**values).split("\n")
        first, *rest = [part for line in brief for part in textwrap.wrap(line, 72)]
        lines.append(f"  {status.name:<10} {first}")
        lines.extend(f"  {'':<10} {line}" for line in rest)
    return "\n".join(lines) + "\n"


def status_markdown() -> str:
    """The manual's "Statuses and their thresholds" table (Markdown, docs/manual/grads.md)."""
    values = _threshold_fields()
    rows = [f"| `{s.name}` | {s.rule.format(**values)} |" for s in STATUS_TABLE]
    return "\n".join(["| status | when |", "| --- | --- |", *rows]) + "\n"


# -- over training --------------------------------------------------------------------


def history(snapshots: Sequence[tuple[int, object]]) -> History:
    """Each entry (epoch, LayerSamples or a Diagnosis) as (epoch, Diagnosis)."""
    out: History = []
    for epoch, item in snapshots:
        diagnosis = item if isinstance(item, Diagnosis) else diagnose(list(item), epoch=epoch)  # type: ignore[call-overload]
        diagnosis.epoch = epoch
        out.append((int(epoch), diagnosis))
    return out


# -- the verdict ------------------------------------------------------------------------


def _having(d: Diagnosis, *statuses: str) -> list[LayerStats]:
    """The layers of `d` with one of `statuses`, in network order."""
    return [lay for lay in d.layers if lay.status in statuses]


def _layer_span(layers: list[LayerStats]) -> str:
    """'9 sigmoid layers' or '5 layers (3 sigmoid, 2 tanh)'."""
    kinds = Counter(layer.activation for layer in layers)
    n = len(layers)
    noun = "layer" if n == 1 else "layers"
    if len(kinds) == 1:
        return f"{n} {next(iter(kinds))} {noun}"
    parts = ", ".join(f"{count} {kind}" for kind, count in kinds.items())
    return f"{n} {noun} ({parts})"


def _names(layers: list[LayerStats]) -> str:
    if len(layers) == 1:
        return layers[0].name
    if [lay.index for lay in layers] == list(range(layers[0].index, layers[-1].index + 1)):
        return f"{layers[0].name}–{layers[-1].name}"
    return ", ".join(lay.name for lay in layers)


def _are(layers: list[LayerStats]) -> str:
    """'L1 is' or 'L1–L3 are'."""
    return f"{_names(layers)} {'is' if len(layers) == 1 else 'are'}"


def _vanishing_sentence(d: Diagnosis) -> str | None:
    vanishing = _having(d, "vanishing")
    if not vanishing:
        return None
    first = vanishing[0]
    position = d.layers.index(first)
    later = [  # the layers `first` was compared with
        lay
        for lay in d.layers[position + 1 :]
        if not lay.frozen and lay.compared and math.isfinite(_size(lay, d.judged_by))
    ]
    if d.judged_by == "update":
        near_zero = _near_zero(d.layers)
        later = [lay for lay in later if lay.index not in near_zero]
    # (none: only in statistics read from a file that disagree with themselves)
    if not later or (d.judged_by == "update" and first.update_data is None):
        return None
    reference = max(later, key=lambda lay: _size(lay, d.judged_by))
    if d.judged_by == "update":  # vanishing as an adaptive optimizer sees it
        size, most = first.update_data or 0.0, reference.update_data or 0.0
        return (
            f"{_are(vanishing)} vanishing: {first.name}'s weights move "
            f"{fmt(size / most if most else 0.0, 2)} as far per step as {reference.name}'s "
            f"(update:data {fmt(first.update_data, 2)} against {fmt(most, 2)}): lower the "
            "weight decay or raise the learning rate of those layers, or check their "
            "gradients for zeros."
        )
    between = d.layers[position : d.layers.index(reference)]
    ratio = first.rms / reference.rms if reference.rms else 0.0
    per_hop = ratio ** (1 / len(between)) if ratio > 0 else 0.0
    kinds = {lay.activation for lay in between}
    sat = [lay.saturated for lay in between if lay.saturated is not None]
    why = _hop_parts(between, per_hop)
    advice = (op.vanishing_advice for name, op in ACTIVATIONS.items() if op and name in kinds)
    fixes = next(filter(None, advice), "Try He init, or fewer layers.")
    if sat:
        mean_sat = 100 * sum(sat) / len(sat)
        share = f"{mean_sat:.0f}%" if mean_sat >= 1 else "none"
        why += f"; {share} of their outputs saturated"
    return (
        f"{_are(vanishing)} vanishing: {first.name} receives {fmt(ratio, 2)} of "
        f"{reference.name}'s gradient through {_layer_span(between)}, about "
        f"×{fmt(per_hop, 2)} per layer{why}. {fixes}"
    )


def _hop_parts(between: list[LayerStats], per_hop: float) -> str:
    """The per-layer factor as the slope's part (the mean slopes' geometric mean) times the
    weights': ': σ′ averages 0.2 here (at most 0.25) and the weights multiply it by 2.2'."""
    slopes = [lay.mean_slope for lay in between]
    if not slopes or per_hop <= 0 or not all(math.isfinite(v) and v > 0 for v in slopes):
        return ""
    slope = math.exp(sum(math.log(v) for v in slopes) / len(slopes))
    kinds = {lay.activation for lay in between}
    op = ACTIVATIONS[next(iter(kinds))] if len(kinds) == 1 else None
    name = op.slope_name if op is not None and op.slope_name else "the slope"
    most = max(max_slope(kind) for kind in kinds)
    return (
        f": {name} averages {fmt(slope, 2)} here (at most {fmt(most, 2)}) and the weights "
        f"multiply it by {fmt(per_hop / slope, 2)}"
    )


def _exploding_sentence(d: Diagnosis, when: str = "") -> str | None:
    exploding = _having(d, "exploding")
    if not exploding:
        return None
    first = exploding[0]
    position = d.layers.index(first)
    if not first.is_output and first.growth >= EXPLODING_GROWTH:
        hops = len(d.layers) - position - 1
        per_hop = first.growth ** (1 / hops)
        parts = _hop_parts(d.layers[position:-1], per_hop)
        parts = parts or ": the weights are too large for the activations' slope"
        size = (
            f"{first.name}'s gradient is {fmt(first.growth, 3)}× the output layer's "
            f"(about ×{fmt(per_hop, 2)} per layer through {hops} layers{parts})"
        )
    elif first.clipped_from is not None and first.grad_data is not None and first.norm > 0:
        before = first.grad_data * first.clipped_from / first.norm
        size = f"{first.name}'s gradient is {fmt(before, 3)}× its weights before clipping "
        size += "(grad:data)"
    else:
        size = f"{first.name}'s gradient is {fmt(first.grad_data, 3)}× its weights (grad:data)"
    if d.clip_scale is not None or any(lay.clipped_from is not None for lay in d.layers):
        return (
            f"{_are(exploding)} exploding{when}: {size}: clipping already holds the steps "
            "back but not the cause: lower the learning rate, initialise smaller weights "
            "(Xavier/He), or find the layer or input that makes the gradient grow."
        )
    return (
        f"{_are(exploding)} exploding{when}: {size}: lower the learning rate, clip gradients, "
        "or initialise smaller weights (Xavier/He)."
    )


def _nan_sentence(d: Diagnosis, epoch: int | None) -> str | None:
    if d.first_nonfinite is None:
        return None
    index, what = d.first_nonfinite
    name = next((lay.name for lay in d.layers if lay.index == index), f"L{index}")
    # statistics recorded after epoch N hold the weights at its end (as training's own
    # message says: "computed from the weights at the end of epoch N")
    if d.unit == "step":
        when = "" if epoch is None else f" at step {epoch}"
    else:
        when = {None: "", 0: " at initialisation"}.get(epoch, f" by the end of epoch {epoch}")
    # a layer before it whose outputs were not read (an RNN's, attention's) may have made
    # the first NaN/inf: then the place is where it was first seen, not where it began
    unread = [lay.name for lay in d.layers if lay.index < index and lay.activations_unread]
    if what in ("activations", "pre-activations") and unread:
        return (
            f"NaN/inf first seen in layer {name} (its {what}){when}; it may have begun before, "
            f"in {', '.join(unread)}, whose outputs were not read: lower the learning rate, "
            "clip gradients, and check the inputs for NaN or huge values."
        )
    return (
        f"NaN/inf first appeared in layer {name} (its {what}){when}: lower the learning rate, "
        "clip gradients, and check the inputs for NaN or huge values."
    )


def _history_sentences(d: Diagnosis, snapshots: History) -> list[str | None]:
    """When NaN first appeared, and when explosion did (if it has passed, or since when)."""
    nan_epoch, nan_at = next(
        ((epoch, snap) for epoch, snap in snapshots if snap.first_nonfinite is not None),
        (d.epoch, d),
    )
    exploded = next(((e, snap) for e, snap in snapshots if _having(snap, "exploding")), None)
    if exploded is None or exploded[0] == d.epoch:
        exploding = _exploding_sentence(d)
    elif _having(d, "exploding"):  # still exploding: say since when
        exploding = _exploding_sentence(d, f" (first at {d.unit} {exploded[0]})")
    else:  # it happened, and has passed
        exploding = _exploding_sentence(exploded[1], f" at {d.unit} {exploded[0]}")
    return [_nan_sentence(nan_at, nan_epoch), exploding]


def verdict(diagnosis: Diagnosis, snapshots: History | None = None) -> list[str]:
    """A short diagnosis in sentences, each naming the layer, the cause and the usual
    fixes. With a training history, also when NaN or explosion first appeared."""
    d = diagnosis
    snapshots = snapshots or []
    lines = [line for line in _history_sentences(d, snapshots) if line]
    recorded = [snap for _, snap in snapshots] or [d]
    lines += _set_up_sentences(d, recorded)
    never = _never_changed(d, recorded)

    dead = _having(d, "dead")
    dying = {name for name, op in ACTIVATIONS.items() if op is not None and op.dies_at is not None}
    relu = [lay for lay in dead if lay.activation in dying]
    stuck = [lay for lay in dead if lay.activation not in dying]
    fed_zeros = [lay for lay in d.layers if _fed_zeros(lay)]
    whole = [lay.index for lay in relu if lay.dead >= 1]  # every unit dead: its output is 0
    named: set[int] = set()  # the dead layers said with the layers they zero
    for start, end in itertools.pairwise([*whole, math.inf]):
        fed = [lay for lay in fed_zeros if start < lay.index < end]
        if not fed:
            continue
        name = next(lay.name for lay in relu if lay.index == start)
        lines.append(
            f"{name} is dead: every unit outputs 0 for every sample, so {_names(fed)} "
            f"{'gets' if len(fed) == 1 else 'get'} zero weight gradients (their input is all "
            f"0) and no gradient passes back through {name}: start its biases slightly "
            "positive, lower the learning rate if it died in training, or use wider layers."
        )
        named.add(start)
        fed_zeros = [lay for lay in fed_zeros if not start < lay.index < end]
    relu = [lay for lay in relu if lay.index not in named]
    if fed_zeros:
        lines.append(
            f"{_names(fed_zeros)}: the weight gradient is exactly 0 while the bias gradient is "
            "not, so the input is all 0 (a layer before it that outputs 0, or zero inputs): "
            "its weights cannot learn, whatever reaches it."
        )
    if relu:
        counts = ", ".join(f"{lay.dead_units}/{lay.n_out}" for lay in relu)
        kinds = {ACTIVATIONS[lay.activation] for lay in relu}
        kind = " and ".join(sorted(op.micrograd or op.name for op in kinds if op is not None))
        lines.append(
            f"{_names(relu)}: most {kind} units are dead ({counts} output 0 for every sample, so "
            "no gradient passes through them): lower the learning rate if they died in "
            "training; start biases slightly positive, or use wider layers."
        )
    if stuck:
        counts = ", ".join(f"{lay.dead_units}/{lay.n_out}" for lay in stuck)
        lines.append(
            f"{_names(stuck)}: most units are stuck at one end of their range for every sample "
            f"({counts}; constant output, no gradient): use smaller initial weights (Xavier), "
            "normalise the inputs, or lower the learning rate."
        )

    if d.stalled:
        lines.append(
            f"The network is stuck at the mean prediction: its outputs vary by only "
            f"{fmt(d.output_spread, 2)} across the batch and every gradient is below "
            f"{fmt(AT_REST_RMS)}, so the input no longer reaches the output: try tanh/ReLU, "
            "Xavier/He init, or fewer layers."
        )
        for epoch, snap in snapshots:  # how it got there
            sentence = _vanishing_sentence(snap)
            if sentence:
                lines.append(f"How it began, at {d.unit} {epoch}: {sentence}")
                break
    elif d.at_rest and not _having(d, "NaN", "dead", "zero"):
        lines.append(
            f"Converged: every layer's rms gradient is below {fmt(AT_REST_RMS)} while the outputs "
            "still vary with the input; tiny gradients here are success, not vanishing."
        )

    sentence = _vanishing_sentence(d)
    if sentence:
        lines.append(sentence)

    for layer in _having(d, "saturated"):
        lines.append(
            f"{layer.name}: {round(100 * (layer.saturated or 0))}% of its {layer.activation} "
            f"outputs are saturated (mean slope {fmt(layer.mean_slope, 2)}): use Xavier "
            "init or smaller weights, and normalise the inputs."
        )
    weak = _having(d, "weak")
    if weak and not _having(d, "vanishing"):
        slowest = min(weak, key=lambda lay: lay.below or 1.0)
        share = fmt(slowest.below or 0.0, 2)
        if d.judged_by == "update":
            gets = f"'s weights move {share} as far per step as those of a layer nearer the "
            gets += "output (update:data)"
        else:
            gets = f" gets {share} of the gradient of a layer nearer the output"
        lines.append(f"{_are(weak)} weak: {slowest.name}{gets}, so it learns that much slower.")

    # the last update's size (update:data), when nothing else is wrong
    moved = [u for lay in d.layers if (u := lay.update_data) is not None and 0 < u < math.inf]
    top = max(moved, default=HEALTHY_UPDATE_DATA)  # no update: nothing to say
    usual = HEALTHY_UPDATE_DATA / 100 <= top <= 100 * HEALTHY_UPDATE_DATA
    if not (lines or d.at_rest or usual):  # other problems come first
        far, fix = ("up to", "lower") if top > HEALTHY_UPDATE_DATA else ("at most", "raise")
        lines.append(
            f"The last update moved weights by {far} {fmt(top, 2)} of their size "
            f"(update:data, healthy near {fmt(HEALTHY_UPDATE_DATA)}): {fix} the learning rate."
        )

    if never:
        lines.append(
            f"{_names(never)}: the weights never changed over the recorded {d.unit}s "
            "(update:data 0 each time) though their gradient was not 0 and they are not "
            "frozen: check the optimizer's learning rate and parameter groups."
        )

    if not lines:
        active = [lay for lay in d.layers if not lay.frozen]
        unread = [lay for lay in active if lay.unread]
        # (fewer than two layers compared, where two or more are trained: as where their
        # order in the forward pass was not seen, under torch.compile: nothing was compared)
        compared = len(active) < 2 or sum(lay.compared for lay in active) >= 2
        found = "No NaN, explosion, vanishing or zero gradient"
        if not compared:
            found = "No NaN, explosion or zero gradient"
            first = (
                "no two layers' gradients could be compared (the notes say why), so none was "
                "checked for vanishing or weak gradients"
            )
        elif d.judged_by == "update":
            first = "every layer's weights move at least a tenth as far per step (update:data) "
            first += "as those of the layers after it"
        else:
            first = "every layer gets at least a tenth of the gradient of the layers after it"
        if unread:
            lines.append(
                f"{found}: {first}. Dead and saturated units were not checked for "
                f"{_names(unread)} (not read: {unread[0].unread}), so this is not a clean "
                "bill of health."
            )
        elif not compared:
            lines.append(f"{found}, but {first}: this is not a clean bill of health.")
        else:
            lines.append(f"Healthy: {first}, with no NaN, explosion, dead or saturated layer.")
    return lines


def _set_up_sentences(d: Diagnosis, recorded: list[Diagnosis]) -> list[str]:
    """What the set-up changes in the reading: frozen, unreached, clipped, adaptive."""
    lines = []
    frozen = _having(d, "frozen")
    if frozen:
        lines.append(
            f"{_are(frozen)} frozen (no gradient by design, as when fine-tuning): left out "
            "of the comparisons and of this verdict."
        )
    zero = _having(d, "zero")
    # a layer with gradient on some recorded moments (a branch taken only sometimes)
    fed = {z.name: _moments_with_gradient(z.name, recorded) for z in zero}
    sometimes = [z for z in zero if fed[z.name][0]]
    zero = [z for z in zero if not fed[z.name][0]]
    for layer in sometimes:
        got, seen = fed[layer.name]
        lines.append(
            f"{layer.name} received gradient on {got} of the {seen} recorded {d.unit}s (every "
            f"gradient exactly 0 at {d.unit} {d.epoch}): a branch the forward pass takes "
            "only sometimes, or a loss term that comes and goes, not a layer nothing reaches."
        )
    if zero:
        always = all(
            all(lay.status == "zero" for lay in snap.layers if lay.name in {z.name for z in zero})
            for snap in recorded
        )
        span = f" on every one of the {len(recorded)} recorded {d.unit}s" if always else ""
        lines.append(
            f"{_are(zero)} getting no gradient at all (every gradient exactly 0{span}): "
            "nothing reaches them. Look for dead units (ReLUs that never fire), a detached "
            "tensor, or a loss that does not depend on them."
        )
    if d.clip_scale is not None:
        pairs = [(lay.norm, lay.clipped_from) for lay in d.layers if lay.clipped_from]
        if all(math.isclose(g, d.clip_scale * g0, rel_tol=1e-4) for g, g0 in pairs):
            changed = f"scaled the gradients by ×{fmt(d.clip_scale, 2)}"
        else:  # not one factor: clamped element by element (clip_grad_value_)
            before = math.sqrt(math.fsum(g0 * g0 for _, g0 in pairs))
            after = math.sqrt(math.fsum(g * g for g, _ in pairs))
            changed = f"changed the gradients (‖g‖ from {fmt(before, 3)} to {fmt(after, 3)})"
        lines.append(
            f"Gradient clipping {changed} at {d.unit} {d.epoch}: the table shows them after "
            "clipping, the statuses read them before."
        )
    if d.judged_by == "update":
        lines.append(
            f"Read by update:data (how far each step moves the weights, relative to their size), "
            f"not by the raw gradient: {d.optimizer or 'an adaptive optimizer'} rescales each "
            "gradient, so its size is not what moves the weights."
        )
    return lines


def _moments_with_gradient(name: str, recorded: list[Diagnosis]) -> tuple[int, int]:
    """(on how many recorded moments the layer `name` got a gradient, how many held it)."""
    layers = [lay for snap in recorded for lay in snap.layers if lay.name == name]
    return sum(lay.max_abs > 0 or lay.signal > 0 for lay in layers), len(layers)


def _never_changed(d: Diagnosis, recorded: list[Diagnosis]) -> list[LayerStats]:
    """Layers (not frozen) whose every recorded update was exactly 0 while their weight
    gradient was not (a zero gradient moves nothing, and says so itself)."""
    found = []
    for layer in d.layers:
        if layer.frozen or layer.status == "zero":
            continue
        moments = [
            (lay.update_data, lay.max_abs)
            for snap in recorded
            for lay in snap.layers
            if lay.name == layer.name and lay.update_data is not None
        ]
        if moments and all(u == 0 for u, _ in moments) and any(g > 0 for _, g in moments):
            found.append(layer)
    return found


# Statuses that count when they happened at any recorded moment, not only at the end.
TRANSIENT = ("NaN", "exploding")


def failures(diagnosis: Diagnosis, snapshots: History | None = None) -> dict[str, list[str]]:
    """For `--fail-on`: each status present in the final state, or (NaN, exploding) at
    any recorded moment, with the layers that had it."""
    found: dict[str, list[str]] = {}
    for _, snap in [*(snapshots or []), (None, diagnosis)]:
        last = snap is diagnosis
        for layer in snap.layers:
            if last or layer.status in TRANSIENT:
                names = found.setdefault(layer.status, [])
                if layer.name not in names:
                    names.append(layer.name)
    return found


# -- single parameters ------------------------------------------------------------------


def parameter_grads(samples: Sequence[LayerSample]) -> list[ParamGrad]:
    """Every weight and bias with its gradient, in network order (`L1.N1.w0`, ...,
    `L1.N1.b`): which single weights get the least credit."""
    rows: list[ParamGrad] = []
    for s in samples:
        w, g = np.asarray(s.weights, dtype=float), np.asarray(s.weight_grads, dtype=float)
        for j in range(w.shape[0]):
            unit = f"{s.name}.N{j + 1}"
            rows += [ParamGrad(f"{unit}.w{k}", s.name, w[j, k], g[j, k]) for k in range(w.shape[1])]
            rows.append(ParamGrad(f"{unit}.b", s.name, float(s.biases[j]), float(s.bias_grads[j])))
    return rows
