"""What gradviz measures, as data: a layer's statistics and the network's diagnosis
(filled by `gradviz.stats`), the steps of a backward pass (`gradviz.tracing`), a gradient
check's rows (`gradviz.checking`). Nothing here computes: `gradviz.render` draws these."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Literal

from gradviz.numbers import json_number, json_safe

if TYPE_CHECKING:
    from pathlib import Path

    from gradviz.engine import Number, Value

# The fields of a LayerStats only a recorder fills: left out of its dict at their default.
LAYER_OPTIONAL = ("unread", "clipped_from", "frozen", "compared", "grad_data_moot")

# -- gradient statistics --------------------------------------------------------------


@dataclass(kw_only=True)
class LayerStats:
    """The numbers of one layer's row. `None` means "does not apply here" (the output
    layer has no hop, a layer at initialisation has no update), never zero. The fields
    from `rel` to `hop_bound` compare the layer with the others: `stats.assess` fills them."""

    index: int
    name: str
    activation: str
    is_output: bool
    n_in: int
    n_out: int
    n_params: int
    batch: int
    mean_abs: float  # of the weight gradients
    max_abs: float
    rms: float
    norm: float  # ‖g‖₂ over the weight gradients
    signal: float  # rms of the bias gradients: the backpropagated signal δ
    rel: float | None = None  # rms / the largest layer's rms
    below: float | None = None  # rms / the largest rms of a layer nearer the output
    growth: float = 1.0  # rms / the output layer's rms
    hop: float | None = None  # ‖δ here‖ / ‖δ of the next layer‖
    hop_bound: float | None = None  # max slope here × ‖W of the next layer‖₂

    grad_data: float | None  # ‖g‖ / ‖w‖
    update_data: float | None  # ‖Δw‖ / ‖w‖ for the last update
    act_mean: float
    act_std: float
    mean_slope: float
    saturated: float | None  # fraction of outputs saturated (sigmoid/tanh only)
    dead: float  # fraction of units inactive for the whole batch
    dead_units: int
    nonfinite: int
    nonfinite_in: str | None  # the first quantity holding a NaN/inf
    status: str = "ok"
    reason: str = ""
    unread: str | None = None  # what could not be read here (its numbers are NaN)
    clipped_from: float | None = None  # ‖g‖ before clipping scaled it
    frozen: bool = False  # no gradient by design (requires_grad off, or in no optimizer)
    # False: not compared with the other layers (a norm's gain and shift, whose size says
    # nothing of a weight matrix's; or rows whose forward order was not seen)
    compared: bool = True
    # True: grad:data says nothing of explosion here (an adaptive optimizer rescales the
    # gradient, or the weights are near zero, as a zero-initialised one's): `assess` fills it
    grad_data_moot: bool = False

    def to_dict(self) -> dict:
        """Plain JSON types; NaN and infinities as the strings "nan", "inf", "-inf". The
        fields only a recorder fills are left out where they do not apply."""
        data = asdict(self)
        for key in LAYER_OPTIONAL:
            if data[key] == (key == "compared"):  # (at its default: left out)
                del data[key]
        return json_safe(data)  # type: ignore[return-value]

    @property
    def activations_unread(self) -> bool:
        """Whether a recorder could not read its activations (`unread` says why)."""
        return self.unread is not None and self.unread.startswith("activations")

    @property
    def activation_shown(self) -> str:
        """Its activation as tables and plots name it: "?" where it was not read, not a
        name that looks measured ("linear" is a recorder's placeholder there)."""
        return "?" if self.activations_unread else self.activation


@dataclass
class Diagnosis:
    """Every layer's statistics at one moment, with what holds for the whole network."""

    layers: list[LayerStats]
    at_rest: bool  # every rms gradient below AT_REST_RMS
    output_spread: float  # std of the outputs across the batch (largest over units)
    stalled: bool
    first_nonfinite: tuple[int, str] | None = None  # (layer index, quantity)
    epoch: int | None = None
    unit: str = "epoch"  # what `epoch` counts: an epoch, or a recorded run's optimizer step
    judged_by: str = "gradient"  # or "update": update:data, under an adaptive optimizer
    optimizer: str | None = None  # the optimizer's class, where known
    clip_scale: float | None = None  # the factor clipping scaled the gradients by

    def to_dict(self) -> dict:
        first = self.first_nonfinite
        data = {
            "epoch": self.epoch,
            "at_rest": self.at_rest,
            "stalled": self.stalled,
            "output_spread": json_number(self.output_spread),
            "first_nonfinite": None if first is None else {"layer": first[0], "in": first[1]},
            "layers": [layer.to_dict() for layer in self.layers],
        }
        usual = {f.name: f.default for f in fields(self)}
        for key in ("unit", "judged_by", "optimizer", "clip_scale"):  # each when not usual
            if getattr(self, key) != usual[key]:
                data[key] = getattr(self, key)
        return data


History = list[tuple[int, Diagnosis]]


def series(snapshots: History) -> tuple[list[int], list[str], list[list[float]]]:
    """(epochs, layer names, rms gradient per layer over time) for heat maps and plots;
    NaN wherever the layer held a NaN/inf at that moment."""
    if not snapshots:
        return [], [], []
    names = [layer.name for layer in snapshots[-1][1].layers]
    epochs = [epoch for epoch, _ in snapshots]
    rows = [
        [
            d.layers[i].rms if i < len(d.layers) and not d.layers[i].nonfinite else math.nan
            for _, d in snapshots
        ]
        for i in range(len(names))
    ]
    return epochs, names, rows


@dataclass(frozen=True)
class ParamGrad:
    """One parameter's value and gradient, named as the network names it."""

    name: str
    layer: str
    value: float
    grad: float


# -- a recorded run (gradviz.torch.watch) ------------------------------------------


@dataclass(frozen=True)
class RunLayer:
    """One recorded layer: its module's name and class, its weight's shape, and the
    activation its statistics were read after (`activation_module`: the module's class,
    or None when the layer's own output was read)."""

    name: str
    kind: str
    shape: tuple[int, ...]
    activation: str
    activation_module: str | None = None
    params: tuple[str, ...] = ()  # the parameters in the row, by qualified name

    def to_dict(self) -> dict:
        return asdict(self) | {"shape": list(self.shape), "params": list(self.params)}


@dataclass
class Run:
    """A recorded training run: its layers, the statistics at recorded steps (`history`,
    as (step, Diagnosis)), the logged curves (one entry per `log` call: its step, the
    loss, the accuracy or None), and where it came from (`framework`, `model`)."""

    layers: list[RunLayer]
    history: History
    steps_run: int
    every: int
    curve_steps: list[int] = field(default_factory=list)
    loss: list[float | None] = field(default_factory=list)
    accuracy: list[float | None] = field(default_factory=list)
    framework: str = "pytorch"
    model: str = ""
    world_size: int = 1
    notes: list[str] = field(default_factory=list)  # what the recorder read and did not
    source: Path | None = None

    def diagnosis(self) -> Diagnosis:
        """The latest recorded statistics."""
        return self.history[-1][1]

    @property
    def last_step(self) -> int:
        return self.history[-1][0]

    def curves(self) -> tuple[list[float], list[float], int]:
        """(loss, accuracy, every) as `Model.curves` gives them, for the same plots and
        sparklines: the logged points, `every` the steps between two of them (1 when they
        are not evenly spaced); NaN where a point was not logged."""
        steps = self.curve_steps
        gaps = {b - a for a, b in itertools.pairwise(steps)}
        every = gaps.pop() if len(gaps) == 1 and min(steps) >= 0 else 1
        loss = [float("nan") if v is None else v for v in self.loss]
        accuracy = [float("nan") if v is None else v for v in self.accuracy]
        return loss, accuracy, max(1, every)

    def description(self) -> str:
        """When and where it was recorded, in words, for titles."""
        ranks = f", {self.world_size} processes" if self.world_size > 1 else ""
        return (
            f"recorded in {self.framework} ({self.model or 'a model'}{ranks}) at step "
            f"{self.last_step} of {self.steps_run}"
        )


# -- the backward pass, step by step ----------------------------------------------


@dataclass(frozen=True, slots=True)
class Contribution:
    """The credit one node passes to one input (an edge of the backward pass): `formula` in
    the op's terms (`∂(a·b)/∂a = b`), `named_formula` in the graph's (`∂(d·f)/∂d = f`),
    `local_text` its right-hand side; `amount` = credit · `local` takes the input's total
    from `before` to `total` after `earlier` contributions; `passes` is False at a detach."""

    parent: Value
    parent_name: str
    position: int  # 0 for the op's first input `a`, 1 for `b`
    formula: str
    named_formula: str
    local_text: str
    local: Number
    amount: Number
    before: Number
    total: Number
    earlier: int
    passes: bool = True


@dataclass(frozen=True, slots=True)
class Source:
    """One piece of a node's credit: which consumer sent it, and how much."""

    consumer: Value
    consumer_name: str
    position: int
    amount: Number


@dataclass(frozen=True, slots=True)
class Step:
    """One node of the backward pass once its credit dL/dnode is complete: the sum of
    `sources` (one per use: `x*x + x` gives x three), passed on as `contributions`."""

    index: int  # 0-based position in the backward pass
    node: Value
    name: str
    definition: str | None  # "d·f" for L = d·f; None for a leaf
    credit: Number
    sources: tuple[Source, ...]
    contributions: tuple[Contribution, ...]
    is_output: bool = False

    @property
    def is_leaf(self) -> bool:
        return self.node.op is None

    @property
    def stops_credit(self) -> bool:
        """True at a `detach`: the credit arrives and goes no further."""
        return self.node.op is not None and not self.node.op.passes_credit


@dataclass(frozen=True, slots=True)
class ForwardStep:
    """One node of the forward pass: its name, how it is computed, and its value."""

    index: int
    node: Value
    name: str
    definition: str | None  # None for a leaf
    data: Number


@dataclass(frozen=True, slots=True)
class LeafGradient:
    """A leaf's gradient with one sentence in plain words about what it means."""

    leaf: Value
    name: str
    data: Number
    grad: Number
    reached: bool  # False when every path to the output runs through detach
    sentence: str


@dataclass(frozen=True, slots=True)
class Passed:
    """Credit sent back to one input of a unit: dL/dz · w (for a layer: all it sent)."""

    to: str
    weight: Number | None
    amount: Number
    total: Number  # the input's credit so far
    earlier: int  # contributions it had received before this one


@dataclass(frozen=True, slots=True)
class UnitStep:
    """One neuron, layer, the loss or the inputs in a network's backward pass. Tuples hold
    one entry per neuron: `credit` dL/da, `local` act'(z), `credit_z` dL/dz, the grads;
    `ids` are the step's node ids in `gradviz.drawn.network_diagram`."""

    index: int
    kind: str  # "loss", "neuron", "layer", "inputs"
    name: str
    ids: tuple[str, ...]
    activation: str | None
    credit: tuple[Number, ...]
    sources: tuple[tuple[tuple[str, Number], ...], ...]  # per unit: (sender, amount)
    z: tuple[Number, ...] = ()
    local: tuple[Number, ...] = ()
    credit_z: tuple[Number, ...] = ()
    bias_grads: tuple[Number, ...] = ()
    weight_grads: tuple[tuple[Number, ...], ...] = ()
    passed: tuple[Passed, ...] = ()
    formula: str = ""


# -- a gradient check --------------------------------------------------------------

Status = Literal["pass", "fail", "non-differentiable", "non-finite", "detached"]


@dataclass(frozen=True, slots=True)
class Row:
    """One leaf compared: the backward pass's gradient and the measured one. `noise` (the
    estimate's rounding noise) plus `truncation` (|D(h/2) − D(h)| / 3) bound an absolute
    error that passes even when the relative one is large (a true 0 measured as 1e-12);
    `note` says why a row is not a plain pass/fail."""

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
    truncation: float = 0.0
    # The lesson's numbers: L(x + h), L(x − h), the 2h the floats really took, and the plain
    # central difference D(h) (`numeric` extrapolates D(h) and D(h/2): closer to the truth).
    plus: Number = math.nan
    minus: Number = math.nan
    step: Number = math.nan
    central: Number = math.nan
    # the option whose change the note advises (`eps`): a view names it (`--eps` in the CLI)
    remedy: str | None = None

    @property
    def failed(self) -> bool:
        return self.status == "fail"


def summary(rows: list[Row]) -> str:
    """One line: how many leaves were checked and how they came out."""
    counts = Counter(row.status for row in rows)
    parts = [f"{n} {status}" for status, n in counts.items()]
    noun = "leaf" if len(rows) == 1 else "leaves"
    failed = [r.name for r in rows if r.failed]
    verdict = f"FAILED: {', '.join(failed)}" if failed else "ok"
    return f"{len(rows)} {noun} checked: {', '.join(parts) or 'none'} — {verdict}"
