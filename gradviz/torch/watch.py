"""Watch a PyTorch training loop: per layer, per recorded step, the numbers `gradviz grads`
shows (rms, mean and max |grad|, grad:data, update:data, the activations' mean, std,
slope, saturated and dead fractions, NaN/inf), then the same table, statuses and verdict.

When: the gradients are read once they are final (after `backward()`, clipping and DDP's
all-reduce), in a step pre-hook of the optimizer, or at `rec.step()` without one. The
activations come from forward hooks on the activation modules that follow each layer
(`nn.Sigmoid`, `nn.Tanh`, `nn.ReLU`, and `nn.Softplus`, `nn.LeakyReLU`, `nn.ELU`,
`nn.GELU(approximate="tanh")`, `nn.SiLU` with the parameters of gradviz's op rows, whose
slope comes from the row's derivative at the module's input; a layer with none, or with an
activation gradviz does not know, is read at its own output, as linear, and the table
says so), attached only for the forward passes of steps that are recorded.

Cost: each recorded step runs a few fused kernels (`torch._foreach_norm` over every
weight, one |g| pass per weight for its mean and max, per-unit sums of the activations)
and keeps the results on the device; one check per recorded step says whether anything
is NaN/inf (only then are they counted one by one). A recorded step keeps a few dozen
numbers on the device (per-unit counts are reduced to the totals the statuses read, and
no activation is kept); they become Python floats when read (`table`, `history`, `save`).
Under DistributedDataParallel every rank sees the all-reduced gradients, the activation
sums are summed across ranks, and only rank 0 writes the file.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import torch
import torch.distributed as dist
from rich.console import Console, RenderableType
from torch import nn

from gradviz.errors import InputError
from gradviz.ops import ACTIVATIONS
from gradviz.render.layers import report
from gradviz.run import Run, RunLayer, save_run
from gradviz.stats import (
    Diagnosis,
    History,
    LayerStats,
    assess,
    first_in_order,
    verdict,
)
from gradviz.torch.activations import (
    ACTIVATION_MODULES,
    FROM_OUTPUTS,
    activation_of,
    in_place,
    is_activation,
    torch_slope,
)

DEFAULT_EVERY = 50  # record one step in 50: well under 2% of the training time (bench/)
# The per-layer gradient numbers of one step, in the order of the stacked vector.
_GRAD_FIELDS = ("g_l2", "g_l1", "g_max", "w_l2", "gb_l2", "b_l2")


def _bands() -> dict[str, tuple[tuple[float, float], bool]]:
    """The saturation bands of the op table (gradviz.stats reads the same), for the
    activation modules read here: (band, whether it is one of inputs). A monotone op's
    band is of outputs, a non-monotone one's of inputs (`Op.saturation_input`)."""
    bands = {}
    for name in ACTIVATION_MODULES.values():
        op = ACTIVATIONS[name]
        assert op is not None  # (the op table's rows)
        if op.saturation is not None:
            bands[name] = (op.saturation, False)
        elif op.saturation_input is not None:
            bands[name] = (op.saturation_input, True)
    return bands


def _slopes() -> dict[str, Any]:
    """The derivative, on tensors, of each activation not read off its outputs alone."""
    slopes = {}
    for name in ACTIVATION_MODULES.values():
        op = ACTIVATIONS[name]
        if op is not None and name not in FROM_OUTPUTS:
            slopes[name] = torch_slope(op)
    return slopes


@dataclass
class _Layer:
    """A module with a weight matrix (`nn.Linear`, `nn.Conv2d`, ...), and where its
    activations are read: `reads` (its activation module, or itself)."""

    name: str
    module: nn.Module
    reads: nn.Module
    activation: str = "linear"
    activation_module: str | None = None
    unknown: str | None = None  # an activation after it gradviz cannot read: why, in words

    @property
    def n_out(self) -> int:
        return int(self.module.weight.shape[0])  # type: ignore[union-attr]


@dataclass
class _Activations:
    """One module's output summed over the forward passes of a recorded step, per unit:
    rows, Σa, Σa², and the counts the activation's statuses need (ReLU: units above 0;
    sigmoid/tanh: below and above the saturation band), kept on the device."""

    rows: int = 0
    sums: list[torch.Tensor] = field(default_factory=list)  # Σa, Σa², Σ|a|, counts...
    outputs: list[torch.Tensor] = field(default_factory=list)  # for exact NaN counts


@dataclass
class _Pending:
    step: int
    grads: torch.Tensor  # 6 numbers per layer (_GRAD_FIELDS), float64
    activations: list[_Activations | None]
    updates: torch.Tensor | None = None  # ‖Δw‖ per layer, after the optimizer's step
    nonfinite: list[tuple[int, str | None]] | None = None  # (count, first quantity) per layer


def _layers_of(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """The modules with a weight of 2 or more dimensions, by their PyTorch names."""
    found = []
    for name, module in model.named_modules():
        weight = getattr(module, "weight", None)
        if isinstance(weight, nn.Parameter) and weight.dim() >= 2:
            found.append((name, module))
    return found


def _unwrapped(model: nn.Module) -> nn.Module:
    """The model inside DistributedDataParallel (or DataParallel): its names, not `module.`."""
    if isinstance(model, nn.parallel.DistributedDataParallel | nn.DataParallel):
        return model.module
    return model


def _distributed() -> tuple[int, int]:
    """(rank, world size), (0, 1) outside torch.distributed."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


class Recorder:
    """What `watch` returns: records the gradients at each optimizer step (or `step()`),
    `log` adds the curves, `table` prints gradviz's per-layer table and verdict, `save`
    writes a run file that `gradviz inspect` and `gradviz grads` read."""

    def __init__(
        self,
        model: nn.Module,
        every: int = DEFAULT_EVERY,
        optimizer: torch.optim.Optimizer | None = None,
        *,
        manual: bool = False,
    ) -> None:
        if not isinstance(model, nn.Module):
            raise InputError(f"watch: expected a torch.nn.Module, got {type(model).__name__}")
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise InputError(f"watch: every must be a whole number ≥ 1, got {every!r}")
        base = _unwrapped(model)
        found = _layers_of(base)
        if not found:
            raise InputError(f"watch: {type(base).__name__} has no layer with a weight matrix")
        self.model_name = type(base).__name__
        self.every = every
        self.steps = 0  # optimizer steps taken (or step() calls)
        self._layers = [_Layer(name or type(m).__name__, m, m) for name, m in found]
        self._activation_of, self._unknown = self._activation_modules(base)
        self._mapped = False  # the activation module of each layer: found at the first forward
        self._units: dict[nn.Module, int] = {}  # (once mapped) units of each module read
        self._output_reads: nn.Module | None = None
        self._called: list[nn.Module] = []
        self._acts: dict[nn.Module, _Activations] = {}
        self._hooks: list[Any] = []
        self._pending: list[_Pending] = []
        self._history: History = []
        self._curves: list[tuple[int, object, object]] = []
        self._optimizer = optimizer
        self._before: list[torch.Tensor] | None = None  # a buffer kept between steps
        self._moving = False  # a recorded step's update is under way
        self._magnitudes: list[torch.Tensor] | None = None  # |g| buffers, kept between steps
        self._last: _Pending | None = None
        self._bands = _bands()
        self._slopes = _slopes()
        self._optimizer_hooks = []
        if optimizer is not None:
            self._optimizer_hooks = [
                optimizer.register_step_pre_hook(lambda *_: self._record()),
                optimizer.register_step_post_hook(lambda *_: self._after_step()),
            ]
        self._arm()  # step 0 is recorded

    # -- hooks -----------------------------------------------------------------------

    @staticmethod
    def _activation_modules(base: nn.Module) -> tuple[dict[nn.Module, str], dict[nn.Module, str]]:
        """The activation modules gradviz reads (by op name), and the others (what the
        note says of them)."""
        known, unknown = {}, {}
        for m in base.modules():
            kind = activation_of(m)
            if kind is not None and kind not in FROM_OUTPUTS and in_place(m):
                unknown[m] = f"({m!r}) works in place, its input gone before it is read"
            elif kind is not None:
                known[m] = kind
            elif is_activation(m):
                unknown[m] = f"({m!r}) is unknown to gradviz"
        return known, unknown

    def _arm(self) -> None:
        """Attach the forward hooks for the next recorded step."""
        if self._mapped:
            watched = {layer.reads for layer in self._layers}
        else:  # the first time: every layer and activation module, to learn the call order
            watched = {layer.module for layer in self._layers}
            watched |= set(self._activation_of) | set(self._unknown)
        self._hooks = [m.register_forward_hook(self._observe) for m in watched]

    def _disarm(self) -> None:
        for hook in self._hooks:
            hook.remove()
        self._hooks = []

    def _observe(self, module: nn.Module, inputs: object, output: object) -> None:
        if not isinstance(output, torch.Tensor):
            return
        if not self._mapped:
            self._called.append(module)
            if module in self._unknown:
                return  # (only where it is called: its layer is read at its own output)
            units = self._units_while_mapping(module)
            per_unit = True  # the output layer is not known yet: the full form for all
        else:
            units = self._units.get(module)
            per_unit = module is self._output_reads
        if units is None or output.dim() == 0:
            return
        a = _units_last(output.detach(), units)
        if a is None:
            return
        kind = self._activation_of.get(module, "linear")
        slope = self._slopes.get(kind)
        x = None  # the activation's input, where its slope or band needs it
        if slope is not None:
            first = inputs[0] if isinstance(inputs, tuple) and inputs else None
            x = _units_last(first.detach(), units) if isinstance(first, torch.Tensor) else None
            if x is None or x.shape != a.shape:
                return
        # (sums in the activations' own precision: a float64 copy of them would cost more)
        if per_unit:  # Σa, Σa² per unit (the outputs' spread), and Σ|a| (their scale)
            sums = [a.sum(0), (a * a).sum(0), a.abs().sum()]
        else:  # Σa, Σa² (= ‖a‖²) over every entry: a hidden layer's mean and std
            flat = a.reshape(-1)
            sums = [flat.sum(), torch.dot(flat, flat)]
        if kind == "relu":
            sums.append(torch.count_nonzero(a, dim=0))  # (a ReLU's output is ≥ 0)
        if (
            x is not None
        ):  # Σ|slope| from the op row, at the inputs (a non-monotone op dips below 0)
            sums.append(slope(a, x).abs().sum())  # type: ignore[misc]
        if kind in self._bands:
            (low, high), of_inputs = self._bands[kind]
            v = x if of_inputs else a
            sums += [(v < low).sum(0), (v > high).sum(0)]  # type: ignore[operator]
        acc = self._acts.get(module)
        if acc is None:
            self._acts[module] = _Activations(a.shape[0], sums, [a])
        else:  # another forward pass in the same step (gradient accumulation)
            acc.rows += a.shape[0]
            acc.sums = [x + y for x, y in zip(acc.sums, sums, strict=True)]
            acc.outputs.append(a)

    def _units_while_mapping(self, module: nn.Module) -> int | None:
        """The units of a module's output before the layers are mapped: a layer's own, an
        activation module's those of the layer called just before it."""
        for layer in self._layers:
            if layer.module is module:
                return layer.n_out
        last = next(
            (
                m
                for m in reversed(self._called[:-1])
                if m not in self._activation_of and m not in self._unknown
            ),
            None,
        )
        return next((lay.n_out for lay in self._layers if lay.module is last), None)

    def _map(self) -> None:
        """Each layer's activation module: the first activation module called after it
        and before the next layer (none: the layer is read at its own output, as linear).
        The output layer is the last layer called."""
        by_module = {layer.module: layer for layer in self._layers}
        order: list[_Layer] = []
        for i, module in enumerate(self._called):
            layer = by_module.get(module)
            if layer is None or layer in order:
                continue
            order.append(layer)
            following = next(
                (
                    m
                    for m in self._called[i + 1 :]
                    if m in by_module or m in self._activation_of or m in self._unknown
                ),
                None,
            )
            if following in self._activation_of:
                layer.reads = following
                layer.activation = self._activation_of[following]
                layer.activation_module = type(following).__name__
            elif following in self._unknown:
                layer.unknown = self._unknown[following]
        # layers never called stay, in module order, after the ones that were
        order += [layer for layer in self._layers if layer not in order]
        self._layers = order
        self._units = {layer.reads: layer.n_out for layer in self._layers}
        self._output_reads = self._layers[-1].reads
        self._mapped = True

    # -- recording ---------------------------------------------------------------------

    def step(self) -> None:
        """Record now (once the gradients are final), when no optimizer was given."""
        if self._optimizer is not None:
            raise InputError("this recorder records at optimizer.step(); step() is not needed")
        self._record()

    def _record(self) -> None:
        step = self.steps
        if step % self.every == 0:
            mapped = self._mapped
            if not mapped:
                self._map()
            with torch.no_grad():
                self._last = self._measure(step)
                self._pending.append(self._last)
                if self._optimizer is not None:  # the weights before the step (update:data)
                    weights = [layer.module.weight.detach() for layer in self._layers]
                    if self._before is None:
                        self._before = [w.clone() for w in weights]
                    else:
                        torch._foreach_copy_(self._before, weights)
                    self._moving = True
            if not (mapped and self.every == 1):  # every step recorded: the hooks stay
                self._disarm()
            self._acts = {}
        self.steps += 1
        if self.steps % self.every == 0 and not self._hooks:
            self._arm()

    def _after_step(self) -> None:
        """After the optimizer's step: how far it moved each layer's weights."""
        if not self._moving or self._before is None or self._last is None:
            return
        with torch.no_grad():
            weights = [layer.module.weight.detach() for layer in self._layers]
            torch._foreach_sub_(self._before, weights)  # (in place: the buffer is copied anew)
            self._last.updates = torch.stack(torch._foreach_norm(self._before)).to(torch.float64)
        self._moving = False

    def _measure(self, step: int) -> _Pending:
        weights = [layer.module.weight.detach() for layer in self._layers]
        grads = [
            w.grad.detach() if w.grad is not None else torch.zeros_like(w)
            for w in (layer.module.weight for layer in self._layers)
        ]
        biases = [getattr(layer.module, "bias", None) for layer in self._layers]
        with_bias = [isinstance(b, torch.Tensor) for b in biases]
        bias_tensors = [b.detach() for b in biases if isinstance(b, torch.Tensor)]
        bias_grads = [
            b.grad.detach() if b.grad is not None else torch.zeros_like(b)
            for b in biases
            if isinstance(b, torch.Tensor)
        ]
        # |g| into buffers kept between steps: a fresh megabyte each step would cost more
        # (new pages) than the sums over it
        if self._magnitudes is None or any(
            m.shape != g.shape or m.dtype != g.dtype
            for m, g in zip(self._magnitudes, grads, strict=False)
        ):
            self._magnitudes = [torch.empty_like(g) for g in grads]
        magnitudes = self._magnitudes
        for g, m in zip(grads, magnitudes, strict=True):
            torch.abs(g, out=m)
        # one fused norm over every gradient, weight and bias (‖·‖₂ of each)
        norms = torch._foreach_norm([*grads, *weights, *bias_grads, *bias_tensors])
        n, nb = len(grads), len(bias_tensors)
        zero = norms[0].new_zeros(())
        present = iter(range(nb))
        slots = [next(present) if has else None for has in with_bias]
        parts = [
            *norms[:n],
            *(m.sum() for m in magnitudes),
            *torch._foreach_max(magnitudes),
            *norms[n : 2 * n],
            *(zero if k is None else norms[2 * n + k] for k in slots),
            *(zero if k is None else norms[2 * n + nb + k] for k in slots),
        ]
        vector = torch.stack(parts).to(torch.float64)
        acts = [self._acts.get(layer.reads) for layer in self._layers]
        self._reduce(acts)
        pending = _Pending(step, vector, acts)
        # one check for the whole step (a sum holding a NaN or inf is not finite); only
        # then is anything counted one tensor at a time
        sums = [x if x.dim() == 0 else x.sum() for a in acts if a is not None for x in a.sums[:2]]
        finite = torch.isfinite(vector).all()
        if sums:
            finite &= torch.isfinite(torch.stack(sums)).all()
        if not bool(finite):
            pending.nonfinite = self._count_nonfinite(weights, grads, biases, acts)
        for layer, acc in zip(self._layers, acts, strict=True):
            if acc is not None:
                self._compact(layer, acc)
        return pending

    def _compact(self, layer: _Layer, acc: _Activations) -> None:
        """A hidden layer's per-unit counts as the totals the statuses read (so that a
        recorded step keeps a few numbers, not a few per unit), and no outputs kept."""
        acc.outputs = []
        if layer.reads is self._output_reads:
            return
        kind = layer.activation
        if kind == "relu":
            positive = acc.sums[-1]
            acc.sums[-1:] = [positive.sum(), (positive == 0).sum()]
        elif kind in self._bands:
            low, high = acc.sums[-2:]
            stuck = ((low == acc.rows) | (high == acc.rows)).sum()
            acc.sums[-2:] = [low.sum(), high.sum(), stuck]

    def _reduce(self, acts: list[_Activations | None]) -> None:
        """Under torch.distributed: the activation sums of every rank, added (in place)."""
        if _distributed()[1] == 1:
            return
        present = [a for a in acts if a is not None]
        if not present:
            return
        flat = torch.cat(
            [torch.tensor([float(a.rows)], dtype=torch.float64) for a in present]
            + [s.to(torch.float64).reshape(-1) for a in present for s in a.sums]
        )
        dist.all_reduce(flat)
        rows, rest = flat[: len(present)], flat[len(present) :]
        offset = 0
        for i, a in enumerate(present):
            a.rows = round(float(rows[i]))
            reduced = []
            for s in a.sums:
                reduced.append(rest[offset : offset + s.numel()].reshape(s.shape).to(s.dtype))
                offset += s.numel()
            a.sums = reduced

    def _count_nonfinite(
        self,
        weights: Sequence[torch.Tensor],
        grads: Sequence[torch.Tensor],
        biases: Sequence[torch.Tensor | None],
        acts: Sequence[_Activations | None],
    ) -> list[tuple[int, str | None]]:
        """The rare path: NaN/inf counted one tensor at a time, and the first quantity
        holding one, in the order the computation makes them (stats' `_QUANTITIES`)."""

        def bad(t: torch.Tensor | None) -> int:
            return 0 if t is None else int((~torch.isfinite(t)).sum())

        out = []
        for layer, w, g, b, a in zip(self._layers, weights, grads, biases, acts, strict=True):
            read = "activations" if layer.reads is not layer.module else "pre-activations"
            counts = [
                ("weights", bad(w)),
                ("biases", bad(None if b is None else b.detach())),
                (read, sum(bad(x) for x in (a.outputs if a else []))),
                ("gradients", bad(g) + bad(None if b is None or b.grad is None else b.grad)),
            ]
            total = sum(n for _, n in counts)
            out.append((total, next((what for what, n in counts if n), None)))
        return out

    # -- reading -----------------------------------------------------------------------

    def log(self, loss: object = None, accuracy: object = None) -> None:
        """Add a point to the curves (a float or a tensor: kept as it is until read, so
        logging every step costs no device sync)."""
        keep = [v.detach() if isinstance(v, torch.Tensor) else v for v in (loss, accuracy)]
        self._curves.append((self.steps, keep[0], keep[1]))

    def _flush(self) -> None:
        """The recorded steps waiting on the device, as (step, Diagnosis)."""
        for pending in self._pending:
            self._history.append((pending.step, self._diagnosis(pending)))
        self._pending = []

    def history(self) -> History:
        """Every recorded step's statistics, as (step, Diagnosis)."""
        self._flush()
        return list(self._history)

    def diagnosis(self) -> Diagnosis:
        """The latest recorded step's statistics (an InputError before any is recorded)."""
        history = self.history()
        if not history:
            raise InputError("watch: nothing recorded yet (no optimizer step, no rec.step())")
        return history[-1][1]

    def _diagnosis(self, pending: _Pending) -> Diagnosis:
        n = len(self._layers)
        values = pending.grads.tolist()
        columns = {name: values[i * n : (i + 1) * n] for i, name in enumerate(_GRAD_FIELDS)}
        updates = pending.updates.tolist() if pending.updates is not None else [None] * n
        counts = pending.nonfinite or [(0, None)] * n
        layers = []
        output = (math.nan, 1.0)
        for i, (layer, acts) in enumerate(zip(self._layers, pending.activations, strict=True)):
            stats = self._layer_stats(i, layer, acts, columns, updates[i], counts[i])
            layers.append(stats)
            if i == n - 1:
                output = self._spread(acts)
        deltas = [  # ‖δ‖ of each layer: its bias gradient's norm (unknown without a bias)
            columns["gb_l2"][i]
            if isinstance(getattr(lay.module, "bias", None), torch.Tensor)
            else math.nan
            for i, lay in enumerate(self._layers)
        ]
        first = first_in_order([(lay.index, lay.nonfinite_in) for lay in layers])
        batch = layers[-1].batch
        return assess(layers, output[0], output[1], batch, first, pending.step, deltas, None)

    def _layer_stats(
        self,
        i: int,
        layer: _Layer,
        acts: _Activations | None,
        columns: dict[str, list[float]],
        update: float | None,
        nonfinite: tuple[int, str | None],
    ) -> LayerStats:
        weight = layer.module.weight
        size, n_out = weight.numel(), layer.n_out
        g_l2, w_l2 = columns["g_l2"][i], columns["w_l2"][i]
        bias = getattr(layer.module, "bias", None)
        n_bias = bias.numel() if isinstance(bias, torch.Tensor) else 0
        act = self._activation_numbers(layer, acts)
        return LayerStats(
            index=i + 1,
            name=layer.name,
            activation=layer.activation,
            is_output=i == len(self._layers) - 1,
            n_in=size // n_out,
            n_out=n_out,
            n_params=size + n_bias,
            batch=act["batch"],
            mean_abs=columns["g_l1"][i] / size,
            max_abs=columns["g_max"][i],
            rms=g_l2 / math.sqrt(size),
            norm=g_l2,
            signal=columns["gb_l2"][i] / math.sqrt(n_bias) if n_bias else math.nan,
            rel=None,
            below=None,
            growth=1.0,
            hop=None,
            hop_bound=None,
            grad_data=_ratio(g_l2, w_l2),
            update_data=None if update is None else _ratio(update, w_l2),
            act_mean=act["mean"],
            act_std=act["std"],
            mean_slope=act["slope"],
            saturated=act["saturated"],
            dead=act["dead_units"] / n_out,
            dead_units=act["dead_units"],
            nonfinite=nonfinite[0],
            nonfinite_in=nonfinite[1],
        )

    def _activation_numbers(self, layer: _Layer, acts: _Activations | None) -> dict[str, Any]:
        """mean, std, slope, saturated, dead units of the activations read for `layer`,
        from the per-unit sums (σ′ = σ − σ², tanh′ = 1 − a², ReLU′ = [a > 0], the others'
        Σ|slope| from their op row)."""
        kind = layer.activation
        if acts is None or acts.rows == 0:
            nan = math.nan
            return {"batch": 0, "mean": nan, "std": nan, "slope": nan, "saturated": None,
                    "dead_units": 0}  # fmt: skip
        sums = [s.tolist() for s in acts.sums]
        rows, n_out = acts.rows, layer.n_out
        total = rows * n_out
        mean, square = _total(sums[0]) / total, _total(sums[1]) / total
        numbers: dict[str, Any] = {
            "batch": rows,
            "mean": mean,
            "std": math.sqrt(max(square - mean * mean, 0.0)),
            "slope": 1.0,
            "saturated": None,
            "dead_units": 0,
        }
        hidden = layer is not self._layers[-1]
        if kind == "relu":  # hidden: Σ[a > 0], dead units; the output: [a > 0] per unit
            if hidden:
                positive, dead = sums[-2], sums[-1]
            else:
                positive, dead = _total(sums[-1]), sum(1 for c in sums[-1] if c == 0)
            numbers["slope"] = positive / total
            numbers["dead_units"] = int(dead)
            return numbers
        band = kind in self._bands
        after = (3 if hidden else 2) if band else 0  # the band's counts, after Σ|slope|
        if kind in self._slopes:  # Σ|slope| from the op row, at the inputs
            numbers["slope"] = sums[-1 - after] / total
        elif kind in ("sigmoid", "tanh"):  # σ′ = σ − σ², tanh′ = 1 − a²: from Σa and Σa²
            numbers["slope"] = (mean - square) if kind == "sigmoid" else 1.0 - square
        if band:  # hidden: Σ low, Σ high, stuck units; the output per unit
            low, high = (sums[-3], sums[-2]) if hidden else (_total(sums[-2]), _total(sums[-1]))
            numbers["saturated"] = (low + high) / total
            if hidden:
                numbers["dead_units"] = int(sums[-1])
        return numbers

    @staticmethod
    def _spread(acts: _Activations | None) -> tuple[float, float]:
        """The outputs' largest std across the batch (over units), and max(1, mean |a|)."""
        if acts is None or acts.rows == 0:
            return 0.0, 1.0
        rows = acts.rows
        first, second, magnitude = (s.tolist() for s in acts.sums[:3])
        if not isinstance(first, list):  # (not read per unit: no spread to tell)
            return 0.0, 1.0
        spread = max(
            math.sqrt(max(s2 / rows - (s1 / rows) ** 2, 0.0))
            for s1, s2 in zip(first, second, strict=True)
        )
        return spread, max(1.0, magnitude / (rows * len(first)))

    # -- showing and saving ------------------------------------------------------------

    def curves(self) -> tuple[list[int], list[float | None], list[float | None]]:
        """(step, loss, accuracy) of every `log` call, as Python numbers."""

        def number(v: object) -> float | None:
            if v is None:
                return None
            return float(v.item()) if isinstance(v, torch.Tensor) else float(v)  # type: ignore[arg-type]

        steps = [s for s, _, _ in self._curves]
        return steps, [number(v) for _, v, _ in self._curves], [number(a) for *_, a in self._curves]

    def run(self) -> Run:
        """What was recorded, as a run (`gradviz.run`): what `save` writes."""
        history = self.history()
        if not history:
            raise InputError("watch: nothing recorded yet (no optimizer step, no rec.step())")
        steps, loss, accuracy = self.curves()
        layers = [
            RunLayer(
                lay.name,
                type(lay.module).__name__,
                tuple(lay.module.weight.shape),
                lay.activation,
                lay.activation_module,
            )
            for lay in self._layers
        ]
        return Run(
            layers=layers,
            history=history,
            steps_run=self.steps,
            every=self.every,
            curve_steps=steps,
            loss=loss,
            accuracy=accuracy,
            framework=f"PyTorch {torch.__version__.split('+')[0]}",
            model=self.model_name,
            world_size=_distributed()[1],
        )

    def report(self, title: str | None = None) -> RenderableType:
        """The table, the heat map over recorded steps and the verdict, as a rich
        renderable (what `table` prints)."""
        history = self.history()
        diagnosis = self.diagnosis()
        title = title or f"Gradients per layer: {self.model_name} at step {history[-1][0]}"
        return report(diagnosis, verdict(diagnosis, history) + self.notes(), history, title=title)

    def notes(self) -> list[str]:
        """One line per layer followed by an activation gradviz does not know: its
        statistics are those of the layer's own output, read as linear."""
        return [
            f"the activation after layer {layer.name} {layer.unknown}: its row is read at the "
            "layer's output, as linear (slope 1, no saturation)"
            for layer in self._layers
            if layer.unknown is not None
        ]

    def table(self, file: TextIO | None = None, width: int | None = None) -> None:
        """Print the per-layer table, the heat map and the verdict (as `gradviz grads`)."""
        console = Console(file=file or sys.stdout, width=width)
        console.print(self.report())

    def save(self, path: str | Path) -> None:
        """Write the run as JSON (atomically) for `gradviz inspect` and `gradviz grads`;
        under torch.distributed, only rank 0 writes."""
        run = self.run()
        if _distributed()[0] == 0:
            save_run(run, path)

    def close(self) -> None:
        """Detach every hook: the model and the optimizer run as if never watched."""
        self._disarm()
        for hook in self._optimizer_hooks:
            hook.remove()
        self._optimizer_hooks = []


def _units_last(t: torch.Tensor, units: int) -> torch.Tensor | None:
    """`t` as rows of `units` (channels first, as convolutions make them, moved last), or
    None if it has no axis of that size."""
    if t.dim() == 0:
        return None
    if t.shape[-1] != units and t.dim() >= 2 and t.shape[1] == units:
        t = t.movedim(1, -1)
    return t.reshape(-1, units) if t.shape[-1] == units else None


def _total(x: float | list[float]) -> float:
    """A sum kept whole or per unit, whole."""
    return math.fsum(x) if isinstance(x, list) else x


def _ratio(top: float, bottom: float) -> float | None:
    if not (math.isfinite(top) and math.isfinite(bottom)) or bottom == 0:
        return None
    return top / bottom


def watch(
    model: nn.Module,
    every: int = DEFAULT_EVERY,
    optimizer: torch.optim.Optimizer | None = None,
    *,
    manual: bool = False,
) -> Recorder:
    """Record `model`'s gradients layer by layer at every `every`-th step: at
    `optimizer.step()` when the optimizer is given (after clipping and DDP's all-reduce),
    else at each `rec.step()` (`manual=True`: only there, for callbacks that choose the
    moment). See `Recorder`."""
    return Recorder(model, every, optimizer, manual=manual)
