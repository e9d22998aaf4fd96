"""Watch a PyTorch training loop: per row of parameters (gradviz.torch.rows: every
parameter of the model, each in one row), per recorded step, the numbers `gradviz grads`
shows (rms, mean and max |g|, grad:data, update:data, the activations' mean, std, slope,
saturated and dead fractions, NaN/inf), then the same table, statuses and verdict.

When: at every optimizer step of any optimizer holding the model's parameters (torch's
global step hooks; optimizers stepped after one backward pass, SGD for the body and Adam
for the head, are one training step, recorded at the first and each update measured
across its own optimizer's step), or of the one optimizer given, or at `rec.step()`.
The gradients are read once final (after `backward()`, DDP's all-reduce and clipping); the gradients
before clipping are read at the end of the backward pass, so the verdict can say when
clipping scaled them (under a torch.amp.GradScaler, divided by its loss scale: undoing
it is not clipping). An optimizer stepped with a closure (LBFGS, Lightning) is read
after the closure has run, not before.

What: the activations come from forward hooks on the activation module that takes each
row's output (by the tensor it is given, else by call order), or from the functional
activation (`torch.relu(self.fc(x))`, any function of an op gradviz reads) that does, seen through a
torch function mode on the forward passes of recorded steps (not gradient checkpointing's
recompute in the backward pass: neither the rows' order nor activations a second time); a
row with none is read at its own output, as linear. Attention, RNNs and custom modules'
own parameters are rows whose activations are not read (their output is not one layer's
units), and under torch.compile no forward hook runs: the table and the verdict say what
was not read, and no status rests on it. Frozen parameters (no gradient, or in the groups
of none of the optimizers seen stepping the model) are their own status, out of the
verdict; a row partly frozen says which tensors are, and its numbers are of the trained
ones. Under an adaptive optimizer (Adam, RMSprop, ...) the layers are compared by
update:data, not by the raw gradient.

Exact where it matters: every step, recorded or not, each gradient's sum says whether
it holds a NaN/inf; the first step that holds one is recorded in full, whatever the
cadence.

Cost: a recorded step runs a few fused kernels (`torch._foreach_norm` over the gradients
at the end of the backward pass, and at the step over them and the weights' copy for
update:data; |g| of the weights into a kept buffer for Σ|g| and max|g|; sums of the
activations) and keeps the results on the device in one vector; they become Python
floats when read (`table`, `history`, `save`). A step not recorded runs the optimizer's
step hooks and the NaN check alone (no forward or gradient hook).
Under DistributedDataParallel every rank sees the all-reduced gradients, the activation
sums are summed across ranks and the logged losses averaged; under FSDP a sharded
parameter's numbers are reduced across its shards. Only rank 0 writes the file.
"""

from __future__ import annotations

import itertools
import math
import sys
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import torch
import torch.distributed as dist
from rich.console import Console, RenderableType
from torch import nn
from torch.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)
from torch.overrides import TorchFunctionMode
from torch.utils.hooks import RemovableHandle

from gradviz.errors import InputError
from gradviz.ops import ACTIVATIONS
from gradviz.records import Run, RunLayer
from gradviz.render.layers import report
from gradviz.schema import save_run
from gradviz.stats import Diagnosis, History, LayerStats, assess, first_in_order, verdict
from gradviz.torch.activations import (
    ACTIVATION_MODULES,
    FROM_OUTPUTS,
    FUNCTIONAL,
    QUADRATIC_SLOPES,
    activation_of,
    in_place,
    is_activation,
    torch_slope,
)
from gradviz.torch.recording import in_backward
from gradviz.torch.rows import NORMS, Row, rows_of

_SUM_DTYPE = {torch.float16: torch.float32, torch.bfloat16: torch.float32}
# A norm under it is read again in float64 (`Recorder._small_again`): float32's squares
# of its entries may have underflowed.
SMALL_NORM = 1e-12
DEFAULT_EVERY = 50  # record one step in 50: about 2% of the training time (bench/)
# A hidden row's counts (ReLU: units above 0; sigmoid/tanh: below and above the band)
# are kept per unit up to this many (a kilobyte or two a recorded step), totalled when
# read: in the loop, the totals cost three to five calls.
KEPT_PER_UNIT = 256
# Optimizers that rescale each gradient by its own history: the raw gradient's size is
# not what moves the weights, update:data is.
ADAPTIVE = {
    "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Adagrad", "Adadelta",
    "SparseAdam", "Adafactor",
}  # fmt: skip
COMPILED = "the forward pass ran compiled (torch.compile), where no forward hook runs"
UNSEEN = (
    "no forward pass through the model's modules was seen before this step (a forward run "
    "before watch(), or compiled after it by torch.compile, where no forward hook runs)"
)
OFF_CADENCE = "not recorded on this step (a NaN/inf found between recorded steps)"


def _bands() -> dict[str, tuple[tuple[float, float], bool]]:
    """The saturation bands of the op table (gradviz.stats reads the same): (band,
    whether it is one of inputs). A monotone op's band is of outputs, a non-monotone
    one's of inputs (`Op.saturation_input`)."""
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


BANDS = _bands()
SLOPES = _slopes()
# The activations whose units can die (the op row's `dies_at`: relu at 0): their outputs'
# nonzero count is their slope's mean and says which units are dead.
DYING = frozenset(n for n, op in ACTIVATIONS.items() if op is not None and op.dies_at is not None)
# Those never negative (the op row's `never_negative`): their units above 0 may be counted
# by the signs' sum (`Recorder._above_zero`); another dying op's negative outputs would subtract.
SIGN_COUNTED = frozenset(n for n in DYING if ACTIVATIONS[n].never_negative)


@dataclass
class _Activations:
    """One row's activations summed over the forward passes of a recorded step, per unit:
    rows, Σa, Σa², and the counts the activation's statuses need (ReLU: units above 0;
    sigmoid/tanh: below and above the saturation band), kept on the device."""

    rows: int = 0
    sums: list[torch.Tensor] = field(default_factory=list)
    outputs: list[torch.Tensor] = field(default_factory=list)  # for exact NaN counts


@dataclass
class _Pending:
    """A recorded step's numbers, still on the device."""

    step: int
    norms: torch.Tensor  # ‖g‖₂, ‖w‖₂ per parameter, Σ|g|, max|g| per weight (_measure)
    activations: dict[Row, _Activations]
    frozen: list[bool]
    optimizer: str | None  # as the verdict names it (`Recorder._named`)
    updates: torch.Tensor | None = None  # ‖Δw‖ per parameter, after the optimizer's step
    before_clip: torch.Tensor | None = None  # ‖g‖₂ per parameter at the end of backward
    # (over the loss scale of a GradScaler: `_loss_scale`)
    nonfinite: list[tuple[int, str | None]] | None = None  # (count, first quantity) per row
    unread: str | None = None  # why no activation was read on this step
    rows: list[Row] = field(default_factory=list)  # the rows' order when measured
    weight_index: list[int] = field(default_factory=list)  # the weights among their params
    adaptive: bool = False  # an adaptive optimizer holds a trained row: read by update:data
    stepped: set[int] | None = None  # ids of the parameters its optimizers hold (None: all)


def _unwrapped(model: nn.Module) -> tuple[nn.Module, bool]:
    """The model inside DistributedDataParallel, DataParallel or torch.compile (its
    names, without `module.` or `_orig_mod.`), and whether it was compiled."""
    compiled = False
    while True:
        if isinstance(model, nn.parallel.DistributedDataParallel | nn.DataParallel):
            model = model.module
        elif isinstance(getattr(model, "_orig_mod", None), nn.Module):
            model, compiled = model._orig_mod, True
        else:
            return model, compiled


def _distributed() -> tuple[int, int]:
    """(rank, world size), (0, 1) outside torch.distributed."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def _local(t: torch.Tensor) -> tuple[torch.Tensor, bool]:
    """A tensor's own part, and whether it is a shard of a larger one (an FSDP/DTensor
    parameter or gradient: its numbers are reduced across the ranks)."""
    to_local = getattr(t, "to_local", None)
    if to_local is None:
        return t, False
    placements = getattr(t, "placements", ())
    return to_local(), any(p.is_shard() for p in placements)


def _dense(t: torch.Tensor) -> torch.Tensor:
    """A sparse gradient's stored values (its other entries are 0: the same norms)."""
    return t.coalesce().values() if t.is_sparse else t


def _compiling() -> bool:
    return torch.compiler.is_compiling()


class _Mode(TorchFunctionMode):
    """Sees the forward pass's torch calls: which parameters each call uses (their order
    gives the rows' order), and the functional activations (their statistics)."""

    def __init__(self, recorder: Recorder) -> None:
        super().__init__()
        self.recorder = recorder

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        kwargs = kwargs or {}
        recorder = self.recorder
        if not recorder._mapped:
            recorder._uses(args, kwargs)
        result = func(*args, **kwargs)
        check = FUNCTIONAL.get(func)
        if check is not None and recorder._inside_activation == 0 and args:
            recorder._functional(check(*args, **kwargs), func, args[0], result)
        return result


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
        nan_check: bool = True,
        tensorboard: Any = None,
    ) -> None:
        if not isinstance(model, nn.Module):
            raise InputError(f"watch: expected a torch.nn.Module, got {type(model).__name__}")
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise InputError(f"watch: every must be a whole number ≥ 1, got {every!r}")
        if optimizer is not None and not isinstance(optimizer, torch.optim.Optimizer):
            raise InputError(
                "watch: optimizer must be a torch.optim.Optimizer (e.g. "
                f"torch.optim.Adam(model.parameters())), got {type(optimizer).__name__} "
                f"{optimizer!r}"[:200]
            )
        if tensorboard is not None and not callable(getattr(tensorboard, "add_scalar", None)):
            raise InputError(
                "watch: tensorboard must be a torch.utils.tensorboard.SummaryWriter (or have "
                f"its add_scalar), got {type(tensorboard).__name__}"
            )
        for name, value in (("manual", manual), ("nan_check", nan_check)):
            if not isinstance(value, bool):
                raise InputError(f"watch: {name} must be True or False, got {value!r}")
        base, compiled = _unwrapped(model)
        rows = rows_of(base)
        if not rows:
            raise InputError(f"watch: {type(base).__name__} has no parameters to watch")
        self.model_name = type(base).__name__
        self.every = every
        self.steps = 0  # optimizer steps taken (or step() calls)
        self._base = base
        self._compiled = compiled
        self._order(rows)
        self._reads: dict[Row, nn.Module | str | None] = {}  # module, "functional" or None
        self._activation: dict[Row, str] = {}
        self._activation_module: dict[Row, str] = {}
        self._unknown: dict[Row, str] = {}  # an activation after it gradviz cannot read
        self._known, self._unknown_modules = self._activation_modules(base)
        self._mapped = False
        self._reader_row: dict[nn.Module, Row] = {}  # (once mapped) the module read per row
        self._functional_source: dict[nn.Module, Row] = {}  # rows read at a function
        self._functional_rows: dict[int, Row] = {}  # id(a row's output) on this step
        self._into_norm: dict[Row, str] = {}  # rows whose output a norm takes: read there
        self._unplaced: set[Row] = set()  # (once mapped) rows not used on the mapping step
        self._mapped_at = 0  # the step mapped
        self._optimizer = optimizer
        self._manual = manual or optimizer is not None
        self._hooks: list[RemovableHandle] = []
        self._optimizer_hooks: list[RemovableHandle] = []
        self._clip_hooks: list[RemovableHandle] = []
        self._mode: _Mode | None = None
        self._armed_mapped = False
        self._inside_activation = 0
        # the mapping step's observations
        self._first_use: dict[int, int] = {}  # id(parameter) -> order of first use
        self._calls: list[nn.Module] = []  # row and activation modules, in call order
        self._outputs: dict[int, Row] = {}  # id(output tensor) -> the row that made it
        self._candidates: dict[tuple[Row, object], _Activations] = {}
        self._acts: dict[Row, _Activations] = {}
        self._pending: list[_Pending] = []
        self._history: History = []
        self._curves: list[tuple[int, object, object]] = []
        self._before: list[torch.Tensor] | None = None  # weights before a recorded step
        self._moving: _Pending | None = None
        # the optimizers seen stepping the model's parameters, those that stepped since the
        # last backward pass (by id), and whether a backward pass ran since the last step:
        # one backward pass's optimizer steps are one training step (`_joins`)
        self._stepping: weakref.WeakSet[torch.optim.Optimizer] = weakref.WeakSet()
        self._stepped: list[int] = []
        self._backward_seen = False
        self._moved: _Pending | None = None  # this training step's, moved by its first step
        self._joined: list[int] | None = None  # a later optimizer's parameters, in its step
        self._partly_frozen: dict[str, str] = {}  # row -> its frozen tensors (the latest step)
        self._last_clip: list[torch.Tensor] | None = None
        self._scratch: dict[tuple[object, ...], torch.Tensor] = {}  # (`_scratch_like`)
        self._nan_found = False
        self._nan_check = nan_check
        # collectives of its own, in a group of its own: never interleaved with DDP's or
        # FSDP's (FSDP's reductions may still be in flight on the default group)
        self._group = dist.new_group() if _distributed()[1] > 1 else None
        self._tensorboard = tensorboard  # a SummaryWriter: each recorded step written to it
        self._written = 0  # recorded steps written to it so far
        self._sparse = any(isinstance(m, nn.Embedding) and m.sparse for m in base.modules())
        self._plain = not (self._sharded or self._sparse)  # (gradients read as they are)
        self._sequential = all(  # (its forward order is its modules' order)
            isinstance(m, nn.Sequential) or not any(m.children()) for m in base.modules()
        )
        self._arm()  # step 0 is recorded
        if optimizer is not None:
            self._optimizer_hooks = [
                optimizer.register_step_pre_hook(self._pre_step),
                optimizer.register_step_post_hook(self._post_step),
            ]
        elif not manual:
            self._optimizer_hooks = _global_hooks(self)

    # -- which parameters, which optimizers --------------------------------------------

    def _order(self, rows: list[Row]) -> None:
        """Set the rows' order, and with it the parameters' (each tensor once)."""
        self._rows = rows
        self._params = _params_of(rows)
        self._weight_index = _weight_positions(rows)
        self._ids = {id(p) for p in self._params}
        self._sharded = any(_local(p)[1] for p in self._params)
        meshes = {getattr(p, "device_mesh", None) for p in self._params} - {None}
        if any(mesh.ndim > 1 for mesh in meshes):
            raise InputError(
                "watch: parameters sharded over a device mesh of 2 or more dimensions (HSDP, "
                "tensor parallelism) are not read yet: FSDP over one mesh dimension is"
            )
        self._held: weakref.WeakKeyDictionary[torch.optim.Optimizer, tuple[int, set[int]]] = (
            weakref.WeakKeyDictionary()
        )

    def _holds(self, optimizer: torch.optim.Optimizer) -> set[int]:
        """The ids of the model's parameters in `optimizer`'s groups (kept per optimizer
        while its groups keep their sizes)."""
        sizes = sum(len(group["params"]) for group in optimizer.param_groups)
        known = self._held.get(optimizer)
        if known is None or known[0] != sizes:
            held = {id(p) for group in optimizer.param_groups for p in group["params"]}
            known = (sizes, held & self._ids)
            self._held[optimizer] = known
        return known[1]

    def _frozen(self, optimizer: torch.optim.Optimizer | None) -> list[bool]:
        """Per parameter, whether it is frozen: no gradient (`requires_grad` off), or in
        the groups of none of the optimizers seen stepping the model (of the one given)."""
        held = None
        if self._optimizer is not None:
            held = self._holds(self._optimizer)
        elif optimizer is not None:
            held = set().union(*(self._holds(o) for o in {*self._stepping, optimizer}))
        return [
            not p.requires_grad or (held is not None and id(p) not in held) for p in self._params
        ]

    def _named(
        self, optimizer: torch.optim.Optimizer | None, rows: list[Row], frozen: list[bool]
    ) -> tuple[str | None, bool]:
        """The optimizer as the verdict names it, and whether an adaptive one trains a row.
        Optimizers of two or more kinds (SGD for some rows, Adam for others): each with the
        rows it trains, the adaptive ones first ("Adam for head (SGD for 0, 2)")."""
        stepping = optimizer or self._optimizer
        name = type(stepping).__name__ if stepping is not None else None
        holders = {*self._stepping, optimizer} if optimizer is not None else set()
        if self._optimizer is not None or len({type(o) for o in holders}) <= 1:
            return name, name in ADAPTIVE
        trained = [
            (row.name, {id(p) for _, p in row.params})
            for row, flags in self._rows_flags(rows, frozen)
            if not all(flags)
        ]
        kinds: dict[str, list[str]] = {}
        for o in sorted(holders, key=lambda o: type(o).__name__):
            held = self._holds(o)
            names = kinds.setdefault(type(o).__name__, [])
            names += [n for n, ids in trained if ids & held and n not in names]
        kinds = {kind: names for kind, names in kinds.items() if names}
        if len(kinds) <= 1:
            return name, name in ADAPTIVE
        order = [n for n, _ in trained]
        each = sorted(
            kinds.items(), key=lambda k: (k[0] not in ADAPTIVE, min(map(order.index, k[1])))
        )
        words = [f"{kind} for {_listed(sorted(names, key=order.index))}" for kind, names in each]
        return f"{words[0]} ({'; '.join(words[1:])})", any(kind in ADAPTIVE for kind in kinds)

    @staticmethod
    def _rows_flags(rows: list[Row], flags: list[bool]) -> list[tuple[Row, list[bool]]]:
        """Each row with its parameters' flags (the flags in the rows' parameters' order)."""
        out, k = [], 0
        for row in rows:
            out.append((row, flags[k : k + len(row.params)]))
            k += len(row.params)
        return out

    def _joins(self, optimizer: torch.optim.Optimizer) -> bool:
        """Whether `optimizer`'s step is a later one of the training step under way: one
        backward pass's optimizer steps are one training step (SGD for the body, then Adam
        for the head), recorded at the first; a step after another backward pass, or by an
        optimizer that already stepped since the last, starts the next."""
        if optimizer not in self._stepping:
            self._stepping.add(optimizer)
            self._watch_backward(optimizer)
            for pending in self._pending:  # (steps recorded before it was seen: not frozen)
                self._trained(pending, optimizer)
        joins = bool(self._stepped) and not self._backward_seen
        joins = joins and id(optimizer) not in self._stepped
        self._backward_seen = False
        self._stepped = [*self._stepped, id(optimizer)] if joins else [id(optimizer)]
        return joins

    def _watch_backward(self, optimizer: torch.optim.Optimizer) -> None:
        """A hook on one parameter `optimizer` trains: a backward pass reaching it says the
        next step is a new training step (one Python call per backward pass)."""
        held = self._holds(optimizer)
        first = next((p for p in self._params if id(p) in held and p.requires_grad), None)
        if first is None or self._sharded:
            return
        ref = weakref.ref(self)

        def seen(_: torch.Tensor) -> None:
            live = ref()
            if live is not None:
                live._backward_seen = True

        # (with the global step hooks: removed with them, at close or once the recorder is gone)
        self._optimizer_hooks.append(first.register_post_accumulate_grad_hook(seen))

    # -- hooks -------------------------------------------------------------------------

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
        """Attach the hooks for the next recorded step: forward hooks where activations
        are read (the first time: on every row's module and activation module, to learn
        the order), the function mode where a row reads a functional activation, and the
        hooks that read the gradients before clipping."""
        if self._mapped:
            watched = set(self._reader_row) | set(self._functional_source)
            use_mode = bool(self._functional_source)
        else:
            watched = {row.output_module for row in self._rows} | {
                m for row in self._rows for m in row.modules
            }
            watched |= set(self._known) | set(self._unknown_modules)
            use_mode = True
        hooks = [m.register_forward_hook(self._observe) for m in watched]
        if use_mode:  # (the function mode sees inside activation modules: their own calls)
            for m in watched:
                if m in self._known or m in self._unknown_modules:
                    hooks.append(m.register_forward_pre_hook(self._enter_activation))
                    hooks.append(m.register_forward_hook(self._leave_activation, always_call=True))
            hooks.append(self._base.register_forward_pre_hook(self._enter_mode))
            hooks.append(self._base.register_forward_hook(self._leave_mode, always_call=True))
        self._hooks = hooks
        self._armed_mapped = self._mapped  # (the mapping step's hooks watch every module)
        # (not under FSDP: its gradients are reduce-scattered after the backward pass,
        # each rank at its own moment, so the end of the pass holds no final gradient)
        self._clip_hooks = [
            p.register_post_accumulate_grad_hook(self._gradient_done)
            for p in self._params
            if p.requires_grad and not self._sharded
        ]

    def _disarm(self) -> None:
        for hook in self._hooks + self._clip_hooks:
            hook.remove()
        self._hooks, self._clip_hooks = [], []
        if self._mode is not None:  # (a forward that never returned)
            self._leave_mode()

    def _enter_mode(self, *_: object) -> None:
        if _compiling() or self._mode is not None or in_backward():
            return
        self._mode = _Mode(self)
        self._mode.__enter__()

    def _leave_mode(self, *_: object) -> None:
        if self._mode is not None:
            mode, self._mode = self._mode, None
            mode.__exit__(None, None, None)

    def _enter_activation(self, *_: object) -> None:
        if not _compiling():
            self._inside_activation += 1

    def _leave_activation(self, *_: object) -> None:
        if not _compiling() and self._inside_activation:
            self._inside_activation -= 1

    def _uses(self, args: Sequence[object], kwargs: dict[str, object]) -> None:
        """The parameters a torch call uses, in order of first use (lists of them too:
        an LSTM's flat weights)."""
        for value in (*args, *kwargs.values()):
            for item in value if isinstance(value, list | tuple) else (value,):
                if isinstance(item, nn.Parameter) and id(item) not in self._first_use:
                    self._first_use[id(item)] = len(self._first_use)

    def _gradient_done(self, _: torch.Tensor) -> None:
        """A parameter's gradient is accumulated: at the end of this backward pass (after
        DDP's all-reduce), read every gradient's norm, before any clipping."""
        if not self._clip_queued:
            self._clip_queued = True
            torch.autograd.Variable._execution_engine.queue_callback(self._read_before_clip)

    _clip_queued = False

    def _read_before_clip(self, again: bool = True) -> None:
        # queued behind the callbacks queued so far (DDP's, that all-reduces)
        if again and dist.is_available() and dist.is_initialized():
            engine = torch.autograd.Variable._execution_engine
            engine.queue_callback(lambda: self._read_before_clip(again=False))
            return
        self._clip_queued = False
        with torch.no_grad():
            grads = self._grads()
            parts = grads if self._plain else [_dense(_local(g)[0]) for g in grads]
            self._last_clip = torch._foreach_norm(parts)

    def _grads(self) -> list[torch.Tensor]:
        """Every parameter's gradient (a 0-d zero where there is none), read under no_grad
        (no `detach()`: a call each)."""
        return [g if (g := p.grad) is not None else p.new_zeros(()) for p in self._params]

    def _observe(self, module: nn.Module, inputs: object, output: object) -> None:
        if _compiling() or not torch.is_grad_enabled():  # (an evaluation pass: not trained on)
            return
        if in_backward():  # (a checkpoint's recompute: this forward was seen)
            return
        with torch._C.DisableTorchFunction():  # (our own sums: not the model's calls)
            self._observe_now(module, inputs, output)

    def _observe_now(self, module: nn.Module, inputs: object, output: object) -> None:
        first = inputs[0] if isinstance(inputs, tuple) and inputs else None
        if isinstance(output, tuple) and output and isinstance(output[0], torch.Tensor):
            output = output[0]  # (attention, RNNs: the output before the weights or state)
        if not isinstance(output, torch.Tensor):
            return
        if not self._mapped:
            self._calls.append(module)
            row = self._row_of_output_module(module)
            if row is not None:
                self._outputs[id(output)] = row
                self._collect((row, module), row, "linear", first, output, per_unit=True)
                return
            row = self._producer(first)
            if row is None or module in self._unknown_modules:
                return
            self._collect((row, module), row, self._known[module], first, output, True)
            return
        source = self._functional_source.get(module)
        if source is not None:  # (its output goes through a function: seen by the mode)
            self._functional_rows[id(output)] = source
        row = self._reader_row.get(module)
        if row is None:
            return
        kind = self._activation.get(row, "linear")
        self._collect(row, row, kind, first, output, row is self._rows[-1])

    def _row_of_output_module(self, module: nn.Module) -> Row | None:
        return next((row for row in self._rows if row.output_module is module), None)

    def _producer(self, tensor: object) -> Row | None:
        """The row whose output `tensor` is, or the last row called (call order)."""
        if isinstance(tensor, torch.Tensor) and id(tensor) in self._outputs:
            return self._outputs[id(tensor)]
        for module in reversed(self._calls[:-1]):
            if module in self._known or module in self._unknown_modules:
                return None  # (another activation came between: not this row's)
            row = self._row_of_output_module(module)
            if row is not None:
                return row
        return None

    def _functional(self, kind: str | None, func: object, x: object, result: object) -> None:
        """A functional activation applied to a row's output."""
        if _compiling() or not torch.is_grad_enabled() or in_backward():
            return
        if not isinstance(x, torch.Tensor) or not isinstance(result, torch.Tensor):
            return
        if not self._mapped:
            row = self._outputs.get(id(x))
            if row is None:
                return
            name = getattr(func, "__name__", repr(func))
            if kind is None:
                self._unknown.setdefault(row, f"({name}) is unknown to gradviz")
                return
            if result is x and kind not in FROM_OUTPUTS:  # (in place: x is its output now)
                self._unknown.setdefault(
                    row, f"({name}) works in place, its input gone before it is read"
                )
                return
            self._collect((row, "functional", kind), row, kind, x, result, per_unit=True)
            return
        row = self._functional_rows.get(id(x))
        if row is not None and self._reads.get(row) == "functional":
            self._collect(row, row, self._activation[row], x, result, row is self._rows[-1])

    def _collect(
        self,
        key: object,
        row: Row,
        kind: str,
        x: object,
        a: torch.Tensor,
        per_unit: bool,
    ) -> None:
        """Add one forward pass's activations of `row` (read as `kind`) to its sums."""
        units = row.units
        if units is None or a.dim() == 0:
            return
        a = a.detach()
        others = _other_axes(a, units)  # (reduced in place: no copy with the units last)
        if others is None:
            return
        if not others:  # (one sample, unbatched: one row)
            a, others = a.unsqueeze(0), (0,)
            x = x.unsqueeze(0) if isinstance(x, torch.Tensor) and x.dim() == 1 else x
        slope = SLOPES.get(kind)
        xs = None  # the activation's input, where its slope or band needs it
        if slope is not None:
            xs = x.detach() if isinstance(x, torch.Tensor) else None
            if xs is None or xs.shape != a.shape:
                return
        rows = a.numel() // units
        # (sums in the activations' own precision: a float64 copy of them would cost more)
        if per_unit:  # Σa, Σa² per unit (the outputs' spread), and Σ|a| (their scale)
            sums = [a.sum(others), (a * a).sum(others), a.abs().sum()]
        else:  # Σa, Σa² (= ‖a‖²) over every entry: a hidden layer's mean and std
            flat = a.reshape(-1)
            sums = [flat.sum(), torch.dot(flat, flat)]
        if kind in DYING:
            sums.append(self._above_zero(a, others, rows, kind in SIGN_COUNTED))
        if xs is not None:  # Σ|slope| from the op row, at the inputs
            sums.append(slope(a, xs).abs().sum())
        if kind in BANDS:
            (low, high), of_inputs = BANDS[kind]
            v = xs if of_inputs else a
            below = torch.lt(v, low, out=self._scratch_like(v, torch.bool)).sum(others)
            sums += [below, torch.gt(v, high, out=self._scratch_like(v, torch.bool)).sum(others)]
        store = self._acts if self._mapped else self._candidates
        acc = store.get(key)  # type: ignore[call-overload]
        if acc is None:
            store[key] = _Activations(rows, sums, [a])  # type: ignore[index]
        else:  # another forward pass in the same step (gradient accumulation)
            acc.rows += rows
            if kind in DYING:  # (counts added as int64: exact whatever the total)
                acc.sums[-1], sums[-1] = acc.sums[-1].long(), sums[-1].long()
            acc.sums = [s + t for s, t in zip(acc.sums, sums, strict=True)]
            acc.outputs.append(a)

    def _above_zero(
        self, a: torch.Tensor, others: tuple[int, ...], rows: int, never_negative: bool
    ) -> torch.Tensor:
        """A ReLU's units above 0 per unit (those not 0). An output never negative is summed
        as float32 signs (0 or 1: exact while a unit's count stays under 2^24; a negative
        output would subtract; int64 once totalled, `_compact`), 3x as fast as bool's int64
        sum on the CPU (340 against 120 µs on a 32×16×28×28 output); a NaN's sign is 0, so a
        step holding one is counted again (`_recount`); and under torch.distributed (the
        counts are summed across ranks first) as bools."""
        if never_negative and a.dtype == torch.float32 and rows < 2**24 and _distributed()[1] == 1:
            return torch.sign(a, out=self._scratch_like(a, a.dtype)).sum(others)
        return torch.ne(a, 0, out=self._scratch_like(a, torch.bool)).sum(others)

    def _scratch_like(self, t: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """A buffer of `t`'s shape for a temporary that is summed at once (|g|, signs, band
        tests): one per dtype and device, kept between recorded steps and grown to the
        largest use (whatever shapes come and go). A fresh tensor each step costs more
        than its sum, its pages new (1 ms of a conv net's 2.5 ms recorded step)."""
        key = (dtype, t.device)
        kept = self._scratch.get(key)
        if kept is None or kept.numel() < t.numel():
            kept = self._scratch[key] = torch.empty(t.numel(), dtype=dtype, device=t.device)
        return kept[: t.numel()].view(t.shape)

    def _map(self) -> None:
        """After the first recorded forward: each row's activation (the activation module
        given its output, else the functional activation applied to it, else none: read
        at its own output, as linear), the rows in the order the forward pass used their
        parameters, the output row (the last row module called) last."""
        for row in self._rows:
            module = next(
                (k[1] for k in self._candidates if k[0] is row and k[1] in self._known), None
            )
            functional = next(
                (k for k in self._candidates if k[0] is row and k[1] == "functional"), None
            )
            if module is not None:
                self._reads[row] = module
                self._activation[row] = self._known[module]
                self._activation_module[row] = type(module).__name__
                self._acts[row] = self._candidates[(row, module)]
            elif functional is not None:
                self._reads[row] = "functional"
                self._activation[row] = functional[2]  # type: ignore[misc]
                self._activation_module[row] = f"torch.{functional[2]}"
                self._acts[row] = self._candidates[functional]
            else:
                following = self._following_unknown(row)
                if following is not None:
                    self._unknown.setdefault(row, following)
                self._reads[row] = row.output_module if row.units is not None else None
                if (row, row.output_module) in self._candidates:
                    self._acts[row] = self._candidates[(row, row.output_module)]
        order = {id(m): i for i, m in enumerate(self._calls)}
        modules = {id(m) for row in self._rows for m in row.modules}
        leaves = [  # (a module holding other rows' modules returns after them: not the output)
            row
            for row in self._rows
            if not any(
                id(m) in modules for m in row.output_module.modules() if m is not row.output_module
            )
        ]
        last_called = max(
            (row for row in leaves if id(row.output_module) in order),
            key=lambda row: max(i for i, m in enumerate(self._calls) if m is row.output_module),
            default=None,
        )

        def first_use(row: Row) -> tuple[int, int]:
            uses = [self._first_use[id(p)] for _, p in row.params if id(p) in self._first_use]
            if uses:
                return (0, min(uses))
            if id(row.module) in order:
                return (0, len(self._first_use) + order[id(row.module)])
            return (1, self._rows.index(row))  # never used: after the others, module order

        rows = sorted(self._rows, key=first_use)
        # rows not used on this step (a branch not taken): never the output layer; placed
        # before it in the modules' order, their place uncertain (said, compared with none)
        self._unplaced = {row for row in rows if first_use(row)[0] == 1}
        self._mapped_at = self.steps
        if last_called is not None and rows[-1] is not last_called:
            rows.remove(last_called)
            rows.append(last_called)
        for row in self._unplaced:
            self._unknown.setdefault(
                row, f"was not seen ({row.name} not called at step {self.steps})"
            )
        self._order(rows)
        # a layer whose output goes straight into a norm (a convolution into BatchNorm) is
        # read there: its own output's mean and spread would only be normalised away
        for row, following in itertools.pairwise(rows):
            if self._reads.get(row) is row.output_module and isinstance(following.module, NORMS):
                self._reads[row] = None
                self._into_norm[row] = following.name
                self._acts.pop(row, None)
        self._reader_row = {m: row for row, m in self._reads.items() if isinstance(m, nn.Module)}
        self._functional_source = {
            row.output_module: row for row, m in self._reads.items() if m == "functional"
        }
        self._candidates = {}
        self._calls = []
        self._outputs = {}
        self._mapped = True

    def _following_unknown(self, row: Row) -> str | None:
        """An activation module gradviz cannot read, called right after the row's."""
        calls = self._calls
        for i, m in enumerate(calls):
            if m is row.output_module:
                after = next(iter(calls[i + 1 : i + 2]), None)
                if after in self._unknown_modules:
                    return self._unknown_modules[after]
        return None

    # -- recording ---------------------------------------------------------------------

    def _pre_step(self, optimizer: torch.optim.Optimizer, args: tuple, kwargs: dict) -> Any:
        """Before an optimizer's step: record (or, for a step with a closure, once the
        closure has run the forward and backward pass)."""
        if self._optimizer is None and not self._holds(optimizer):
            return None
        # (args are step's own: the optimizer first, then the closure if one is passed)
        closure = kwargs.get("closure", args[1] if len(args) > 1 else None)
        if callable(closure):
            done = [False]

            def recorded_closure() -> Any:
                loss = closure()
                if not done[0]:  # (LBFGS calls it again: the step's gradients are the first)
                    done[0] = True
                    self._at_step(optimizer)
                return loss

            if "closure" in kwargs:
                return args, {**kwargs, "closure": recorded_closure}
            return (args[0], recorded_closure, *args[2:]), kwargs
        self._at_step(optimizer)
        return None

    def _post_step(self, optimizer: torch.optim.Optimizer, args: tuple, kwargs: dict) -> None:
        if self._optimizer is None and not self._holds(optimizer):
            return
        if self._joined is not None:
            self._after_join()
        else:
            self._after_step()

    def step(self) -> None:
        """Record now (once the gradients are final): for loops that call it themselves.
        The first call makes the recorder manual: it no longer follows optimizers."""
        if self._optimizer is not None:
            raise InputError("this recorder records at optimizer.step(); step() is not needed")
        if not self._manual:
            self._manual = True
            for hook in self._optimizer_hooks:
                hook.remove()
            self._optimizer_hooks = []
        self._at_step(None)

    def _at_step(self, optimizer: torch.optim.Optimizer | None) -> None:
        if optimizer is not None and self._optimizer is None and self._joins(optimizer):
            self._join(optimizer)
            return
        self._moved = None
        step = self.steps
        if step % self.every == 0:
            self._record(step, optimizer)
        elif self._nan_check and not self._sharded and not self._nan_found and self._nonfinite():
            self._nan_found = True
            self._record(step, optimizer, off_cadence=True)
        self.steps += 1
        if self.steps % self.every == 0 and not self._hooks:
            self._arm()

    def _nonfinite(self) -> bool:
        """Between recorded steps: whether a gradient holds a NaN or inf (the first step
        that does is recorded in full). Each gradient's sum, read as a Python float
        (finite unless it holds a NaN or inf, or overflows: then checked exactly): the
        cheapest read of every entry measured in the loop, against a fused ‖·‖₂ or one
        stacked sum (bench/README.md). Half precision is summed in float32, where a sum
        of ones overflows only past 3e38, not past 65,504."""
        with torch.no_grad():
            grads = [g for p in self._params if (g := p.grad) is not None]
            if self._sparse:
                grads = [_dense(g) for g in grads]
            if all(math.isfinite(g.sum(dtype=_SUM_DTYPE.get(g.dtype)).item()) for g in grads):
                return False
            return not all(bool(torch.isfinite(g).all()) for g in grads)

    def _record(
        self, step: int, optimizer: torch.optim.Optimizer | None, off_cadence: bool = False
    ) -> None:
        if not self._mapped and self._calls:  # (no forward seen yet: mapped at a later one)
            self._map()
        if self._tensorboard is not None:  # the steps before this one are complete now
            self._write_tensorboard()
        with torch.no_grad():
            pending = self._measure(step, optimizer)
            if off_cadence:
                pending.unread = OFF_CADENCE
                pending.activations = {}
            self._pending.append(pending)
            if optimizer is not None or self._optimizer is not None:  # update:data
                self._moving = pending
        # every step recorded: the hooks stay, once they are the mapped few (the mapping
        # step's, on every module and with the function mode, would cost each step)
        if not (self._armed_mapped and self.every == 1):
            self._disarm()
        self._acts = {}
        self._functional_rows = {}
        self._last_clip = None

    def _after_step(self) -> None:
        """After the optimizer's step: how far it moved each parameter."""
        pending, self._moving = self._moving, None
        if pending is None or self._before is None:
            return
        with torch.no_grad():
            weights = [_local(p)[0] for p in self._params] if self._sharded else self._params
            torch._foreach_sub_(self._before, weights)  # (in place: the buffer is copied anew)
            pending.updates = self._reduced(torch._foreach_norm(self._before), squares=True)
        self._moved = pending

    def _join(self, optimizer: torch.optim.Optimizer) -> None:
        """A later optimizer's step in a recorded training step: its parameters are
        trained, and their update is measured across its step too (the buffer, before
        minus after the first step, is before again for them: they had not moved)."""
        pending = self._moved
        if pending is None:
            return
        ids = self._trained(pending, optimizer)
        if pending.stepped is not None:
            pending.stepped = pending.stepped | self._holds(optimizer)
        params = _params_of(pending.rows)
        if pending.updates is not None and self._before is not None and ids:
            with torch.no_grad():
                weights = [_local(params[k])[0] for k in ids]
                torch._foreach_add_([self._before[k] for k in ids], weights)
            self._joined = ids

    def _trained(self, pending: _Pending, optimizer: torch.optim.Optimizer) -> list[int]:
        """The parameters of `pending` that `optimizer` holds (their positions), not frozen
        unless `requires_grad` is off, and the optimizers' names with it."""
        held = self._holds(optimizer)
        params = _params_of(pending.rows)
        ids = [k for k, p in enumerate(params) if id(p) in held]
        for k in ids:
            pending.frozen[k] = not params[k].requires_grad
        pending.optimizer, pending.adaptive = self._named(optimizer, pending.rows, pending.frozen)
        return ids

    def _after_join(self) -> None:
        """After a later optimizer's step: how far it moved its parameters."""
        ids, self._joined = self._joined, None
        pending = self._moved
        if not ids or pending is None or pending.updates is None or self._before is None:
            return
        params = _params_of(pending.rows)
        with torch.no_grad():
            moved = [self._before[k] for k in ids]
            torch._foreach_sub_(moved, [_local(params[k])[0] for k in ids])
            norms = self._reduced(torch._foreach_norm(moved), squares=True)
            pending.updates[ids] = norms.to(pending.updates.dtype)

    def _reduced(self, norms: Sequence[torch.Tensor], squares: bool = False) -> torch.Tensor:
        """Per-parameter norms as one float64 vector; a sharded parameter's parts, of every
        rank, combined (‖·‖₂ by its squares, Σ|·| summed, max|·| the largest)."""
        vector = torch.stack(list(norms))
        if _distributed()[1] > 1 and self._sharded:
            vector = vector.to(torch.float64)
            if squares:
                vector = vector * vector
                dist.all_reduce(vector, group=self._group)
                vector = vector.sqrt()
            else:
                dist.all_reduce(vector, group=self._group)
        return vector

    def _measure(self, step: int, optimizer: torch.optim.Optimizer | None) -> _Pending:
        params = self._params
        raw = self._grads()
        grads = raw if self._plain else [_dense(_local(g)[0]) for g in raw]
        weights = [_local(p)[0] for p in params] if self._sharded else params
        # Σ|g| and max|g| of the rows' weights alone (what the table shows: a bias gives
        # δ, its ‖g‖₂), from |g| in a kept buffer (torch's ord-1 and ord-∞ norms take 6x
        # and 25x as long on the CPU, bench/README.md); first, while the backward pass's
        # end has left the gradients in cache (the weights' copy would push them out)
        l1, top = [], []
        for k in self._weight_index:
            g = grads[k]
            magnitude = torch.abs(g, out=self._scratch_like(g, g.dtype))
            l1.append(magnitude.sum())
            # (amax of each: 60 µs less than one `_foreach_max` on the MLP, in the loop)
            top.append(magnitude.amax() if g.numel() else g.new_zeros(()))
        if optimizer is not None or self._optimizer is not None:  # (update:data, after it)
            weights = self._copy_before(weights)  # (‖w‖₂ then read of the copy, in cache)
        # ‖·‖₂ fused, of every gradient and weight, read here even where the gradients are
        # those of the end of the backward pass: a write through `.data`, a GradScaler's
        # unscale_ or a foreach kernel leaves their version counters as they were
        norms = self._small_again(torch._foreach_norm([*grads, *weights]), [*grads, *weights])
        stepping = optimizer or self._optimizer
        carried = getattr(stepping, "grad_scale", None)
        if isinstance(carried, torch.Tensor):  # a fused optimizer under a GradScaler: the
            # gradients still carry the loss scale (its step unscales them), not the update
            n = len(grads)
            norms = [*(x / carried for x in norms[:n]), *norms[n:]]
            l1, top = [x / carried for x in l1], [x / carried for x in top]
        acts = {row: self._acts[row] for row in self._rows if row in self._acts}
        # one check for the whole step: ‖g‖₂ and ‖w‖₂ of every parameter, and Σa (Σ|a|
        # where a row is read per unit) of every activation, are finite unless a tensor
        # holds a NaN or inf (or a sum overflows: counted exactly, it finds none); only
        # then is anything counted one tensor at a time
        if _distributed()[1] > 1 and self._sharded:  # (each part reduced its own way)
            tops = torch.stack(top).to(torch.float64)
            dist.all_reduce(tops, op=dist.ReduceOp.MAX, group=self._group)
            norms = torch.cat([self._reduced(norms, squares=True), self._reduced(l1), tops])
            self._reduce(acts)
            wholes = [_whole_sum(a) for a in acts.values()]
            checked = torch.cat([norms, torch.stack(wholes)]) if wholes else norms
        else:  # ‖g‖₂, ‖w‖₂ per parameter, Σ|g|, max|g| per weight, then the activations'
            # sums: one vector (in the parameters' precision or wider: `tolist` reads each
            # as the same Python float; what follows max|g| is for the check alone)
            self._reduce(acts)
            norms = torch.stack([*norms, *l1, *top, *(_whole_sum(a) for a in acts.values())])
            checked = norms
        frozen = self._frozen(optimizer)
        before = None
        if self._last_clip is not None and len(self._last_clip) == len(params):
            before = self._reduced(self._last_clip, squares=True) / _loss_scale()
        name, adaptive = self._named(optimizer, self._rows, frozen)
        pending = _Pending(
            step,
            norms,
            acts,
            frozen,
            name,
            before_clip=before,
            rows=self._rows,
            weight_index=self._weight_index,
            adaptive=adaptive,
            stepped=self._holds(optimizer) if self._optimizer is None and optimizer else None,
        )
        if not self._mapped:
            pending.unread = COMPILED if self._compiled else UNSEEN
        if not math.isfinite(checked.sum().item()):
            pending.nonfinite = self._count_nonfinite(acts)
            self._recount(acts)
        for row, acc in acts.items():
            self._compact(row, acc)
        return pending

    def _small_again(
        self, norms: list[torch.Tensor], tensors: list[torch.Tensor]
    ) -> list[torch.Tensor]:
        """Each norm under `SMALL_NORM` read again in float64 (rare: one check, then those
        tensors alone): entries under 1e-19 square below float32's smallest normal
        (1.2e-38), to a few digits or to 0, so a gradient of 1e-25 would read ‖g‖₂ = 0
        while its Σ|g| does not. A missing gradient (its 0-d zero) stays 0, not read."""
        small = torch.lt(torch.stack(norms), SMALL_NORM)
        if not bool(small.any()):
            return norms
        n = len(self._params)
        again = list(norms)
        for k in small.nonzero().flatten().tolist():
            t = tensors[k]
            if t.dtype != torch.float64 and (k >= n or self._params[k].grad is not None):
                again[k] = torch.linalg.vector_norm(t, dtype=torch.float64)
        return again

    def _copy_before(self, weights: list[torch.Tensor]) -> list[torch.Tensor]:
        """The weights copied before the optimizer's step, into buffers kept between
        recorded steps (the step's update is their difference after it)."""
        kept = self._before
        if not _like(kept, weights):
            kept = self._before = [w.clone() for w in weights]
        else:
            torch._foreach_copy_(kept, weights)
        return kept

    def _compact(self, row: Row, acc: _Activations) -> None:
        """A hidden row's per-unit counts as the totals the statuses read, past
        `KEPT_PER_UNIT` units (so that a recorded step keeps a few numbers, not a few per
        unit), and no outputs kept."""
        acc.outputs = []
        if row is self._rows[-1]:
            return
        kind = self._activation.get(row, "linear")
        if kind in DYING and acc.sums[-1].numel() > KEPT_PER_UNIT:
            positive = acc.sums[-1]  # (float32 signs' sums, exact: totalled as int64)
            acc.sums[-1:] = [positive.sum(dtype=torch.int64), (positive == 0).sum()]
        elif kind in BANDS and acc.sums[-1].numel() > KEPT_PER_UNIT:
            low, high = acc.sums[-2:]
            stuck = ((low == acc.rows) | (high == acc.rows)).sum()
            acc.sums[-2:] = [low.sum(), high.sum(), stuck]
        if acc.sums[0].dim() > 0:  # (read per unit on the mapping step: as a hidden layer's)
            acc.sums[:3] = [acc.sums[0].sum(), acc.sums[1].sum()]

    def _reduce(self, acts: dict[Row, _Activations]) -> None:
        """Under torch.distributed: the activation sums of every rank, added (in place)."""
        if _distributed()[1] == 1:
            return
        present = list(acts.values())
        if not present:
            return
        flat = torch.cat(
            [torch.tensor([float(a.rows)], dtype=torch.float64) for a in present]
            + [s.to(torch.float64).reshape(-1) for a in present for s in a.sums]
        )
        dist.all_reduce(flat, group=self._group)
        rows, rest = flat[: len(present)], flat[len(present) :]
        offset = 0
        for i, a in enumerate(present):
            a.rows = round(float(rows[i]))
            reduced = []
            for s in a.sums:
                reduced.append(rest[offset : offset + s.numel()].reshape(s.shape).to(s.dtype))
                offset += s.numel()
            a.sums = reduced

    def _recount(self, acts: dict[Row, _Activations]) -> None:
        """On a step whose activations hold a NaN or inf: a ReLU's units above 0 counted
        as `count_nonzero` counts them (a NaN is not 0), not by `_above_zero`'s sign."""
        if _distributed()[1] > 1:  # (counted as bools there, and summed across ranks)
            return
        for row, acc in acts.items():
            if self._activation.get(row) in DYING and acc.outputs and row.units is not None:
                counts = [o.bool().sum(_other_axes(o, row.units)) for o in acc.outputs]
                acc.sums[-1] = torch.stack(counts).sum(0)

    def _count_nonfinite(self, acts: dict[Row, _Activations]) -> list[tuple[int, str | None]]:
        """The rare path: NaN/inf counted one tensor at a time, and the first quantity
        holding one, in the order the computation makes them (stats' `_QUANTITIES`)."""

        def bad(t: torch.Tensor | None) -> int:
            if t is None:
                return 0
            local, sharded = _local(t.detach())
            count = (~torch.isfinite(_dense(local))).sum().to(torch.float64)
            if sharded and _distributed()[1] > 1:
                dist.all_reduce(count, group=self._group)
            return int(count)

        out = []
        for row in self._rows:
            a = acts.get(row)
            read = "activations" if row in self._activation_module else "pre-activations"
            weights, biases = row.weights, row.biases
            counts = [
                ("weights", sum(bad(w) for w in weights)),
                ("biases", sum(bad(b) for b in biases)),
                (read, sum(bad(x) for x in (a.outputs if a else []))),
                ("gradients", sum(bad(p.grad) for _, p in row.params)),
            ]
            total = sum(n for _, n in counts)
            out.append((total, next((what for what, n in counts if n), None)))
        return out

    # -- reading -----------------------------------------------------------------------

    def log(self, loss: object = None, accuracy: object = None) -> None:
        """Add a point to the curves (a float or a tensor: kept as it is until read, so
        logging every step costs no device sync). Under torch.distributed a tensor is
        averaged over the ranks (each rank logs its own batch's): the global mean."""
        keep = []
        for v in (loss, accuracy):
            if isinstance(v, torch.Tensor):
                v = v.detach()
                if _distributed()[1] > 1:  # (a copy: the sum is written in place)
                    v = v.to(torch.float64).reshape(()).clone()
                    # (waited for here: gloo runs a group's outstanding operations on
                    # several threads, and one still in flight interleaved with the next
                    # recorded step's, "a distributed collective mismatch")
                    dist.all_reduce(v, group=self._group)
                    v = v / _distributed()[1]
            keep.append(v)
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

    def _write_tensorboard(self) -> None:
        """The recorded steps not yet in TensorBoard, each with its statistics, statuses
        and verdict (gradviz.torch.tensorboard, which imports TensorBoard's writer)."""
        from gradviz.torch.tensorboard import write_step  # lazy: start-up (TensorBoard)

        history = self.history()
        for step, diagnosis in history[self._written :]:
            write_step(self._tensorboard, step, diagnosis, history)
        self._written = len(history)

    def diagnosis(self) -> Diagnosis:
        """The latest recorded step's statistics (an InputError before any is recorded)."""
        history = self.history()
        if not history:
            raise InputError(self._nothing_yet())
        return history[-1][1]

    def _nothing_yet(self) -> str:
        if self._manual and self._optimizer is None:
            return "watch: nothing recorded yet (call rec.step() once the gradients are final)"
        return (
            "watch: nothing recorded yet: no optimizer holding the model's parameters has "
            "taken a step (or call watch(model, manual=True) and rec.step())"
        )

    def _diagnosis(self, pending: _Pending) -> Diagnosis:
        rows = pending.rows
        params = _params_of(rows)
        n = len(params)
        values = pending.norms.tolist()
        g2, w2 = values[:n], values[n : 2 * n]
        g1, gmax = [0.0] * n, [0.0] * n  # (read of the weights alone)
        positions = pending.weight_index
        m = len(positions)
        for j, k in enumerate(positions):
            g1[k], gmax[k] = values[2 * n + j], values[2 * n + m + j]
        updates = pending.updates.tolist() if pending.updates is not None else None
        before = pending.before_clip.tolist() if pending.before_clip is not None else None
        index = {id(p): i for i, p in enumerate(params)}
        sizes = [p.numel() for p in params]
        partly: dict[str, str] = {}
        counts = pending.nonfinite or [(0, None)] * len(self._rows)
        ordered = self._order_known(pending)
        clip_scale = None
        if before is not None:
            total_before = math.sqrt(math.fsum(v * v for v in before))
            total_after = math.sqrt(math.fsum(v * v for v in g2))
            clipped = total_before > 0 and total_after < total_before * (1 - 1e-6)
            if clipped and not _unscaled(before, g2):
                clip_scale = total_after / total_before
        layers, deltas = [], []
        for i, row in enumerate(rows):
            ids = [index[id(p)] for _, p in row.params]
            weights = [index[id(p)] for p in row.weights]
            biases = [index[id(p)] for p in row.biases]
            frozen = all(pending.frozen[k] for k in ids)
            part = [k for k in ids if pending.frozen[k]]
            if part and not frozen:  # partly frozen: the numbers are of the trained ones
                weights = [k for k in weights if not pending.frozen[k]]
                biases = [k for k in biases if not pending.frozen[k]]
                if not weights:  # (its biases alone trained: read them, as a row of biases)
                    weights, biases = biases, []
                some = sum(sizes[k] for k in part)
                names = ", ".join(n for n, p in row.params if pending.frozen[index[id(p)]])
                partly[row.name] = (
                    f"{row.name}: {names} "
                    f"frozen ({some:,} of its {row.n_params:,} parameters): its gradients are "
                    f"read of the other {row.n_params - some:,}."
                )
            n_params = row.n_params - sum(sizes[k] for k in part) if not frozen else row.n_params
            stats = self._row_stats(
                i, rows, pending, g2, w2, g1, gmax, weights, biases, sizes, n_params
            )
            stats.frozen = frozen
            # a norm's gain and shift (1-d) say nothing of a weight matrix's size; rows in
            # an order the forward pass was not seen to take are compared with nothing
            stats.compared = ordered and row.main.dim() >= 2 and row not in self._unplaced
            if part and not frozen and not set(weights) <= set(positions):  # (biases alone)
                stats.mean_abs = stats.max_abs = math.nan  # (Σ|g|, max|g|: of weights alone)
                stats.compared = False  # (a bias's gradient is not a weight matrix's)
            # (a row no optimizer of this training step holds: its update is not measured)
            stepped = pending.stepped is None or all(
                id(params[k]) in pending.stepped for k in weights
            )
            if updates is not None and not frozen and stepped:
                moved = math.sqrt(math.fsum(updates[k] ** 2 for k in weights))
                stats.update_data = _ratio(moved, math.sqrt(math.fsum(w2[k] ** 2 for k in weights)))
            if clip_scale is not None and before is not None:
                stats.clipped_from = math.sqrt(math.fsum(before[k] ** 2 for k in weights))
            stats.nonfinite, stats.nonfinite_in = counts[i]
            layers.append(stats)
            # ‖δ‖ of a layer: its bias gradient's norm, where the bias is a layer's and no
            # norm follows it (a norm cancels a bias: its gradient then tells nothing)
            following = rows[i + 1] if i + 1 < len(rows) else None
            cancelled = following is not None and isinstance(following.module, NORMS)
            delta = math.sqrt(math.fsum(g2[k] ** 2 for k in biases)) if biases else math.nan
            placed = ordered and row not in self._unplaced
            deltas.append(delta if placed and row.reads_a_layer and not cancelled else math.nan)
        self._partly_frozen = partly  # (the latest step's: `notes`)
        output = self._spread(pending.activations.get(rows[-1]))
        first = first_in_order([(lay.index, lay.nonfinite_in) for lay in layers])
        batch = layers[-1].batch
        judged = "update" if pending.adaptive else "gradient"
        return assess(
            layers, output[0], output[1], batch, first, pending.step, deltas, None,
            unit="step", judged_by=judged, optimizer=pending.optimizer, clip_scale=clip_scale,
        )  # fmt: skip

    def _row_stats(
        self,
        i: int,
        rows: list[Row],
        pending: _Pending,
        g2: list[float],
        w2: list[float],
        g1: list[float],
        gmax: list[float],
        weights: list[int],
        biases: list[int],
        sizes: list[int],
        n_params: int,
    ) -> LayerStats:
        row = rows[i]
        size = sum(sizes[k] for k in weights)
        n_bias = sum(sizes[k] for k in biases)
        shape = row.shape
        n_out = int(shape[0]) if shape else 1
        g_l2 = math.sqrt(math.fsum(g2[k] ** 2 for k in weights))
        w_l2 = math.sqrt(math.fsum(w2[k] ** 2 for k in weights))
        b_l2 = math.sqrt(math.fsum(g2[k] ** 2 for k in biases))
        act, unread = self._activation_numbers(row, pending, row is rows[-1])
        return LayerStats(
            index=i + 1,
            name=row.name,
            activation=self._activation.get(row, "linear"),
            is_output=i == len(rows) - 1,
            n_in=max(1, math.prod(shape) // max(n_out, 1)),
            n_out=n_out,
            n_params=n_params,
            batch=act["batch"],
            mean_abs=math.fsum(g1[k] for k in weights) / max(size, 1),
            max_abs=max((gmax[k] for k in weights), default=0.0),
            rms=g_l2 / math.sqrt(max(size, 1)),
            norm=g_l2,
            signal=b_l2 / math.sqrt(n_bias) if n_bias else math.nan,
            grad_data=_ratio(g_l2, w_l2),
            update_data=None,
            act_mean=act["mean"],
            act_std=act["std"],
            mean_slope=act["slope"],
            saturated=act["saturated"],
            dead=act["dead_units"] / (row.units or n_out),
            dead_units=act["dead_units"],
            nonfinite=0,
            nonfinite_in=None,
            unread=unread,
        )

    def _activation_numbers(
        self, row: Row, pending: _Pending, is_output: bool
    ) -> tuple[dict[str, Any], str | None]:
        """mean, std, slope, saturated, dead units of the activations read for `row`,
        from the per-unit sums (σ′ = σ − σ², tanh′ = 1 − a², ReLU′ = [a > 0], the others'
        Σ|slope| from their op row), and why they are missing where they are."""
        nan = math.nan
        missing = {"batch": 0, "mean": nan, "std": nan, "slope": nan, "saturated": None,
                   "dead_units": 0}  # fmt: skip
        acts = pending.activations.get(row)
        if pending.unread is not None:
            return missing, f"activations: {pending.unread}"
        if row.units is None:
            return missing, f"activations: the {row.kind}'s output is not one layer's units"
        if row in self._into_norm:
            return missing, f"activations: read at {self._into_norm[row]}, the norm that follows"
        if acts is None or acts.rows == 0:
            return missing, "activations: its output was not seen in the forward pass"
        kind = self._activation.get(row, "linear")
        sums = [s.tolist() for s in acts.sums]
        rows, n_out = acts.rows, row.units
        total = rows * n_out
        mean, square = _total(sums[0]) / total, _total(sums[1]) / total
        if not math.isfinite(mean + square):  # (a NaN or inf among them, or Σa² overflowed)
            mean = square = nan
        numbers: dict[str, Any] = {
            "batch": rows,
            "mean": mean,
            "std": math.sqrt(max(square - mean * mean, 0.0)),
            "slope": 1.0,
            "saturated": None,
            "dead_units": 0,
        }
        hidden = not is_output
        if kind in DYING:  # hidden: Σ[a > 0], dead units; the output: [a > 0] per unit
            if hidden and not isinstance(sums[-1], list):  # (totalled: `_compact`)
                positive, dead = sums[-2], sums[-1]
            else:
                positive, dead = _total(sums[-1]), sum(1 for c in sums[-1] if c == 0)
            numbers["slope"] = positive / total
            numbers["dead_units"] = int(dead)
            return numbers, None
        band = kind in BANDS
        totalled = hidden and band and not isinstance(sums[-1], list)  # (`_compact`)
        after = (3 if totalled else 2) if band else 0  # the band's counts, after Σ|slope|
        if kind in SLOPES:  # Σ|slope| from the op row, at the inputs
            numbers["slope"] = sums[-1 - after] / total
        elif kind in QUADRATIC_SLOPES:  # σ′ = σ − σ², tanh′ = 1 − a²: from Σa and Σa²
            c0, c1, c2 = QUADRATIC_SLOPES[kind]
            numbers["slope"] = c0 + sum(c * m for c, m in ((c1, mean), (c2, square)) if c)
        if band and totalled:  # Σ low, Σ high, stuck units
            numbers["saturated"] = (sums[-3] + sums[-2]) / total
            numbers["dead_units"] = int(sums[-1])
        elif band:  # per unit: below and above the band
            numbers["saturated"] = (_total(sums[-2]) + _total(sums[-1])) / total
            if hidden:  # (stuck: every row of the unit on one side)
                pairs = zip(sums[-2], sums[-1], strict=True)
                numbers["dead_units"] = sum(1 for low, high in pairs if rows in (low, high))
        return numbers, None

    def _order_known(self, pending: _Pending) -> bool:
        """Whether the rows of `pending` are in the forward pass's order: seen (mapped), or
        a model of Sequential containers alone, whose order is its modules'."""
        seen = pending.unread not in (COMPILED, UNSEEN)
        return seen or self._sequential

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

    def coverage(self) -> tuple[int, int]:
        """(parameters read, parameters in the model), counting each tensor once."""
        total = {id(p): p.numel() for p in self._base.parameters()}
        read = {id(p): p.numel() for p in self._params}
        return sum(read.values()), sum(total.values())

    def run(self) -> Run:
        """What was recorded, as a run (`records.Run`): what `save` writes."""
        history = self.history()
        if not history:
            raise InputError(self._nothing_yet())
        steps, loss, accuracy = self.curves()
        layers = [
            RunLayer(
                row.name,
                row.kind,
                row.shape,
                self._activation.get(row, "linear"),
                self._activation_module.get(row),
                tuple(name for name, _ in row.params) + tuple(row.also),
            )
            for row in self._rows
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
            notes=[*self.notes(), self.coverage_line()],
        )

    def report(self, title: str | None = None) -> RenderableType:
        """The table, the heat map over recorded steps and the verdict, as a rich
        renderable (what `table` prints)."""
        history = self.history()
        diagnosis = self.diagnosis()
        title = title or f"Gradients per layer: {self.model_name} at step {history[-1][0]}"
        lines = verdict(diagnosis, history) + self.notes() + [self.coverage_line()]
        return report(diagnosis, lines, history, title=title)

    def coverage_line(self) -> str:
        """The share of the model's parameters the table reads, in words."""
        read, total = self.coverage()
        return (
            f"Read {read:,} of the model's {total:,} parameters ({_share(read, total)}) in "
            f"{len(self._rows)} rows."
        )

    def notes(self) -> list[str]:
        """What the table did not read as it reads a plain MLP: tied tensors, activations
        gradviz does not know or could not read (no status rests on them)."""
        lines = []
        for row in self._rows:
            if len(row.names) > 1:
                lines.append(
                    f"{row.name}: one tensor in {len(row.names)} modules ({', '.join(row.also)} "
                    f"is {row.params[0][0]}): one row."
                )
        self._flush()  # (the latest recorded step's frozen tensors)
        lines += [
            self._partly_frozen[row.name] for row in self._rows if row.name in self._partly_frozen
        ]
        for row in self._rows:
            if row in self._unknown:
                lines.append(
                    f"the activation after layer {row.name} {self._unknown[row]}: its row is "
                    "read at the layer's output, as linear (slope 1, no saturation)"
                )
        if not self._mapped:
            lines.append(
                f"Activations not read: {COMPILED if self._compiled else UNSEEN}; dead and "
                "saturated units are not checked, and no status rests on them."
            )
            if not self._sequential:
                lines.append(
                    "Rows in the modules' order: the forward pass's order was not seen, so no "
                    "layer is compared with another (no vanishing or weak status, no hop)."
                )
        else:
            if self._unplaced:
                names = ", ".join(row.name for row in self._rows if row in self._unplaced)
                lines.append(
                    f"{names}: not called in the forward pass of step {self._mapped_at}, which "
                    "gave the rows' order: placed before the output layer (in the modules' "
                    "order), a place not seen, so compared with no other layer (no vanishing "
                    "or weak status, no hop)."
                )
            other = [row for row in self._rows if row.units is None]
            if other:
                kinds = ", ".join(dict.fromkeys(row.kind for row in other))
                lines.append(
                    f"Activations not read for {', '.join(row.name for row in other)} "
                    f"({kinds}: the output is not one layer's units); their gradients are."
                )
        return lines

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
            if self._tensorboard is not None:
                self._write_tensorboard()

    def close(self) -> None:
        """Detach every hook: the model and the optimizer run as if never watched (and
        write what TensorBoard has not seen yet)."""
        self._disarm()
        if self._tensorboard is not None and _distributed()[0] == 0:
            self._write_tensorboard()
        for hook in self._optimizer_hooks:
            hook.remove()
        self._optimizer_hooks = []


# Each recorder's global step hooks, by a weak reference to it: those of recorders gone
# are removed when the next is made (`_global_hooks`), never from inside a hook, where
# torch is iterating over them ("OrderedDict mutated during iteration").
_GLOBAL: list[tuple[weakref.ref[Recorder], list[RemovableHandle]]] = []


def _global_hooks(recorder: Recorder) -> list[RemovableHandle]:
    """torch's global optimizer step hooks for `recorder`, holding it weakly: a recorder
    nobody holds any more (its model gone) does nothing at a step, and its hooks go when
    the next recorder is made."""
    for gone, handles in _GLOBAL:
        if gone() is None:
            for handle in handles:
                handle.remove()
    _GLOBAL[:] = [(ref, handles) for ref, handles in _GLOBAL if ref() is not None]
    ref = weakref.ref(recorder)

    def pre(optimizer: torch.optim.Optimizer, args: tuple, kwargs: dict) -> Any:
        live = ref()
        return None if live is None else live._pre_step(optimizer, args, kwargs)

    def post(optimizer: torch.optim.Optimizer, args: tuple, kwargs: dict) -> None:
        live = ref()
        return None if live is None else live._post_step(optimizer, args, kwargs)

    handles = [register_optimizer_step_pre_hook(pre), register_optimizer_step_post_hook(post)]
    _GLOBAL.append((ref, handles))
    return handles


def _whole_sum(acts: _Activations) -> torch.Tensor:
    """Σa of a row's activations (Σ|a| where it is read per unit): finite unless an
    activation is NaN or inf, or the sum overflows."""
    return acts.sums[0] if acts.sums[0].dim() == 0 else acts.sums[2]


def _loss_scale() -> float:
    """The loss scale of the torch.amp.GradScaler whose `step(optimizer)` is among the
    callers (1 without one): the backward pass's gradients are that many times those the
    optimizer steps with, unscaled in between (the scale only changes at its `update()`)."""
    frame = sys._getframe(1)
    for _ in range(16):  # (the scaler's step, the optimizer's hooks, the recorder's calls)
        if frame is None:
            break
        if frame.f_code.co_name in ("step", "_maybe_opt_step"):
            scaler = frame.f_locals.get("self")
            if isinstance(scaler, torch.amp.GradScaler):
                return scaler.get_scale()  # (1 when disabled)
        frame = frame.f_back
    return 1.0


def _unscaled(before: list[float], after: list[float]) -> bool:
    """Whether every gradient's norm changed from the end of the backward pass to the step
    by one same power of two: a loss scale undone (a GradScaler's unscale_, where its step
    is not among the callers: `rec.step()` in a framework's hook), not clipping."""
    ratios = {a / b for a, b in zip(after, before, strict=True) if b > 0}
    return len(ratios) == 1 and math.frexp(ratios.pop())[0] == 0.5


def _like(kept: list[torch.Tensor] | None, tensors: list[torch.Tensor]) -> bool:
    """Whether buffers kept between recorded steps still fit `tensors` one for one."""
    return (
        kept is not None
        and len(kept) == len(tensors)
        and all(
            k.shape == t.shape and k.dtype == t.dtype and k.device == t.device
            for k, t in zip(kept, tensors, strict=True)
        )
    )


def _params_of(rows: list[Row]) -> list[torch.Tensor]:
    """The rows' parameters in the rows' order: the order of every per-parameter list."""
    return [p for row in rows for _, p in row.params]


def _weight_positions(rows: list[Row]) -> list[int]:
    """Where the rows' weights are among their parameters (in the rows' order): Σ|g| and
    max|g| are read of these alone (and of the biases of a row whose weights alone are
    frozen: its numbers are of its biases)."""
    weights = {id(w) for row in rows for w in row.weights}
    weights |= {
        id(b)
        for row in rows
        if not any(w.requires_grad for w in row.weights)
        for b in row.biases
        if b.requires_grad
    }
    params = _params_of(rows)
    return [k for k, p in enumerate(params) if id(p) in weights]


def _other_axes(t: torch.Tensor, units: int) -> tuple[int, ...] | None:
    """The axes of `t` other than its units' (the last, or the channels of a convolution's
    output, axis 1), or None if it has no axis of that size."""
    if t.dim() == 0:
        return None
    if t.shape[-1] == units:
        axis = t.dim() - 1
    elif t.dim() >= 2 and t.shape[1] == units:
        axis = 1
    else:
        return None
    return tuple(i for i in range(t.dim()) if i != axis)


def _total(x: float | list[float]) -> float:
    """A sum kept whole or per unit, whole (NaN where a unit's is NaN or ±inf: fsum
    refuses inf − inf, and an activation holding one has no mean to tell)."""
    if not isinstance(x, list):
        return x
    return math.fsum(x) if all(map(math.isfinite, x)) else math.nan


def _ratio(top: float, bottom: float) -> float | None:
    if not (math.isfinite(top) and math.isfinite(bottom)) or bottom == 0:
        return None
    return top / bottom


def _listed(names: list[str]) -> str:
    """Row names, the first and last few of a long list."""
    if len(names) <= 4:
        return ", ".join(names)
    return f"{', '.join(names[:2])}, …, {names[-1]} ({len(names)} rows)"


def _share(part: int, whole: int) -> str:
    if whole == 0 or part == whole:
        return "all"
    return f"{100 * part / whole:.1f}%"


def watch(
    model: nn.Module,
    every: int = DEFAULT_EVERY,
    optimizer: torch.optim.Optimizer | None = None,
    *,
    manual: bool = False,
    nan_check: bool = True,
    tensorboard: Any = None,
) -> Recorder:
    """Record `model`'s gradients row by row at every `every`-th step: at each step of any
    optimizer holding its parameters (after clipping and DDP's all-reduce), or of the one
    `optimizer` given; with `manual=True` only at `rec.step()` (for framework callbacks
    that choose the moment). Between recorded steps each gradient's sum finds
    the first NaN/inf and records that step in full (`nan_check=False`: not, for the
    last few percent of speed). `tensorboard=SummaryWriter(...)` writes each recorded
    step's statistics there as scalars (`gradviz/<layer>/<statistic>`) and the verdict as
    text, as each step is complete (gradviz.torch.tensorboard). See `Recorder`."""
    return Recorder(
        model, every, optimizer, manual=manual, nan_check=nan_check, tensorboard=tensorboard
    )
