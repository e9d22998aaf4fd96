"""The scalar autograd engine: `Value` nodes and backpropagation over the op table.

A `Value` remembers how it was computed: its op, its parents (in order, with repeats:
`x*x` has two), and the op's local derivative for each parent, d(node)/d(parent), worked
out by the op table (`gradviz.ops`) when the node is made. So the graph is the memory of
the computation, and backpropagation is the chain rule read straight off it: walk the
nodes outputs first and, on every edge, `parent.grad += local * node.grad`. A value used
twice adds up the credit of both uses. What each op computes and what its derivatives
are is the op table's: the engine only walks the graph.

`data` and `grad` are floats, or numpy arrays holding a batch of independent samples:
one graph then evaluates every sample at once, and each node's grad holds the
per-sample gradients (sum them for a batch gradient).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeAlias

from gradviz.lazy import loaded_numpy, np
from gradviz.numbers import fmt
from gradviz.ops import ABS, ADD, DIV, MUL, NEG, POW, SUB, UNARY_OPS, Op, power_op
from gradviz.ops import TANH as TANH  # (re-exported, with the others, for code using `apply`)
from gradviz.ops import number as _result

# numpy is imported on first use (gradviz.lazy): a graph of plain floats never needs it.
Number: TypeAlias = "float | np.ndarray"

# NaN and inf are results we show, not errors: silence numpy's warnings about
# them, but only those raised from gradviz's own modules.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"gradviz(\.|$)")


def as_data(x: object) -> Number:
    """Convert user input to engine data: a float or a float64 array."""
    numpy = loaded_numpy()  # None: then no numpy value can exist yet
    if numpy is not None and isinstance(x, numpy.ndarray):
        return _result(numpy.asarray(x, dtype=numpy.float64))
    number = isinstance(x, int | float) or (numpy is not None and isinstance(x, numpy.number))
    # bool is an int in Python, and micrograd's code relies on it (`Value(True)`); the
    # expression language refuses `True` on its own (gradviz.expr).
    if not number:
        raise TypeError(f"a Value holds a number or a numpy array, not {type(x).__name__}")
    return float(x)


class Value:
    """A scalar (or a batch of scalars) in a computation graph, with its gradient.

    A leaf is made by the user (`Value(2.0, label="a")`); every other Value is made
    by an op and remembers it. Plain numbers mixed into expressions become
    `Constant` leaves.
    """

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
    def a(self) -> Value | None:  # the op's first input
        return self.parents[0] if self.parents else None

    @property
    def b(self) -> Value | None:  # the op's second input, if it has two
        return self.parents[1] if len(self.parents) == 2 else None

    @property
    def is_leaf(self) -> bool:
        return self.op is None

    # -- micrograd's names, read-only, so its `draw_dot` and `nn.py` run unchanged ----

    @property
    def _prev(self) -> set[Value]:
        """micrograd's parents: a new set each call (so `x*x` has one), never stored."""
        return set(self.parents)

    @property
    def _op(self) -> str:
        """micrograd's op string: '+', '*', '**2', 'ReLU', 'tanh', '' for a leaf; '-' and
        '/' for subtraction and division (one node here, where micrograd composes them)."""
        return "" if self.op is None else self.op.micrograd or self.op.symbol

    # -- building: every op is `apply(op, ...)`; `2 - x` is x.__rsub__(2) ---------------

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

    # -- using ------------------------------------------------------------------

    def backward(self) -> None:
        """Add d(self)/d(node) into `node.grad` for every node self depends on.

        `.grad` accumulates, as in micrograd and PyTorch (`zero_grad()` empties it), but
        each call's own pass is exact even where graphs share nodes (micrograd passes
        stale inner grads on again): the grads held are set aside, the pass runs from
        zero (`backpropagate`, the CLI's pass), then they are added back."""
        order = topological_order(self)
        held = [(node, node.grad) for node in order if type(node.grad) is not float or node.grad]
        backpropagate(order)
        for node, earlier in held:
            node.grad = earlier + node.grad

    def zero_grad(self) -> None:
        """Set the grad of self and of every node it depends on to 0 (before a backward
        whose numbers should not add to the last one's)."""
        for node in topological_order(self):
            node.grad = 0.0

    def __repr__(self) -> str:
        name = f"{self.label}, " if self.label else ""
        return f"Value({name}data={fmt(self.data)}, grad={fmt(self.grad)})"


class Constant(Value):
    """A plain number in an expression (the 2 of `2*x`), or a value made under `no_grad`:
    a leaf like any other for the engine, which the pictures and the trace show by its
    number, with no gradient and no step of its own (nobody can nudge it)."""

    __slots__ = ()


_recording = True  # False under no_grad: results are constants


@contextmanager
def no_grad() -> Iterator[None]:
    """Values computed inside are constants, as under `torch.no_grad()`: no graph is kept
    and no gradient flows back through them (for an update step or an evaluation).
    `detach(x)` differs: its node stays in the graph (drawn as a "no grad" edge) and
    `Graph.forward` recomputes it; only the gradient stops there. A module-level switch:
    not for use from several threads at once."""
    global _recording
    previous, _recording = _recording, False
    try:
        yield
    finally:
        _recording = previous


def apply(op: Op, *inputs: Value | float) -> Value:
    """The node of `op` over `inputs` (plain numbers become constants): its value and its
    local derivatives, both from the op table. (`x * y` is `apply(MUL, x, y)`.)"""
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
    """Every node root depends on, parents before children: depth first, parents left
    to right, so the order is deterministic and can name nodes. The walk keeps its own
    stack, as a graph may be far deeper than Python's recursion limit."""
    order: list[Value] = []
    seen = {root}
    stack = [root]
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


# on_edge(node, input_index, parent, local, contribution), after the add: see backpropagate.
EdgeObserver = Callable[[Value, int, Value, Number, Number], None]


def backpropagate(order: list[Value], on_edge: EdgeObserver | None = None) -> None:
    """The backward pass over a topological order whose last node is the output, from
    zero: every node's grad is reset first (`Value.backward` adds the result to what the
    grads held before; the CLI, training and the trace use this pass as it is).

    The chain rule, outputs first: every node passes its grad to each parent, times its
    local derivative for that parent. A detach passes nothing on, and nodes that credit
    cannot reach (behind a detach) pass none on either, not even 0·inf = nan. `on_edge`,
    if given, is called for every edge the credit travels along, right after
    `contribution = local · node.grad` (or the op's own product, `Op.chain`) was added
    to `parent.grad`: the trace is built from it, so its numbers are the engine's."""
    for node in order:
        node.grad = 0.0
    root = order[-1]
    root.grad = _ones_like(root.data)
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
    """`backpropagate`'s step for an op whose row writes the product itself (`Op.chain`):
    log credits grad/a, finite where its local derivative 1/a alone overflows (a = 1e-310),
    so `contribution` is the row's expression, not local · grad."""
    credits = node.op.credit(node.grad, node.data, *[p.data for p in node.parents])
    for index, (parent, contribution) in enumerate(zip(node.parents, credits, strict=True)):
        parent.grad += contribution
        if on_edge is not None:
            on_edge(node, index, parent, node.locals[index], contribution)


def _credited(order: list[Value]) -> list[Value]:
    """The nodes of `order` that pass credit on: every one but the leaves, unless a detach
    stops the credit somewhere; then only those the output's credit reaches."""
    if all(op is None or op.passes_credit for op in {node.op for node in order}):
        return order  # (the leaves have no parents to pass credit to)
    stops = {node for node in order if node.op is not None and not node.op.passes_credit}
    reached = {order[-1]}
    for node in reversed(order):
        if node in reached and node.op is not None and node.op.passes_credit:
            reached.update(node.parents)
    return [node for node in order if node in reached and node.parents and node not in stops]


def _ones_like(data: Number) -> Number:
    return 1.0 if type(data) is float else np.ones_like(data)


def evaluate(order: list[Value]) -> Number:
    """Recompute every non-leaf node's data and local derivatives from its parents
    (after leaves changed)."""
    for node in order:
        if node.op is not None:
            data = [p.data for p in node.parents]
            node.data = node.op.forward(*data)
            node.locals = node.op.local(node.data, *data)
    return order[-1].data


class Graph:
    """A built graph kept for re-evaluation: change leaf data, then forward/backward
    again without rebuilding a single node."""

    def __init__(self, output: Value) -> None:
        self.output = output
        self.nodes = topological_order(output)

    @property
    def leaves(self) -> list[Value]:
        return [n for n in self.nodes if n.op is None]

    def forward(self) -> Number:
        return evaluate(self.nodes)

    def backward(self) -> None:
        """A fresh backward pass (grads from zero): after a `forward` with new leaf data,
        the grads are those of the new data, never added to the last ones'."""
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


# exp(x), tanh(x), ...: every expression function of the op table, as a function of Values
# and as a method of Value (`v.exp()` is `exp(v)`). `abs` shadows the builtin here only.
for _op in UNARY_OPS.values():
    globals()[_op.name] = _function(_op)
    setattr(Value, _op.name, globals()[_op.name])
del _op
