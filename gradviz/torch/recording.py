"""Keep what autograd throws away: every op's output value and its gradient, and the
module each op ran in, so a drawing of a PyTorch loss shows data and grad on every node.

    with gradviz.torch.record(model) as rec:
        loss = loss_fn(model(x), y)
        loss.backward()
    rec.draw()                  # the module view; rec.draw(level="op") every op

Three of PyTorch's own hooks, each doing one thing:
- a `TorchDispatchMode` sees every aten op below autograd (inside Python composites such
  as multi-head attention too) and keeps a reference to each result; autograd then sets
  that very tensor's `grad_fn`, so after the op a result is filed under the autograd
  node that made it (`grad_fn`, `output_nr`). An op that later changes a kept result in
  place (`relu_`) bumps its version: the value is then reported as not kept, never wrong.
- a pre-hook on each of those autograd nodes (`Node.register_prehook`) receives the
  gradients of the loss with respect to the node's outputs during `backward()`;
- global module forward hooks say which module (by its path in the model, `1.self_attn`)
  each op ran in, and each module call's input and output tensors.
When the backward pass starts, each node's saved-for-backward tensors are measured
(bytes, each storage counted once per node): they are freed as it runs. Tensors packed
by saved-tensor hooks (`torch.utils.checkpoint`, offloading) are not measured: reading
them would run the hook. Gradient checkpointing's recomputation in the backward pass (a
module's forward there, or ops under checkpoint's hooks) is not recorded: the forward
pass's ops and values are the ones drawn, once.

Cost: every result and every gradient is kept alive until the recording is dropped (the
activations' memory twice over), and each aten op pays a Python call (bench/README.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

from gradviz.errors import InputError

if TYPE_CHECKING:
    import graphviz

    from gradviz.render.diagram import Diagram


@dataclass
class ModuleCall:
    """One call of a module: its path in the model (`0.linear1`), which call of that
    module it was (1 for the first), and its input and output tensors."""

    path: str
    kind: str  # the module's class name
    call: int
    inputs: tuple[torch.Tensor, ...] = field(repr=False)
    outputs: tuple[torch.Tensor, ...] = field(repr=False)
    parent: int | None = None  # the index of the call this one ran inside


@dataclass
class Recording:
    """What `record` kept: results and gradients by autograd node, and module calls."""

    model: nn.Module | None = None
    # autograd node -> output number -> (the result, detached once read; its version when kept)
    values: dict[Any, dict[int, tuple[torch.Tensor, int]]] = field(default_factory=dict)
    grads: dict[Any, tuple[torch.Tensor | None, ...]] = field(default_factory=dict)
    module_of: dict[Any, int] = field(default_factory=dict)  # node -> index into calls
    calls: list[ModuleCall] = field(default_factory=list)
    saved_bytes: dict[Any, int] = field(default_factory=dict)
    root: Any = None  # the node backward() started from
    _names: dict[int, str] = field(default_factory=dict)
    _pending: list[tuple[torch.Tensor, int | None]] = field(default_factory=list)
    _stack: list[int] = field(default_factory=list)
    _counts: dict[str, int] = field(default_factory=dict)
    _hooked: set[Any] = field(default_factory=set)
    _replays: int = 0  # module calls open in checkpoint's recomputation (in backward())
    _packed: set[Any] = field(default_factory=set)  # nodes whose saved tensors hooks packed
    _packed_pending: list[torch.Tensor] = field(default_factory=list)  # (their results)

    # -- reading ------------------------------------------------------------------------

    def value(self, fn: object, output: int = 0) -> torch.Tensor | None:
        """The result `fn` made (its output `output`), None when not kept or changed in
        place since."""
        outputs = self.values.get(fn, {})
        kept = outputs.get(output)
        if kept is None:
            return None
        tensor, version = kept
        if tensor._version != version:
            return None
        if tensor.requires_grad:  # (kept as made; detached once, here: see `_flush`)
            tensor = tensor.detach()
            outputs[output] = (tensor, version)
        return tensor

    def changed_in_place(self, fn: object, output: int = 0) -> bool:
        """Whether the result `fn` made was kept and an op has changed it in place since
        (a GRU cell's `add_` then `sigmoid_`): why `value` is None."""
        kept = self.values.get(fn, {}).get(output)
        return kept is not None and kept[0]._version != kept[1]

    def grad(self, fn: object, output: int = 0) -> torch.Tensor | None:
        """∂loss/∂(the result `fn` made), None when backward() did not reach it."""
        grads = self.grads.get(fn)
        if grads is None or output >= len(grads):
            return None
        return grads[output]

    def call_of(self, fn: object) -> ModuleCall | None:
        index = self.module_of.get(fn)
        return None if index is None else self.calls[index]

    def root_node(self) -> object:
        """The autograd node backward() started from; before backward(), the last one
        that made a scalar."""
        if self.root is not None:
            return self.root
        for fn in reversed(list(self.values)):
            kept = self.value(fn)
            if kept is not None and kept.numel() == 1:
                return fn
        raise InputError(
            "record: no scalar was recorded (compute the loss inside `with record() as rec:`)"
        )

    # -- drawing ------------------------------------------------------------------------

    def diagram(self, loss: torch.Tensor | None = None, **options: Any) -> Diagram:
        """`gradviz.torch.diagram` of `loss` (by default the one backward() ran from)
        with every value and gradient kept here; options as there (`level`, `depth`)."""
        from gradviz.torch.graph import diagram  # lazy: start-up

        return diagram(loss, self.model, recording=self, **options)

    def draw(self, loss: torch.Tensor | None = None, **options: Any) -> graphviz.Digraph:
        from gradviz.torch.graph import draw  # lazy: start-up

        return draw(loss, self.model, recording=self, **options)

    def page(self, loss: torch.Tensor | None = None, **options: Any) -> str:
        """The live HTML page stepping through the backward pass (`gradviz.torch.steps`)."""
        from gradviz.torch.steps import page  # lazy: start-up

        return page(self.diagram(loss, **options))

    def animation(self, loss: torch.Tensor | None = None, **options: Any) -> bytes:
        """The backward pass as one animated SVG, as `trace --animate` writes it."""
        from gradviz.torch.steps import animation  # lazy: start-up

        return animation(self.diagram(loss, **options))

    # -- recording ----------------------------------------------------------------------

    def _name(self, module: nn.Module) -> str:
        if module is self.model:
            return ""
        name = self._names.get(id(module))
        if name is None:  # not in the model: its class, numbered
            kind = type(module).__name__
            self._counts[kind] = self._counts.get(kind, 0) + 1
            name = f"{kind}#{self._counts[kind]}"
            self._names[id(module)] = name
        return name

    def _enter(self, module: nn.Module, args: tuple) -> None:
        if self._replays or in_backward():
            self._replays += 1  # (no module runs its forward in backward() but to recompute)
            return
        if self.model is None and not self._stack:
            self.model = module
        if not self._names and self.model is not None:
            self._names = {id(m): name for name, m in self.model.named_modules()}
        path = self._name(module)
        seen = sum(c.path == path for c in self.calls)
        parent = self._stack[-1] if self._stack else None
        self.calls.append(
            ModuleCall(path, type(module).__name__, seen + 1, _tensors(args), (), parent)
        )
        self._stack.append(len(self.calls) - 1)

    def _exit(self, module: nn.Module, output: object) -> None:
        if self._replays:
            self._replays -= 1
            return
        if not self._stack:
            return
        index = self._stack.pop()
        self._flush()
        outputs = self.calls[index].outputs = _tensors(output)
        # an output without an autograd node yet may get one when a custom autograd
        # Function returns it (reentrant checkpoint runs the module so, gradients off):
        # filed under this call at the next op, its value and gradient kept
        self._pending += [(t, index) for t in outputs if t.grad_fn is None]
        if _hooks_on():
            self._packed_pending += outputs

    def _result(self, tensor: torch.Tensor) -> None:
        self._pending.append((tensor, self._stack[-1] if self._stack else None))

    def _flush(self) -> None:
        """File the results of the ops before this one under their autograd nodes (set
        by now), and hook those nodes for their output gradients."""
        for tensor, call in self._pending:
            fn = tensor.grad_fn
            if fn is None:
                continue
            # the tensor itself: one detached inside the dispatch would not share its
            # version counter (autograd's keys are off there), and an in-place change
            # after it would go unseen (the value drawn then was the changed one)
            outputs = self.values.setdefault(fn, {})
            outputs[tensor.output_nr] = (tensor, tensor._version)
            if call is not None:
                self.module_of.setdefault(fn, call)
            if fn not in self._hooked:
                self._hooked.add(fn)
                fn.register_prehook(self._grad_hook(fn))
        self._pending.clear()
        for tensor in self._packed_pending:
            if tensor.grad_fn is not None:
                self._packed.add(tensor.grad_fn)
        self._packed_pending.clear()

    def _grad_hook(self, fn: object):
        def hook(grad_outputs: tuple[torch.Tensor | None, ...]) -> None:
            if self.root is None:
                self.root = fn
                self._measure_saved()
            self.grads[fn] = tuple(None if g is None else g.detach() for g in grad_outputs)

        return hook

    def _measure_saved(self) -> None:
        """Each kept node's saved-for-backward bytes, while they still exist; not those
        saved-tensor hooks packed: unpacking would run the hook (checkpoint's
        recomputation, which runs once)."""
        for fn in list(self.values):  # (a snapshot: nothing measured may add to it)
            if fn not in self._packed:
                self.saved_bytes[fn] = saved_bytes(fn)


def in_backward() -> bool:
    """Whether the backward pass is running: a forward call now is gradient checkpointing's
    recompute (torch.utils.checkpoint), a second run of a forward already seen."""
    return torch._C._current_graph_task_id() != -1


def _hooks_on() -> bool:
    """Whether saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks) are on."""
    return torch._C._autograd._top_saved_tensors_default_hooks(False) is not None


def saved_bytes(fn: object) -> int:
    """The bytes of the tensors autograd saved on `fn` for its backward (each storage
    once); 0 once backward() has freed them."""
    seen: set[int] = set()
    total = 0
    for name in dir(fn):
        if not name.startswith("_saved_") and name != "saved_tensors":  # (a custom Function)
            continue
        try:
            saved = getattr(fn, name)
        except RuntimeError:  # freed by backward()
            continue
        for t in saved if isinstance(saved, tuple | list) else (saved,):
            if isinstance(t, torch.Tensor):
                storage = t.untyped_storage()
                if storage.data_ptr() not in seen:
                    seen.add(storage.data_ptr())
                    total += storage.nbytes()
    return total


def _tensors(value: object) -> tuple[torch.Tensor, ...]:
    """The tensors in a module's inputs or outputs (tuples and lists, one level deep,
    and one more for an LSTM's `(h, c)`)."""
    if isinstance(value, torch.Tensor):
        return (value,)
    if isinstance(value, tuple | list):
        found: list[torch.Tensor] = []
        for item in value:
            if isinstance(item, torch.Tensor):
                found.append(item)
            elif isinstance(item, tuple | list):
                found += [t for t in item if isinstance(t, torch.Tensor)]
        return tuple(found)
    return ()


class _Mode(TorchDispatchMode):
    def __init__(self, recording: Recording) -> None:
        super().__init__()
        self.recording = recording

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        recording = self.recording
        if recording._pending:
            recording._flush()
        out = func(*args, **(kwargs or {}))
        # (off in backward(), whose ops are not the model's; on in checkpoint's
        # recomputation there, not recorded: in a module's forward, or under its hooks)
        if not torch.is_grad_enabled() or recording._replays:
            return out
        packed = _hooks_on()
        if packed and in_backward():
            return out
        # (autograd sets requires_grad and grad_fn above this level, after the op:
        # `_flush` keeps the results that got one)
        if isinstance(out, torch.Tensor):
            results = [out]
        elif isinstance(out, tuple | list):
            results = [t for t in out if isinstance(t, torch.Tensor)]
        else:
            return out
        for t in results:
            recording._result(t)
        if packed:
            recording._packed_pending += results
        return out


@contextmanager
def record(model: nn.Module | None = None) -> Iterator[Recording]:
    """Keep every op's result, its gradient and its module while the block runs (see
    the module's docstring). `model` names modules and parameters by their path; by
    default the first module called is the model. Run the forward pass and backward()
    inside the block (backward() may also come after it)."""
    if model is not None and not isinstance(model, nn.Module):
        raise InputError(f"record: expected a torch.nn.Module, got {type(model).__name__}")
    recording = Recording(model=model)
    pre = nn.modules.module.register_module_forward_pre_hook(
        lambda module, args: recording._enter(module, args)
    )
    post = nn.modules.module.register_module_forward_hook(
        lambda module, args, output: recording._exit(module, output)
    )
    try:
        with _Mode(recording):
            yield recording
    finally:
        pre.remove()
        post.remove()
        recording._flush()
        recording._stack.clear()
