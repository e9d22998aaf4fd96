"""The scalar autograd engine: `Value` nodes and backpropagation over the op table.

A `Value` remembers its op, its parents (in order, with repeats: `x*x` has two) and, from
the op table (`gradviz.ops`), the local derivative d(node)/d(parent) of each. Backward is the
chain rule read off that memory, outputs first: `parent.grad += local * node.grad` (a value
used twice gets both credits). `data` and `grad` are floats, or numpy arrays of samples.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from gradviz.numbers import fmt, loaded_numpy
from gradviz.ops import ABS, ADD, DIV, MUL, NEG, POW, SUB, UNARY_OPS, Number, Op, power_op
from gradviz.ops import TANH as TANH  # (re-exported, with the others, for code using `apply`)
from gradviz.ops import number as _result

# NaN and inf are results we show: no numpy warnings about them from gradviz's modules.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"gradviz(\.|$)")


def as_data(x: object) -> Number:
    """Convert user input to engine data: a float or a float64 array."""
    numpy = loaded_numpy()  # None: then no numpy value can exist yet
    if numpy is not None and isinstance(x, numpy.ndarray):
        return _result(numpy.asarray(x, dtype=numpy.float64))
    # bool is an int, and micrograd's code relies on `Value(True)` (gradviz.expr refuses it)
    if not (isinstance(x, int | float) or (numpy is not None and isinstance(x, numpy.number))):
        raise TypeError(f"a Value holds a number or a numpy array, not {type(x).__name__}")
    return float(x)


class Value:
    """A scalar (or a batch of them) with its gradient: a leaf (`Value(2.0, label="a")`) or
    made by an op; plain numbers in expressions become `Constant` leaves."""

    __slots__ = ("data", "grad", "op", "parents", "locals", "label")

    def __init__(
        self,
        data: object,
        label: str | None = None,
        op: Op | None = None,
        parents: tuple[Value, ...] = (),
        locals: tuple[Number, ...] = (),
    ) -> None:
        self.data: Number = data if type(data) is float else as_data(data)
        self.grad: Number = 0.0
        self.op = op  # the op that made this node; None for a leaf (apply gives the rest)
        self.parents = parents  # the op's inputs, in order
        self.locals = locals  # d(self)/d(parent), one per parent
        self.label = label

    @property
    def a(self) -> Value | None:  # the op's inputs, as its formulas name them
        return self.parents[0] if self.parents else None

    @property
    def b(self) -> Value | None:
        return self.parents[1] if len(self.parents) == 2 else None

    @property
    def is_leaf(self) -> bool:
        return self.op is None

    # micrograd's names, read-only, for its `draw_dot` and `nn.py`: `_prev` a new set each call
    @property
    def _prev(self) -> set[Value]:
        return set(self.parents)

    @property
    def _op(self) -> str:
        return "" if self.op is None else self.op.micrograd or self.op.symbol

    def __add__(self, other: Value | float) -> Value:
        return _binary(ADD, self, other)

    def __radd__(self, other: float) -> Value:
        return _binary(ADD, other, self)

    def __mul__(self, other: Value | float) -> Value:
        return _binary(MUL, self, other)

    def __rmul__(self, other: float) -> Value:
        return _binary(MUL, other, self)

    def __sub__(self, other: Value | float) -> Value:
        return _binary(SUB, self, other)

    def __rsub__(self, other: float) -> Value:
        return _binary(SUB, other, self)

    def __truediv__(self, other: Value | float) -> Value:
        return _binary(DIV, self, other)

    def __rtruediv__(self, other: float) -> Value:
        return _binary(DIV, other, self)

    def __neg__(self) -> Value:
        return _unary(NEG, self)

    def __abs__(self) -> Value:
        return _unary(ABS, self)

    def __pow__(self, other: Value | float) -> Value:
        if isinstance(other, Value):
            return apply(POW, self, other)
        return apply(power_op(float(as_data(other))), self)  # x**2: no edge to a constant

    def __rpow__(self, other: float) -> Value:
        return apply(POW, other, self)

    if TYPE_CHECKING:  # v.exp(), v.tanh(), ...: one per expression function (at the end)

        def __getattr__(self, name: str) -> Callable[[], Value]: ...

    def backward(self) -> None:
        """Add d(self)/d(node) into every `node.grad`, as micrograd and PyTorch do, but from a
        pass from zero (micrograd passes stale inner grads of shared nodes on again)."""
        order = topological_order(self)
        held = [(node, node.grad) for node in order if type(node.grad) is not float or node.grad]
        backpropagate(order)
        for node, earlier in held:
            node.grad = earlier + node.grad

    def zero_grad(self) -> None:  # self and every node it depends on
        for node in topological_order(self):
            node.grad = 0.0

    def __repr__(self) -> str:
        name = f"{self.label}, " if self.label else ""
        return f"Value({name}data={fmt(self.data)}, grad={fmt(self.grad)})"


class Constant(Value):
    """A number in an expression (the 2 of `2*x`) or made under `no_grad`: no gradient."""

    __slots__ = ()


_recording = True  # False under no_grad: results are constants


@contextmanager
def no_grad() -> Iterator[None]:
    """Values computed inside are constants, as under `torch.no_grad()` (one thread)."""
    global _recording
    previous, _recording = _recording, False
    try:
        yield
    finally:
        _recording = previous


def apply(op: Op, *inputs: Value | float) -> Value:
    """The node of `op` over `inputs` (numbers become constants): `x * y` is `apply(MUL, x, y)`."""
    if len(inputs) != op.arity:
        raise TypeError(f"{op.name} takes {op.arity} argument(s), got {len(inputs)}")
    return _unary(op, *inputs) if op.arity == 1 else _binary(op, *inputs)


def _unary(op: Op, a: Value | float) -> Value:  # apply, for one input (and two below)
    if not isinstance(a, Value):
        a = Constant(a)
    out = op.forward(a.data)
    if not _recording:
        return Constant(out)
    return Value(out, None, op, (a,), op.local(out, a.data))


def _binary(op: Op, a: Value | float, b: Value | float) -> Value:
    if not isinstance(a, Value):
        a = Constant(a)
    if not isinstance(b, Value):
        b = Constant(b)
    out = op.forward(a.data, b.data)
    if not _recording:
        return Constant(out)
    return Value(out, None, op, (a, b), op.local(out, a.data, b.data))


def topological_order(root: Value) -> list[Value]:
    """Every node root depends on, parents first, depth first and left to right (any depth)."""
    order: list[Value] = []
    seen, stack = {root}, [root]
    while stack:
        node = stack[-1]
        for parent in node.parents:  # the first parent not yet seen goes on top, ...
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
                break
        else:  # ... and once all of them are done, so is the node
            order.append(stack.pop())
    return order


# on_edge(node, input_index, parent, local, contribution)
EdgeObserver = Callable[[Value, int, Value, Number, Number], None]


def backpropagate(order: list[Value], on_edge: EdgeObserver | None = None) -> None:
    """The backward pass, from zero, over a topological order ending at the output: each
    node passes its grad to each parent times the local derivative. A detach, and nodes
    behind one, pass nothing on (not even 0·inf = nan). `on_edge` is called on every edge
    right after `parent.grad += contribution`: the trace is built from the engine's numbers."""
    for node in order:
        node.grad = 0.0
    root = order[-1]
    root.grad = 1.0 if type(root.data) is float else loaded_numpy().ones_like(root.data)
    for node in reversed(_credited(order)):
        grad = node.grad
        if node.op is not None and node.op.chain:
            _credit_as_written(node, on_edge)
            continue
        for index, parent in enumerate(node.parents):
            local = node.locals[index]  # d(node)/d(parent)
            contribution = local * grad
            parent.grad += contribution
            if on_edge is not None:
                on_edge(node, index, parent, local, contribution)


def _credit_as_written(node: Value, on_edge: EdgeObserver | None) -> None:
    """An op whose row writes the product (`Op.chain`): log's grad/a, where 1/a overflows."""
    credits = node.op.credit(node.grad, node.data, *[p.data for p in node.parents])
    for index, (parent, contribution) in enumerate(zip(node.parents, credits, strict=True)):
        parent.grad += contribution
        if on_edge is not None:
            on_edge(node, index, parent, node.locals[index], contribution)


def _credited(order: list[Value]) -> list[Value]:  # all, unless a detach stops the credit
    if all(op is None or op.passes_credit for op in {node.op for node in order}):
        return order  # (the leaves have no parents to pass credit to)
    seen = reached(order)
    return [node for node in order if node in seen and node.parents and node.op.passes_credit]


def reached(order: list[Value]) -> set[Value]:
    """The nodes the output's credit reaches: those with a path to it free of detach."""
    seen = {order[-1]}
    for node in reversed(order):
        if node in seen and node.op is not None and node.op.passes_credit:
            seen.update(node.parents)
    return seen


def evaluate(order: list[Value]) -> Number:
    """Recompute every op node's data and local derivatives (after leaves changed)."""
    for node in order:
        if node.op is not None:
            data = [p.data for p in node.parents]
            node.data = node.op.forward(*data)
            node.locals = node.op.local(node.data, *data)
    return order[-1].data


class Graph:
    """A built graph kept for re-evaluation: change leaf data, forward and backward again."""

    def __init__(self, output: Value) -> None:
        self.output = output
        self.nodes = topological_order(output)

    @property
    def leaves(self) -> list[Value]:
        return [n for n in self.nodes if n.op is None]

    def forward(self) -> Number:
        return evaluate(self.nodes)

    def backward(self) -> None:
        """A backward pass from zero: the grads of the current data, never added to the last."""
        backpropagate(self.nodes)

    def zero_grad(self) -> None:
        for node in self.nodes:
            node.grad = 0.0


def _function(op: Op) -> Callable[[Value | float], Value]:
    def function(x: Value | float) -> Value:
        return _unary(op, x)

    function.__name__ = function.__qualname__ = op.name
    function.__doc__ = f"{op.name}(x): local derivative {op.formulas[0]}."
    return function


for _op in UNARY_OPS.values():  # exp(x) and v.exp(), ...: `abs` shadows the builtin here only
    globals()[_op.name] = _function(_op)
    setattr(Value, _op.name, globals()[_op.name])
del _op
