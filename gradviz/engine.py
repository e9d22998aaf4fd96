"""The scalar autograd engine: `Value` nodes and backpropagation over the op table.

A `Value` remembers how it was computed (its op and its parents, in order, with
repeats), so the graph is the memory of the computation. Backpropagation walks
that memory in reverse topological order and applies the chain rule on every
edge, adding up the credit where a value is used more than once. What each op
computes and what its local derivatives are is the op table's (`gradviz.ops`): the
engine only walks the graph and calls `op.forward` / `op.local`.

`data` and `grad` are floats, or numpy arrays holding a batch of independent
samples: one graph then evaluates every sample at once, and each node's grad
holds the per-sample gradients (sum them for a batch gradient).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeAlias

from gradviz.lazy import loaded_numpy, np
from gradviz.numbers import fmt
from gradviz.ops import (
    ABS,
    ADD,
    COS,
    DETACH,
    DIV,
    EXP,
    LOG,
    MUL,
    NEG,
    POW,
    RELU,
    SIGMOID,
    SIN,
    SQRT,
    SUB,
    TANH,
    Op,
    power_op,
)
from gradviz.ops import UNARY_OPS as UNARY_OPS  # the expression functions, by name
from gradviz.ops import number as _result

# numpy is imported on first use (gradviz.lazy): a graph of plain floats never needs it
# (floats go through math in gradviz.ops; numpy serves batches, and tanh).
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

    # Parents live in two slots rather than a tuple: one allocation per node instead
    # of two, which is most of what keeps the engine fast and small (see bench/).
    __slots__ = ("data", "grad", "op", "a", "b", "label")

    def __init__(self, data: object, label: str | None = None) -> None:
        self.data: Number = data if type(data) is float else as_data(data)
        self.grad: Number = 0.0
        self.op: Op | None = None
        self.a: Value | None = None
        self.b: Value | None = None
        self.label = label

    @property
    def parents(self) -> tuple[Value, ...]:
        """The op's inputs in order; an input used twice appears twice (`x*x`)."""
        if self.a is None:
            return ()
        return (self.a,) if self.b is None else (self.a, self.b)

    # -- micrograd's names, read-only, so its `draw_dot` and `nn.py` run unchanged ----

    @property
    def _prev(self) -> set[Value]:
        """micrograd's parents: a new set each call (so `x*x` has one), never stored."""
        return set(self.parents)

    @property
    def _op(self) -> str:
        """micrograd's op string: '+', '*', '**2', 'ReLU', 'tanh', 'exp', '' for a leaf.
        Subtraction and division are '-' and '/' with the two inputs as `_prev` (micrograd
        composes them, '+' and '*' over a hidden -1 or **-1; here they are one node, and
        '+' over `{a, b}` would misstate it); negation is '-' with one input."""
        op = self.op
        if op is None:
            return ""
        return op.micrograd or op.symbol

    # -- building ---------------------------------------------------------------

    def __add__(self, other: Value | float) -> Value:
        other = other if isinstance(other, Value) else Constant(other)
        return _node(ADD, self, other, self.data + other.data)

    def __mul__(self, other: Value | float) -> Value:
        other = other if isinstance(other, Value) else Constant(other)
        return _node(MUL, self, other, self.data * other.data)

    def __pow__(self, other: Value | float) -> Value:
        if isinstance(other, Value):
            return apply(POW, self, other)
        op = power_op(float(as_data(other)))
        return _node(op, self, None, op.forward(self.data))

    def __rpow__(self, other: float) -> Value:
        return apply(POW, Constant(other), self)

    def __radd__(self, other: float) -> Value:
        return Constant(other) + self

    def __rmul__(self, other: float) -> Value:
        return Constant(other) * self

    # Subtraction, division and negation are ops of their own (not micrograd's
    # compositions `a + b*(-1)` and `a * b**-1`), so a graph is drawn as it was typed.
    def __neg__(self) -> Value:
        return _node(NEG, self, None, -self.data)

    def __sub__(self, other: Value | float) -> Value:
        other = other if isinstance(other, Value) else Constant(other)
        return _node(SUB, self, other, self.data - other.data)

    def __rsub__(self, other: float) -> Value:
        return Constant(other) - self

    def __truediv__(self, other: Value | float) -> Value:
        other = other if isinstance(other, Value) else Constant(other)
        return _node(DIV, self, other, DIV.forward(self.data, other.data))

    def __rtruediv__(self, other: float) -> Value:
        return Constant(other) / self

    def __abs__(self) -> Value:
        return _node(ABS, self, None, ABS.forward(self.data))

    def exp(self) -> Value:
        return _node(EXP, self, None, EXP.forward(self.data))

    def log(self) -> Value:
        return _node(LOG, self, None, LOG.forward(self.data))

    def tanh(self) -> Value:
        return _node(TANH, self, None, TANH.forward(self.data))

    def sigmoid(self) -> Value:
        return _node(SIGMOID, self, None, SIGMOID.forward(self.data))

    def relu(self) -> Value:
        return _node(RELU, self, None, RELU.forward(self.data))

    def sin(self) -> Value:
        return _node(SIN, self, None, SIN.forward(self.data))

    def cos(self) -> Value:
        return _node(COS, self, None, COS.forward(self.data))

    def abs(self) -> Value:
        return _node(ABS, self, None, ABS.forward(self.data))

    def sqrt(self) -> Value:
        return _node(SQRT, self, None, SQRT.forward(self.data))

    def detach(self) -> Value:
        return _node(DETACH, self, None, DETACH.forward(self.data))

    # -- using ------------------------------------------------------------------

    @property
    def is_leaf(self) -> bool:
        return self.op is None

    def backward(self) -> None:
        """Add d(self)/d(node) into `node.grad` for every node self depends on.

        `.grad` is an accumulator, as in micrograd and PyTorch: two calls add up
        (`l1.backward(); l2.backward()` leaves w.grad = dl1/dw + dl2/dw), and
        `zero_grad()` empties it. Each call's own pass is exact even where the graphs
        share nodes (unlike micrograd, whose stale inner grads are passed on again).
        Nothing warns about a second call: accumulating on purpose (two losses, or
        several examples of a batch) cannot be told from doing it by mistake.
        `backpropagate` is the pass that starts from zero (the CLI's)."""
        order = topological_order(self)
        # Grads held from earlier calls: set aside, the pass runs from zero, then added.
        grads = [n.grad for n in order]
        try:
            held = any(grads)  # at C speed: a fresh graph holds zeros only
        except ValueError:  # a batch's array has no single truth value
            held = True
        carried = (
            [(n, g) for n, g in zip(order, grads, strict=True) if type(g) is np.ndarray or g != 0]
            if held
            else []
        )
        backpropagate(order)
        for node, earlier in carried:
            node.grad = earlier + node.grad

    def zero_grad(self) -> None:
        """Set the grad of self and of every node it depends on to 0 (before a backward
        whose numbers should not add to the last one's)."""
        for node in topological_order(self):
            node.grad = 0.0

    def __repr__(self) -> str:
        name = f"{self.label}, " if self.label else ""
        return f"Value({name}data={fmt(self.data)}, grad={fmt(self.grad)})"


def _node(op: Op, a: Value, b: Value | None, data: Number) -> Value:
    """Make a non-leaf Value without __init__'s input checks (the hot path)."""
    out = _new(Value)
    out.data = data
    out.grad = 0.0
    out.op = op
    out.a = a
    out.b = b
    out.label = None
    return out


_new = object.__new__


class Constant(Value):
    """A plain number in an expression (the 2 of `2*x`, the 1 of `1 - x`), or a
    value made under `no_grad`: a leaf that is not an input. The engine treats it as any
    leaf; the pictures and the trace show it by its number, with no gradient and no step
    of its own, since nobody can nudge it."""

    __slots__ = ()


def _constant_node(op: Op, a: Value, b: Value | None, data: Number) -> Value:
    """`_node` under `no_grad`: the result alone, with no op and no parents."""
    out = _new(Constant)
    out.data = data
    out.grad = 0.0
    out.op = None
    out.a = None
    out.b = None
    out.label = None
    return out


@contextmanager
def no_grad() -> Iterator[None]:
    """Values computed inside are constants: they record no op and no parents, as under
    `torch.no_grad()`, so no graph is kept and no gradient flows back through them.

    `detach(x)` differs: it records a `detach` node, so the graph still shows where the
    value came from (a dashed "no grad" edge) and `Graph.forward` recomputes it when the
    leaves change; only the gradient stops there. `no_grad` keeps nothing: cheaper (no
    node per op), but the value is frozen and drawn as a bare number. Use it for work
    that needs no gradient, such as an update step or an evaluation. It sets a module-level
    switch: not for use from several threads at once."""
    global _node
    previous = _node
    _node = _constant_node
    try:
        yield
    finally:
        _node = previous


def apply(op: Op, *inputs: Value | float) -> Value:
    """Apply an op to Values (plain numbers become constants)."""
    parents = tuple(x if isinstance(x, Value) else Constant(x) for x in inputs)
    if len(parents) != op.arity:
        raise TypeError(f"{op.name} takes {op.arity} argument(s), got {len(parents)}")
    data = op.forward(*[p.data for p in parents])
    return _node(op, parents[0], parents[1] if len(parents) == 2 else None, data)


def topological_order(root: Value) -> list[Value]:
    """Every node root depends on, parents before children (iterative DFS, no recursion).

    The order is deterministic (parents visited left to right), so it can name nodes.
    """
    # Depth first, parents left to right: a node met for the first time is marked, then
    # pushed back with a None above it ("emit the node below once this is popped") and
    # its unmarked parents above that; a leaf is emitted at once. One set, no recursion.
    order: list[Value] = []
    emit = order.append
    seen: set[Value] = set()
    mark = seen.add
    stack: list[Value | None] = [root]
    push = stack.append
    pop = stack.pop
    while stack:
        node = pop()
        if node is None:
            emit(pop())  # type: ignore[arg-type]
            continue
        if node in seen:
            continue
        mark(node)
        a = node.a
        if a is None:
            emit(node)
            continue
        push(node)
        push(None)
        b = node.b
        if b is not None and b not in seen:
            push(b)
        if a not in seen:
            push(a)
    return order


def _ones_like(data: Number) -> Number:
    numpy = loaded_numpy()
    return numpy.ones_like(data) if numpy is not None and type(data) is numpy.ndarray else 1.0


# The grad every node starts a backward pass with. A node that no credit reaches (every
# path to the output runs through detach) still holds this very object afterwards, while
# any credit received, even 0, is a new float: so `is` tells the two apart at no cost.
_NO_CREDIT = 0.0

# on_edge(node, input_index, parent, local, contribution), after the add: see backpropagate.
EdgeObserver = Callable[[Value, int, Value, Number, Number], None]


def backpropagate(order: list[Value], on_edge: EdgeObserver | None = None) -> None:
    """The backward pass over a topological order whose last node is the output, from
    zero: every node's grad is reset first (`Value.backward` adds the result to what the
    grads held before; the CLI, training and the trace use this pass as it is).

    Nodes that no credit reaches (behind detach) pass none on, not even 0·inf = nan.
    `on_edge`, if given, is called for every edge the credit travels along, right after
    `contribution = node.grad · local` was added to `parent.grad`: the trace is built
    from it, so its numbers are the engine's. Without it the loop below runs untouched.
    """
    no_credit = _NO_CREDIT
    for node in order:
        node.grad = no_credit
    root = order[-1]
    root.grad = _ones_like(root.data)
    if on_edge is not None:
        _backpropagate_observed(order, on_edge)
        return
    for node in reversed(order):
        op = node.op
        if op is None:
            continue
        g = node.grad
        if g is no_credit:
            continue
        op.backward(node, g)  # each input's grad += g · local (the op table's code)


def _backpropagate_observed(order: list[Value], on_edge: EdgeObserver) -> None:
    """`backpropagate`'s loop with a call per edge: the same arithmetic in the same order
    (input `a` before `b`), so the grads come out bit for bit the same."""
    for node in reversed(order):
        op = node.op
        if op is None or not op.passes_credit:
            continue
        g = node.grad
        if g is _NO_CREDIT:
            continue
        parents = node.parents
        locals_ = op.local(node.data, *[p.data for p in parents])
        for index, (parent, local) in enumerate(zip(parents, locals_, strict=True)):
            contribution = g * local
            parent.grad += contribution
            on_edge(node, index, parent, local, contribution)


def evaluate(order: list[Value]) -> Number:
    """Recompute every non-leaf node's data from its parents (after leaves changed)."""
    for node in order:
        op = node.op
        if op is not None:
            b = node.b
            node.data = op.forward(node.a.data) if b is None else op.forward(node.a.data, b.data)
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
        return apply(op, x)

    function.__name__ = op.name
    function.__doc__ = f"{op.name}(x): local derivative {op.formulas[0]}."
    return function


exp = _function(EXP)
log = _function(LOG)
tanh = _function(TANH)
sigmoid = _function(SIGMOID)
relu = _function(RELU)
sin = _function(SIN)
cos = _function(COS)
sqrt = _function(SQRT)
detach = _function(DETACH)
abs = _function(ABS)  # shadows the builtin inside this module only: use np.abs here
