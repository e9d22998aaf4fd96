"""The scalar autograd engine: `Value` nodes and backpropagation over the op table.

A `Value` remembers how it was computed (its op and its parents, in order, with
repeats), so the graph is the memory of the computation. Backpropagation walks
that memory in reverse topological order and applies the chain rule on every
edge, adding up the credit where a value is used more than once. What each op
computes and what its local derivatives are is the op table's (`gradviz.ops`): the
engine only walks the graph. Each op's method is `apply(op, ...)` and the backward pass
is `_chain_rule`, both plain below; for speed (one Python call per op) the methods and
the pass the engine runs are those written out from the table by `gradviz.codegen`.

A plain number meeting a Value (`x * 2.0`, `1 - y`) is kept on the op's node rather than
made a node of its own (a `Fixed` op of the table), since a learner's loop meets one in
every input and target; the node takes its plain form, the op over a `Constant`, the
first time anything asks for its op or inputs (`settle`), so only the backward walk
ever sees the difference.

`data` and `grad` are floats, or numpy arrays holding a batch of independent
samples: one graph then evaluates every sample at once, and each node's grad
holds the per-sample gradients (sum them for a batch gradient).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, TypeAlias

import gradviz.codegen as codegen
from gradviz.lazy import loaded_numpy, np
from gradviz.numbers import fmt
from gradviz.ops import (
    ABS,
    ADD,
    DIV,
    ENGINE_NAMES,
    FIXED,
    MUL,
    NEG,
    POW,
    RELU,
    SIGMOID,
    SUB,
    TANH,
    Fixed,
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
    # of two, which is most of what keeps the engine fast and small (see bench/). `k` and
    # `k_grad` hold the number of a node made by a `Fixed` op (`x * 2.0`) and its credit;
    # they are unset on all others.
    __slots__ = ("data", "grad", "_fn", "_a", "_b", "label", "k", "k_grad")

    def __init__(self, data: object, label: str | None = None) -> None:
        self.data: Number = data if type(data) is float else as_data(data)
        self.grad: Number = _NO_CREDIT
        self._fn: Op | Fixed | None = None
        self._a: Value | None = None
        self._b: Value | None = None
        self.label = label

    # The op and its inputs are read through properties: a node made with a number operand
    # (`x * 2.0`: a `Fixed` op, see gradviz.ops) is first given its plain form, so readers
    # always see the op over a Constant. The engine's own loops read the slots.

    @property
    def op(self) -> Op | None:
        """The op that made this node; None for a leaf."""
        if type(self._fn) is Fixed:
            settle(self)
        return self._fn  # type: ignore[return-value]

    @property
    def a(self) -> Value | None:
        """The op's first input; None for a leaf."""
        if type(self._fn) is Fixed:
            settle(self)
        return self._a

    @property
    def b(self) -> Value | None:
        """The op's second input; None for a leaf or a one-input op."""
        if type(self._fn) is Fixed:
            settle(self)
        return self._b

    @property
    def parents(self) -> tuple[Value, ...]:
        """The op's inputs in order; an input used twice appears twice (`x*x`)."""
        if type(self._fn) is Fixed:
            settle(self)
        if self._a is None:
            return ()
        return (self._a,) if self._b is None else (self._a, self._b)

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
    # The ops' methods (`+`, `*`, `-`, `/`, `.sigmoid()`, ...) are generated from the op
    # table below the class (`_METHOD_OPS`): each computes its op's value and makes its
    # node in one call. Their signatures, for readers and type checkers:
    if TYPE_CHECKING:

        def __add__(self, other: Value | float) -> Value: ...
        def __radd__(self, other: float) -> Value: ...
        def __mul__(self, other: Value | float) -> Value: ...
        def __rmul__(self, other: float) -> Value: ...
        def __sub__(self, other: Value | float) -> Value: ...
        def __rsub__(self, other: float) -> Value: ...
        def __truediv__(self, other: Value | float) -> Value: ...
        def __rtruediv__(self, other: float) -> Value: ...
        def __neg__(self) -> Value: ...
        def __abs__(self) -> Value: ...
        # v.exp(), v.tanh(), ...: one per expression function (ops.UNARY_OPS)
        def __getattr__(self, name: str) -> Callable[[], Value]: ...

    def __pow__(self, other: Value | float) -> Value:
        if isinstance(other, Value):
            return apply(POW, self, other)
        op = power_op(float(as_data(other)))
        return _node(op, self, None, op.forward(self.data))

    def __rpow__(self, other: float) -> Value:
        return apply(POW, Constant(other), self)

    # -- using ------------------------------------------------------------------

    @property
    def is_leaf(self) -> bool:
        return self._fn is None

    def backward(self) -> None:
        """Add d(self)/d(node) into `node.grad` for every node self depends on.

        `.grad` is an accumulator, as in micrograd and PyTorch: two calls add up
        (`l1.backward(); l2.backward()` leaves w.grad = dl1/dw + dl2/dw), and
        `zero_grad()` empties it. Each call's own pass is exact even where the graphs
        share nodes (unlike micrograd, whose stale inner grads are passed on again).
        Nothing warns about a second call: accumulating on purpose (two losses, or
        several examples of a batch) cannot be told from doing it by mistake.
        `backpropagate` is the pass that starts from zero (the CLI's)."""
        # Grads held from earlier calls are set aside, the pass runs from zero, then they
        # are added. This pass's "no credit yet" is a zero that no node holds now (a new
        # float object): the walk gives it to every node it meets, after noting what the
        # node held, and so needs no set of visited nodes.
        fresh = float(0)
        carried: list[tuple[Value, Number]] = []
        try:
            ops = _ops_to_credit(self, fresh, carried)
        except RecursionError:  # deeper than recursion goes: the same walk on a stack
            ops = _ops_to_credit_deep(self, fresh, carried)
        self.grad = _ones_like(self.data)
        _backward_ops(ops, fresh)
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


_new = object.__new__

# The grad of a node that has received no credit: every node is made holding this very
# object, and `backpropagate` starts by giving it to every node of the graph (`backward()`
# uses a zero of its own per pass, which also marks the nodes its walk has met). Any credit
# received, even 0, is a new float, so `is` tells "reached" from "not reached (behind a
# detach)" at no cost.
_NO_CREDIT = 0.0


def _node(op: Op, a: Value, b: Value | None, data: Number) -> Value:
    """Make a non-leaf Value without __init__'s input checks (for ops without a
    generated method: `**` and `apply`)."""
    if not _GENERATED["recording"]:
        return _constant(data)
    out = _new(Value)
    out.data = data
    out.grad = _NO_CREDIT
    out._fn = op
    out._a = a
    out._b = b
    out.label = None
    return out


class Constant(Value):
    """A plain number in an expression (the 2 of `2*x`, the 1 of `1 - x`), or a
    value made under `no_grad`: a leaf that is not an input. The engine treats it as any
    leaf; the pictures and the trace show it by its number, with no gradient and no step
    of its own, since nobody can nudge it."""

    __slots__ = ()


def settle(node: Value) -> None:
    """Give a node made by a `Fixed` op (`x * 2.0`, the number kept on the node) its plain
    form, the op over a `Constant`, as everything but the backward walk expects: the
    topological order and `parents` call this, so no picture ever sees a Fixed node."""
    fixed: Fixed = node._fn  # type: ignore[assignment]
    number = _constant(node.k)
    number.grad = node.k_grad
    if fixed.side:
        node._b = number
    else:
        node._a, node._b = number, node._a
    node._fn = fixed.op


def _constant(x: object) -> Constant:
    """`Constant(x)` without the cost of a class call (`2*x` makes one every time)."""
    out = _new(Constant)
    out.data = x if type(x) is float else as_data(x)
    out.grad = _NO_CREDIT
    out._fn = None
    out._a = None
    out._b = None
    out.label = None
    return out


# -- the ops' methods ------------------------------------------------------------------
# `x * y` is `apply(MUL, x, y)` (below), with a number kept on the node (`Fixed`). It must
# make its node in one Python call: so every op's method is that, written out from the
# table's own expression for its value by gradviz.codegen and compiled on first use. A
# method's globals are `_GENERATED`, shared by all, so `no_grad` switches them all at once.

_GENERATED: dict[str, object] = {
    **ENGINE_NAMES,
    "Value": Value,
    "new": _new,
    "constant": _constant,
    "Constant": Constant,
    "reversed": reversed,
    "isinstance": isinstance,
    "type": type,
    "int": int,
    "NO_CREDIT": _NO_CREDIT,
    "recording": True,  # False under no_grad: results are constants
}

# name: (op, reflected); reflected: `2 - x` is x.__rsub__(2), the constant comes first
_METHOD_OPS: dict[str, tuple[Op, bool]] = {
    "__add__": (ADD, False),
    "__radd__": (ADD, True),
    "__mul__": (MUL, False),
    "__rmul__": (MUL, True),
    "__sub__": (SUB, False),
    "__rsub__": (SUB, True),
    "__truediv__": (DIV, False),
    "__rtruediv__": (DIV, True),
    "__neg__": (NEG, False),
    "__abs__": (ABS, False),
    **{op.name: (op, False) for op in UNARY_OPS.values()},  # v.exp(), v.sigmoid(), ...
}


_GENERATED.update({f"op_{op.name}": op for op in FIXED.values()})
_GENERATED.update({f"op_{op.name}": op for op, _ in _METHOD_OPS.values()})
for _name, (_op, _reflected) in _METHOD_OPS.items():
    _fixed = FIXED[_op, 0 if _reflected else 1] if _op.arity == 2 else None
    setattr(
        Value,
        _name,
        codegen.LazyMethod(
            _name,
            "self, other" if _op.arity == 2 else "self",
            partial(codegen.method_body, _op, _op.arity, _fixed, _reflected),
            _GENERATED,
            f"{_op.name}: local derivative(s) {', '.join(_op.formulas)}.",
        ),
    )
del _name, _op, _reflected, _fixed


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
    previous = _GENERATED["recording"]
    _GENERATED["recording"] = False
    try:
        yield
    finally:
        _GENERATED["recording"] = previous


def apply(op: Op, *inputs: Value | float) -> Value:
    """Apply an op to Values (plain numbers become constants): what every op method of
    Value does (`x * y` is `apply(MUL, x, y)`), written out by gradviz.codegen."""
    parents = tuple(x if isinstance(x, Value) else Constant(x) for x in inputs)
    if len(parents) != op.arity:
        raise TypeError(f"{op.name} takes {op.arity} argument(s), got {len(parents)}")
    data = op.forward(*[p.data for p in parents])
    return _node(op, parents[0], parents[1] if len(parents) == 2 else None, data)


def topological_order(root: Value) -> list[Value]:
    """Every node root depends on, parents before children: depth first, parents left
    to right, so the order is deterministic and can name nodes.

    Recursion is the fastest walk in Python; past its limit (a graph deeper than about
    a thousand nodes: a long chain) the same walk runs on an explicit stack."""
    if root._a is None:
        return [root]
    order: list[Value] = []
    emit = order.append
    seen = {root}
    mark = seen.add

    def visit(node: Value) -> None:
        # A leaf parent is emitted where it stands; only op nodes recurse.
        if type(node._fn) is Fixed:
            settle(node)
        a = node._a
        if a not in seen:
            mark(a)
            if a._a is None:
                emit(a)
            else:
                visit(a)
        b = node._b
        if b is not None and b not in seen:
            mark(b)
            if b._a is None:
                emit(b)
            else:
                visit(b)
        emit(node)

    try:
        visit(root)
    except RecursionError:
        order = _deep_topological_order(root)
    finally:
        visit = None  # it refers to itself through its cell: no cycle left to the collector
    return order


def _deep_topological_order(root: Value, settling: bool = True) -> list[Value]:
    """`topological_order` on an explicit stack, for graphs of any depth. Without
    `settling` (`Value.backward`'s walk), a node with a number on it stays as it is: a
    node of one input."""
    # A node met for the first time is marked, then pushed back with a None above it
    # ("emit the node below once this is popped") and its unmarked parents above that;
    # a leaf is emitted at once.
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
        a = node._a
        if a is None:
            emit(node)
            continue
        if settling and type(node._fn) is Fixed:
            settle(node)
            a = node._a
        push(node)
        push(None)
        b = node._b
        if b is not None and b not in seen:
            push(b)
        if a not in seen:
            push(a)
    return order


def _ones_like(data: Number) -> Number:
    if type(data) is float:
        return 1.0
    numpy = loaded_numpy()
    return numpy.ones_like(data) if numpy is not None and type(data) is numpy.ndarray else 1.0


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
    for node in order:
        node.grad = _NO_CREDIT
    root = order[-1]
    root.grad = _ones_like(root.data)
    if on_edge is not None:
        _chain_rule(order, on_edge)
        return
    _backward_pass(order, _NO_CREDIT)  # _chain_rule(order), generated for speed (codegen)


def _held(grad: Number, no_credit: float) -> bool:
    """Whether a grad found on a node must be carried over a pass (anything but 0)."""
    kind = type(grad)
    return grad is not no_credit and ((kind is not float and kind is not int) or bool(grad))


def _ops_to_credit(root: Value, fresh: float, carried: list) -> list[Value]:
    """`Value.backward`'s walk: the op nodes of `topological_order(root)`, in its order
    (leaves left out: they pass nothing on), every node's grad set to `fresh` and any grad
    it held before appended to `carried`. Recursive: RecursionError past its limit."""
    ops: list[Value] = []
    emit = ops.append
    hold = carried.append
    no_credit = _NO_CREDIT
    g = root.grad
    root.grad = fresh
    if _held(g, no_credit):
        hold((root, g))
    if root._a is None:
        return ops

    def visit(node: Value) -> None:
        # topological_order's visit, with `grad is fresh` for "seen" (written out twice
        # for speed: this is most of the cost of a backward pass)
        a = node._a
        g = a.grad
        if g is not fresh:
            a.grad = fresh
            if g is not no_credit and ((type(g) is not float and type(g) is not int) or g):
                hold((a, g))
            if a._a is not None:
                visit(a)
        b = node._b
        if b is not None:
            g = b.grad
            if g is not fresh:
                b.grad = fresh
                if g is not no_credit and ((type(g) is not float and type(g) is not int) or g):
                    hold((b, g))
                if b._a is not None:
                    visit(b)
        emit(node)

    try:
        visit(root)
    finally:
        visit = None  # it refers to itself through its cell: no cycle left to the collector
    return ops


def _ops_to_credit_deep(root: Value, fresh: float, carried: list) -> list[Value]:
    """`_ops_to_credit` for graphs of any depth (after it stopped part way: the nodes it
    met hold `fresh` already and their grads are in `carried`)."""
    ops = []
    for node in _deep_topological_order(root, settling=False):
        g = node.grad
        if g is not fresh:
            node.grad = fresh
            if _held(g, _NO_CREDIT):
                carried.append((node, g))
        if node._a is not None:
            ops.append(node)
    return ops


# The ops whose backward step is written into the pass's loop instead of called through
# `op.backward` (a call per node costs as much as the arithmetic): those networks are made
# of, the most frequent first. Any other op is called.
_INLINED_BACKWARD = (
    ADD,
    FIXED[MUL, 1],
    MUL,
    SIGMOID,
    TANH,
    RELU,
    SUB,
    FIXED[SUB, 1],
    FIXED[ADD, 1],
)


_GENERATED.update({f"op_{op.name}": op for op in _INLINED_BACKWARD})
_backward_pass = codegen.generated(
    "order, no_credit",
    codegen.backward_pass_body(_INLINED_BACKWARD, True),
    _GENERATED,
    "backward_pass",
)
_backward_ops = codegen.generated(
    "order, no_credit",
    codegen.backward_pass_body(_INLINED_BACKWARD, False),
    _GENERATED,
    "backward_ops",
)


def _chain_rule(order: list[Value], on_edge: EdgeObserver | None = None) -> None:
    """The backward pass, plainly: for every node, outputs first, that credit has reached,
    each input's grad += the node's grad · the op's local derivative for that input
    (`op.credit`: g · local, or the product as the op's row writes it, `Op.chain`). The
    generated `_backward_pass` is this loop with the common ops' steps written inline:
    the same arithmetic in the same order (input `a` before `b`), so the grads come out bit
    for bit the same (tests/test_engine.py). With `on_edge`, it is called per edge."""
    for node in reversed(order):
        op = node._fn
        if op is None or not op.passes_credit:
            continue
        g = node.grad
        if g is _NO_CREDIT:
            continue
        parents = node.parents
        inputs = [p.data for p in parents]
        locals_ = op.local(node.data, *inputs)
        credits = op.credit(g, node.data, *inputs)  # g · local (as `Op.chain` writes it)
        for index, (parent, local) in enumerate(zip(parents, locals_, strict=True)):
            contribution = credits[index]
            parent.grad += contribution
            if on_edge is not None:
                on_edge(node, index, parent, local, contribution)


def evaluate(order: list[Value]) -> Number:
    """Recompute every non-leaf node's data from its parents (after leaves changed)."""
    for node in order:
        op = node._fn
        if op is not None:
            b = node._b
            node.data = op.forward(node._a.data) if b is None else op.forward(node._a.data, b.data)
    return order[-1].data


class Graph:
    """A built graph kept for re-evaluation: change leaf data, then forward/backward
    again without rebuilding a single node."""

    def __init__(self, output: Value) -> None:
        self.output = output
        self.nodes = topological_order(output)

    @property
    def leaves(self) -> list[Value]:
        return [n for n in self.nodes if n._fn is None]

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


# exp(x), tanh(x), ...: every expression function of the op table, as a function
# of Values (`abs` among them shadows the builtin inside this module only: use np.abs here).
globals().update({op.name: _function(op) for op in UNARY_OPS.values()})
