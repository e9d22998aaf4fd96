"""Code generation, gathered in one place: the engine's fast kernels written out as Python.

Why it exists: speed. A Python function call costs about as much as the arithmetic of one
op, so the engine's hot paths are written out from the op table's expressions into
straight-line functions, one Python call per op: `x * y` computes its value and makes its
node in one call (Value's op methods), and the backward pass adds every node's credit into
its inputs inline for the ops networks are made of (no call per node). bench/lesson.py
measures the result (the lesson's loop ≥ 4x micrograd), bench/engine.py the chain.

Nothing here is needed to understand the engine: `gradviz.engine` defines each thing plainly
first (`apply`, `_chain_rule`), and tests/test_engine.py checks the generated kernels give the
plain definitions' numbers bit for bit. Every text compiled here is built from this module's
constant templates and the op table's own expressions, never from user text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from types import CodeType, FunctionType
from typing import Any, Protocol


class Kernel(Protocol):
    """What the templates read of an op (`gradviz.ops.Op` or `Fixed`)."""

    name: str
    out: str
    inline: str | None
    backward_code: str


@lru_cache(maxsize=512)
def _code_object(params: str, body: str) -> CodeType:
    """A function's code from one of the templates, compiled once per text."""
    module = compile(f"def f({params}):\n    {body}\n", "<gradviz.codegen>", "exec")
    return next(c for c in module.co_consts if isinstance(c, CodeType))


def generated(params: str, body: str, namespace: dict[str, Any], name: str) -> Callable:
    """`body` (statements built from the templates, never from user text) as a function of
    `params`, whose globals are `namespace` itself: functions sharing one namespace see a
    name rebound there (the engine's `no_grad` switch)."""
    return FunctionType(_code_object(params, body), namespace, name)


def on_first_call(
    owner: object, field: str, params: str, body: str, namespace: dict[str, Any], name: str
) -> Callable:
    """A stand-in for `owner.field`, the function `generated(params, body, namespace,
    name)`: compiled when first called, then put in the stand-in's place. Most ops'
    functions are never called by a command (the engine inlines its common kernels), and
    compiling them all at import was a good part of `gradviz draw`'s start-up."""
    function: Callable | None = None

    def first_call(*args: Any) -> Any:
        nonlocal function
        if function is None:
            function = generated(params, body, namespace, name)
            object.__setattr__(owner, field, function)
        return function(*args)

    first_call.__name__ = name
    return first_call


def indented(statements: str) -> str:
    """Statements, one per line, as the body of a generated function."""
    return statements.replace("\n", "\n    ")


# -- an op's backward step ------------------------------------------------------------


def backward_body(
    d: Sequence[str], passes_credit: bool, fixed: bool = False, chain: Sequence[str | None] = ()
) -> str:
    """The statements of `Op.backward(node, g)`: every input's grad += g · its local
    derivative, the derivatives evaluated first (as `local` returns them), `g · 1` written
    `g` and `g · -1` written `-g` (the same bits). `fixed`: a Fixed op's, whose second
    input is the node's number `k`, credited to `node.k_grad`. `chain[i]`, where given, is
    the product itself as an expression in `g` (`Op.chain`: log's `div(g, a)`)."""
    if not passes_credit:
        return "pass"
    chain = tuple(chain) + (None,) * (len(d) - len(chain))
    used = set(
        re.findall(r"\b(out|a|b|k)\b", " ".join(c or e for e, c in zip(d, chain, strict=True)))
    )
    inputs = "ak" if fixed else "ab"[: len(d)]
    lines = ["pa = node._a"] if fixed else [f"p{x} = node._{x}" for x in inputs]
    lines += [f"{x} = p{x}.data" for x in "ab" if x in used]
    lines += [f"{x} = node.{name}" for x, name in (("out", "data"), ("k", "k")) if x in used]
    terms = []
    for i, (x, e, c) in enumerate(zip(inputs, d, chain, strict=True)):
        if c is not None:
            terms.append((x, c))
        elif e == "1.0":
            terms.append((x, "g"))
        elif e == "-1.0":
            terms.append((x, "-g"))
        elif e in used:  # an input's value or the result, read above: no copy
            terms.append((x, f"g * {e}"))
        else:
            lines.append(f"d{i} = {e}")
            terms.append((x, f"g * d{i}"))
    lines += [f"{'node.k_grad' if x == 'k' else f'p{x}.grad'} += {term}" for x, term in terms]
    return "\n".join(lines)


# -- Value's op methods -----------------------------------------------------------------


def method_body(op: Kernel, arity: int, fixed: Kernel | None, reflected: bool) -> str:
    """The statements of one op's method on Value (`self`, and `other` for two inputs),
    which computes the op's value and makes its node in one call: what `engine.apply`
    does, with a plain-number `other` kept on the node of the `fixed` op (`x * 2.0`)."""
    if arity == 1:
        return "\n    ".join(["a = self.data", *_made(op, "self", "None")])
    # `other` a number: a node of the Fixed op, the number on it (`k`); a numpy array (or
    # another number type): a Constant. (`type(...) is` first: cheaper than isinstance.)
    if fixed is None:
        raise TypeError(f"{op.name}: a two-input method needs its Fixed op")
    first, second = ("other", "self") if reflected else ("self", "other")
    lines = [
        "if type(other) is not Value and not isinstance(other, Value):",
        "    if type(other) is not float and type(other) is int:",
        "        other = float(other)",
        "    if type(other) is float:",
        "        a = self.data",
        "        k = other",
        *[f"        {line}" for line in _made(fixed, "self", "None", "k")],
        "    other = constant(other)",
        f"a = {first}.data",
        f"b = {second}.data",
        *_made(op, first, second),
    ]
    return "\n    ".join(lines)


def _made(op: Kernel, first: str, second: str, number: str | None = None) -> list[str]:
    """The statements that compute `out` from `a` (and `b` or `k`) and return its node."""
    if op.inline:
        lines = ["if type(a) is float:"]
        lines += [f"    {line}" for line in op.inline.splitlines()]
        lines += ["else:", f"    out = {op.out}"]
    else:
        lines = [f"out = {op.out}"]
    lines += [
        "if not recording:",
        "    return constant(out)",
        "node = new(Value)",
        "node.data = out",
        "node.grad = NO_CREDIT",
        f"node._fn = op_{op.name}",
        f"node._a = {first}",
        f"node._b = {second}",
        *([f"node.k = {number}", "node.k_grad = NO_CREDIT"] if number else []),
        "node.label = None",
        "return node",
    ]
    return lines


class LazyMethod:
    """One op's method on a class, compiled the first time it is looked up (`x * y` looks
    it up too), then put in its own place on the class: a command compiles only the
    methods its graph uses (start-up, see bench/startup.py)."""

    def __init__(
        self,
        name: str,
        params: str,
        body: Callable[[], str],
        namespace: dict[str, Any],
        doc: str,
    ) -> None:
        self.name, self.params, self.body, self.namespace, self.doc = (
            name,
            params,
            body,
            namespace,
            doc,
        )

    def __get__(self, instance: object | None, owner: type) -> Callable:
        method = generated(self.params, self.body(), self.namespace, self.name)
        method.__qualname__ = f"{owner.__name__}.{self.name}"
        method.__doc__ = self.doc
        setattr(owner, self.name, method)
        return method.__get__(instance, owner)


# -- the backward pass ------------------------------------------------------------------


def backward_pass_body(inlined: Sequence[Kernel], leaves: bool) -> str:
    """The statements of `backward_pass(order, no_credit)`, `engine._chain_rule` with the
    steps of the `inlined` ops written into its loop: every op node reached by credit
    (whose grad is not `no_credit`), in reverse order, adds its credit times each local
    derivative into its inputs' grads. `leaves`: the order holds leaves too (they are
    skipped); without, it holds op nodes only (`Value.backward`'s walk)."""
    lines = ["for node in reversed(order):", "    op = node._fn"]
    if leaves:
        lines += ["    if op is None:", "        continue"]
    lines += [
        "    g = node.grad",
        "    if g is no_credit:",
        "        continue",
    ]
    for i, op in enumerate(inlined):
        lines.append(f"    {'elif' if i else 'if'} op is op_{op.name}:")
        lines += [f"        {line}" for line in op.backward_code.splitlines()]
    lines += ["    else:", "        op.backward(node, g)"]
    return "\n    ".join(lines)
