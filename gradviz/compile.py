"""A network's loss graph compiled to straight-line Python: what makes training fast.

A network's graph has the same shape for every example, so rebuilding thousands of
`Value`s per example is pure overhead. One example's graph is built once, and its
topological order written out: one assignment per node forward, one per edge backward,
in the order `engine.backpropagate` visits them, each line from the op table's templates
(`Op.code`, `Op.local_code`), never from user input. The numbers are the engine's, bit for
bit, at 10-50x the speed (bench/README.md). `Plain` (GRADVIZ_PLAIN=1) is the reference.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from types import CodeType

import numpy as np

import gradviz.codegen as codegen
from gradviz.engine import Value, topological_order
from gradviz.nn import LOSS_FUNCTIONS, Network, example_graph, is_correct, sum_of_squares
from gradviz.ops import OP_NAMES, compiled_names

# -- compiling a network ------------------------------------------------------------------


@dataclass(frozen=True)
class Compiled:
    """A network's loss graph as three functions over a flat parameter list P.

    `run(P, X, Y, order, start, stop, batch, lr, clip, total, correct, decay=0.0,
    counts=None)` trains P in place on the examples `order[start:stop]` in batches of
    `batch` and returns the running (sum of losses, count correct); `decay` is the l2
    strength, `counts` gets [updates, clipped, Σ‖g‖ before, Σ‖g‖ after] added.
    `gradient(P, X, Y, order)` gives (sum of losses, mean gradient, unclipped) and
    `evaluate(P, X, Y)` (sum of losses, outputs). X: tuples of floats, Y: floats."""

    run: Callable[..., tuple[float, int]]
    gradient: Callable[..., tuple[float, list[float]]]
    evaluate: Callable[..., tuple[float, list[float]]]
    source: str


_NAME = re.compile(r"\(?-?[A-Za-z_0-9.]+\)?")


def _wrap(expression: str) -> str:
    return expression if _NAME.fullmatch(expression) else f"({expression})"


def _times(g: str, local: str) -> str:
    # the engine's `g * local`, dropping exact multiplications by 1.0
    if g == "1.0":
        return _wrap(local)
    if local == "1.0":
        return g
    return f"{g} * {_wrap(local)}"


def _literal(x: float) -> str:
    return f"({x!r})" if x < 0 or (x == 0 and math.copysign(1.0, x) < 0) else repr(x)


def _graph_code(network: Network) -> tuple[list[str], dict[str, list[str]], str, str, dict]:
    """One example's forward lines, backward lines (per sink), output and loss names,
    and the namespace the lines need (odd constants)."""
    xs = [Value(0.0, label=f"x{j}") for j in range(network.sizes[0])]
    y = Value(0.0, label="y")
    built = network.build(xs, y)
    order = topological_order(built.loss)
    params = network.parameters()
    names: dict[Value, str] = {p: f"p{i}" for i, p in enumerate(params)}
    names.update({x: f"x{j}" for j, x in enumerate(xs)})
    names[y] = "y"
    namespace: dict = {}

    # Gradients flow only where they can reach a parameter; the rest is never read.
    needs = set(params)
    for node in order:
        if node.op is not None and node.op.passes_credit and any(p in needs for p in node.parents):
            needs.add(node)
    inline = _inlinable(order, needs, {built.output, built.loss})

    forward: list[str] = []
    depth: dict[Value, int] = {}
    for k, node in enumerate(order):
        if node in names:
            continue
        if node.op is None:  # a constant of the graph (our own -1.0, 1.0)
            data = float(node.data)
            if math.isfinite(data):
                names[node] = _literal(data)
            else:
                names[node] = f"c{k}"
                namespace[f"c{k}"] = data
            continue
        a = names[node.a]
        b = names[node.b] if node.b is not None else ""
        depth[node] = 1 + max(depth.get(node.a, 0), depth.get(node.b, 0))
        if node in inline and depth[node] <= MAX_INLINE_DEPTH:
            # used once, by a one-line template, and never by the backward pass:
            # written into its user's expression (the same operations, in order)
            names[node] = "(" + node.op.code.format(out="", a=a, b=b)[3:] + ")"
            continue
        depth[node] = 0
        names[node] = f"v{k}"
        code = node.op.code.format(out=f"v{k}", a=a, b=b, tmp="t")
        forward.extend(code.splitlines())

    backward = {
        sink: _backward_lines(order, params, built.loss, names, needs, sink)
        for sink in ("assign", "accumulate")
    }
    return forward, backward, names[built.output], names[built.loss], namespace


MAX_INLINE_DEPTH = 40  # nested operations in one expression (CPython's parser has limits)


def _inlinable(order: list[Value], needs: set[Value], kept: set[Value]) -> set[Value]:
    """Nodes whose value can live inside their one user's expression: a one-line template,
    one user naming it once, and not read by the backward pass's local slopes."""
    users: dict[Value, list[Value]] = {}
    for node in order:
        for parent in node.parents:
            users.setdefault(parent, []).append(node)
    read: set[Value] = set()
    for node, _, template in _credit_edges(order, needs):
        if "{out}" in template:
            read.add(node)
        if "{a}" in template:
            read.add(node.a)
        if "{b}" in template and node.b is not None:
            read.add(node.b)
    out = set()
    for node in order:
        if node.op is None or node in kept or node in read:
            continue
        code = node.op.code
        if not code.startswith("{out} = ") or "\n" in code or "{tmp}" in code:
            continue
        (user, *others) = users.get(node, [None])
        if others or user is None or user.op is None:
            continue
        slot = "{a}" if user.a is node else "{b}"
        if user.op.code.count(slot) == 1:
            out.add(node)
    return out


def _credit_edges(order: list[Value], needs: set[Value]) -> Iterator[tuple[Value, Value, str]]:
    """(node, parent, local slope's template) for every edge carrying credit towards a
    parameter, in graph order; `Op.chain`'s template (in `{g}`) where the op has one."""
    for node in order:
        if node.op is not None and node.op.passes_credit and node in needs:
            templates = [
                c or t for t, c in zip(node.op.local_code, node.op.chain_code, strict=True)
            ]
            for parent, template in zip(node.parents, templates, strict=True):
                if parent in needs:
                    yield node, parent, template


def _backward_lines(
    order: list[Value],
    params: list[Value],
    root: Value,
    names: dict[Value, str],
    needs: set[Value],
    sink: str,
) -> list[str]:
    """`engine.backpropagate` unrolled: the same contributions in the same order.

    Exactness: the engine starts each grad at 0.0 and adds; 0.0 + c differs from c only
    for c = -0.0. Inner nodes skip the `0.0 +` (a node fed by one `+` shares its child's
    variable): a zero's sign there reaches no parameter, whose grad does start `0.0 +`.
    `sink` "assign" puts a parameter's grad in `gp{i}`; "accumulate" adds it to the batch
    sum `G{i}`, started at +0.0: never -0.0, so S + c = S + (0.0 + c) for every c."""
    index = {p: i for i, p in enumerate(params)}
    position = {node: k for k, node in enumerate(order)}
    credited: dict[Value, list[tuple[Value, str]]] = {}  # node: its edges, in graph order
    for node, parent, template in _credit_edges(order, needs):
        credited.setdefault(node, []).append((parent, template))
    incoming = Counter(parent for edges in credited.values() for parent, _ in edges)
    grads: dict[Value, str] = {root: "1.0"}
    lines: list[str] = []
    seen: dict[Value, int] = {}
    pending: dict[Value, list[str]] = {}
    for node in reversed(credited):
        if node not in grads:  # reached only through ops that pass no credit
            grads[node] = f"g{position[node]}"
            lines.append(f"{grads[node]} = 0.0")
        g = grads[node]
        slots = dict(out=names[node], a=names[node.a], b=names[node.b] if node.b else "")
        for parent, template in credited[node]:
            contribution = (
                _wrap(template.format(g=g, **slots))
                if "{g}" in template
                else _times(g, template.format(**slots))
            )
            count = seen[parent] = seen.get(parent, 0) + 1
            if parent in index:
                i = index[parent]
                if sink == "accumulate" and incoming[parent] == 1:
                    lines.append(f"G{i} += {contribution}")
                elif count == 1:
                    lines.append(f"gp{i} = 0.0 + {contribution}")
                else:
                    lines.append(f"gp{i} += {contribution}")
                if sink == "accumulate" and incoming[parent] > 1 and count == incoming[parent]:
                    lines.append(f"G{i} += gp{i}")
            elif incoming[parent] == 1 and contribution == g:
                grads[parent] = g  # one `+` feeds it: the same number
            else:  # summed left to right in one expression once the last one is known
                pending.setdefault(parent, []).append(contribution)
                if count == incoming[parent]:
                    grads[parent] = f"g{position[parent]}"
                    lines.extend(_sum_lines(grads[parent], pending.pop(parent)))
    for i, p in enumerate(params):
        if p not in seen:
            lines.append(f"G{i} += 0.0" if sink == "accumulate" else f"gp{i} = 0.0")
    return lines


def _sum_lines(target: str, terms: list[str]) -> list[str]:
    """target = t1 + t2 + … (left to right, as the engine's +=), MAX_INLINE_DEPTH a line."""
    lines = []
    for start in range(0, len(terms), MAX_INLINE_DEPTH):
        chunk = terms[start : start + MAX_INLINE_DEPTH]
        head = [] if start == 0 else [target]
        lines.append(f"{target} = {' + '.join(head + chunk)}")
    return lines


def _clip_lines(names: list[str], kind: str | None) -> list[str]:
    """Clipping, counted: `nupd` updates, `nclip` clipped, `before`/`after` Σ‖g‖."""
    if kind is None:
        return []
    norm = [f"s = {names[0]} * {names[0]}", *[f"s += {g} * {g}" for g in names[1:]]]
    if kind == "value":
        if len(names) < 250:
            test = [f"big = max({', '.join(f'abs({g})' for g in names)})"]
        else:
            test = ["big = 0.0", *[f"big = max(big, abs({g}))" for g in names]]
        test += ["if big > clip:", "    nclip += 1"]
        test += [
            f"    {g} = clip if {g} > clip else (-clip if {g} < -clip else {g})" for g in names
        ]
    else:
        test = ["if norm > clip:", "    f = clip / norm", "    nclip += 1"]
        test += [f"    {g} = {g} * f" for g in names]
    return [
        *norm,
        "norm = sqrt(s)",
        "before += norm",
        "nupd += 1",
        *test,
        *_indent([*norm, "after += sqrt(s)"], 1),
        "else:",
        "    after += norm",
    ]


# What `run` adds to `counts` (see `_clip_lines`), and each one's zero.
_COUNTED = (("nupd", "0"), ("nclip", "0"), ("before", "0.0"), ("after", "0.0"))


def _update_lines(n: int, clip: str | None, l2: bool) -> list[str]:
    """Mean gradient (+ 2·l2·p), clipping, p ← p − lr·g (one line each without clipping)."""
    decay = [f" + decay2 * p{i}" if l2 else "" for i in range(n)]
    if clip is None:
        return [f"p{i} = p{i} - lr * (G{i} / m{decay[i]})" for i in range(n)]
    return [
        *[f"G{i} = G{i} / m{decay[i]}" for i in range(n)],
        *_clip_lines([f"G{i}" for i in range(n)], clip),
        *[f"p{i} = p{i} - lr * G{i}" for i in range(n)],
    ]


def _l2_lines(n: int, m: str) -> list[str]:
    """The loss's l2·Σp² at the current weights, `m` times (once per example)."""
    return [
        "reg = p0 * p0",
        *[f"reg += p{i} * p{i}" for i in range(1, n)],
        f"total += decay * reg * {m}" if m != "1" else "total += decay * reg",
    ]


def _indent(lines: list[str], depth: int) -> list[str]:
    pad = "    " * depth
    return [pad + line for line in lines]


@lru_cache(maxsize=4)
def _compile(
    sizes: tuple[int, ...],
    activations: tuple[str, ...],
    loss: str,
    clip: str | None,
    online: bool,
    l2: bool = False,
) -> Compiled:
    network = Network(sizes, activations, loss)
    forward, backward, out, loss_name, namespace = _graph_code(network)
    threshold = _literal(LOSS_FUNCTIONS[loss].threshold)
    n = network.n_parameters
    ps = [f"p{i}" for i in range(n)]
    xs = [f"x{j}" for j in range(sizes[0])]
    unpack_p = f"{', '.join(ps)}, = P"
    unpack_x = f"{', '.join(xs)}, = X[i]"
    loss_of_example = [unpack_x, "y = Y[i]", *forward, f"total += {loss_name}"]
    head = [
        *loss_of_example,
        # as `is_correct`: NaN is wrong
        f"if ({out} > {threshold} if y > 0.5 else {out} <= {threshold}):",
        "    correct += 1",
    ]
    example = [*head, *backward["assign"]]  # a parameter's grad in gp{i}
    summing = [*head, *backward["accumulate"]]  # added straight into the batch sum G{i}
    lines = [
        "def run(P, X, Y, order, start, stop, batch, lr, clip, total, correct, decay=0.0, "
        "counts=None):",
        "    " + unpack_p,
        "    decay2 = 2.0 * decay",
        *[f"    {name} = {zero}" for name, zero in _COUNTED],
    ]
    if online:  # batch of one: the gradient is the example's own (exactly: -0.0 + g = g, g / 1 = g)
        body = [
            "for i in order[start:stop]:",
            *_indent(_l2_lines(n, "1") if l2 else [], 1),
            *_indent(example, 1),
            *_indent([f"gp{i} = gp{i} + decay2 * p{i}" for i in range(n)] if l2 else [], 1),
            *_indent(_clip_lines([f"gp{i}" for i in range(n)], clip), 1),
            *_indent([f"p{i} = p{i} - lr * gp{i}" for i in range(n)], 1),
        ]
    else:
        body = [
            "while start < stop:",
            "    end = min(start + batch, stop)",
            *_indent([f"G{i} = 0.0" for i in range(n)], 1),
            *_indent(_l2_lines(n, "(end - start)") if l2 else [], 1),
            "    for i in order[start:end]:",
            *_indent(summing, 2),
            "    m = end - start",
            *_indent(_update_lines(n, clip, l2), 1),
            "    start = end",
        ]
    lines += _indent(body, 1)
    lines += [
        f"    P[:] = [{', '.join(ps)}]",
        "    if counts is not None:",
        *[f"        counts[{k}] += {name}" for k, (name, _) in enumerate(_COUNTED)],
        "    return total, correct",
    ]
    gradient = [
        "def gradient(P, X, Y, order):",
        "    " + unpack_p,
        "    total = -0.0",
        "    correct = 0",
        *_indent([f"G{i} = 0.0" for i in range(n)], 1),
        "    for i in order:",
        *_indent(summing, 2),
        "    m = len(order)",
        f"    return total, [{', '.join(f'G{i} / m' for i in range(n))}]",
    ]
    evaluate = [
        "def evaluate(P, X, Y):",
        "    " + unpack_p,
        "    total = -0.0",
        "    outputs = []",
        "    for i in range(len(Y)):",
        *_indent(loss_of_example, 2),
        f"        outputs.append({out})",
        "    return total, outputs",
    ]
    # Only templates, our names and our constants' literals: `_only_generated` checks
    # that before anything runs. Each function is compiled on its own (the compiler's
    # peak memory) and registered: a traceback shows `<gradviz network 2-4-1: run>`.
    scope = {**compiled_names(np), "float": float, "min": min, "sqrt": math.sqrt, **namespace}
    scope["__name__"] = "gradviz.compiled"
    sources = []
    shape = "-".join(map(str, sizes))
    for name, function in (("run", lines), ("gradient", gradient), ("evaluate", evaluate)):
        source = "\n".join(function) + "\n"
        exec(_only_generated(source, f"network {shape}: {name}"), scope)
        sources.append(source)
    source = "\n".join(sources)
    return Compiled(scope["run"], scope["gradient"], scope["evaluate"], source)


# Every name the generator writes; anything else means other text got in: nothing runs.
_GENERATED_NAME = re.compile(r"(?:[pxvcfldgG]|gp)\d+")
_FUNCTIONS = frozenset(["run", "gradient", "evaluate"])  # the only strings: their names
_FIXED_NAMES = frozenset(
    {
        *_FUNCTIONS,
        *OP_NAMES,
        *(name for name, _ in _COUNTED),
        *("P", "X", "Y", "order", "start", "stop", "batch", "lr", "clip", "decay", "counts"),
        *("total", "correct", "outputs", "i", "y", "t", "s", "m", "f", "end", "norm", "big"),
        *("reg", "decay2", "np", "float", "min", "max", "len", "range", "abs", "sqrt", "append"),
        *("exp", "log", "tanh", "divide"),
    }
)


def _only_generated(source: str, label: str = "network") -> CodeType:
    """`source` compiled, once its code objects (every name and constant) are checked to
    hold only what the generator writes: it sees exactly what would run, before it runs."""
    code = codegen.compiled(source, label)
    pending = [code]
    while pending:
        part = pending.pop()
        for name in (*part.co_names, *part.co_varnames, *part.co_cellvars, *part.co_freevars):
            if name not in _FIXED_NAMES and not _GENERATED_NAME.fullmatch(name):
                raise RuntimeError(f"generated training code holds {name!r}: refusing to run it")
        for constant in part.co_consts:
            if isinstance(constant, CodeType):
                pending.append(constant)
            elif not _number_or_name(constant):
                raise RuntimeError(
                    f"generated training code holds {constant!r}: refusing to run it"
                )
    return code


def _number_or_name(constant: object) -> bool:
    """A number, None, a tuple of them, or a function's name (its `def` holds it)."""
    if constant is None or type(constant) in (int, float, bool):
        return True
    if type(constant) is tuple:
        return all(_number_or_name(item) for item in constant)
    return type(constant) is str and constant in _FUNCTIONS


def compile_network(network: Network, clip: str | None = None, online: bool = False) -> Compiled:
    """The compiled loss graph of a network's shape (cached). `clip` is None, "value" or
    "norm"; `online` specialises for batches of one. With GRADVIZ_PLAIN=1 the same three
    functions run on the engine (`Plain`): nothing generated runs, for reading, a
    debugger, or checking the compiled numbers (the same bits)."""
    if os.environ.get(PLAIN) == "1":
        plain = Plain(network, clip)
        return Compiled(plain.run, plain.gradient, plain.evaluate, "")
    return _compile(network.sizes, network.activations, network.loss, clip, online, network.l2 > 0)


PLAIN = "GRADVIZ_PLAIN"  # =1: train on the engine, not on generated code (compile_network)


class Plain:
    """`Compiled`'s three functions plainly on the engine: each example's graph built
    (`nn.example_graph`) and backpropagated, its gradients summed, averaged, clipped and
    applied in the generated code's order (the same bits), ten to fifty times slower."""

    def __init__(self, network: Network, clip: str | None = None) -> None:
        self.network = network.copy()  # its weights are set to P for every batch
        self.clip = clip
        self.threshold = LOSS_FUNCTIONS[network.loss].threshold

    def _examples(
        self, P: Sequence[float], X: Sequence, Y: Sequence, rows: Sequence[int], total: float
    ) -> tuple[float, int, list[float], list[float]]:
        """The examples `rows` at the weights P, forward and backward: `total` plus their
        losses, how many are right, their gradients' sum and their outputs."""
        self.network.set_flat(P)
        params = self.network.parameters()
        correct, G, outputs = 0, [0.0] * len(P), []
        for i in rows:
            built = example_graph(self.network, X[i], Y[i])
            total += built.loss.data
            correct += is_correct(built.output.data, Y[i], self.threshold)
            G = [s + p.grad for s, p in zip(G, params, strict=True)]
            outputs.append(built.output.data)
        return total, correct, G, outputs

    def run(
        self,
        P: list[float],
        X: Sequence[Sequence[float]],
        Y: Sequence[float],
        order: list[int],
        start: int,
        stop: int,
        batch: int,
        lr: float,
        clip: float,
        total: float = -0.0,
        correct: int = 0,
        decay: float = 0.0,
        counts: list | None = None,
    ) -> tuple[float, int]:
        tally = [0, 0, 0.0, 0.0]  # updates, clipped, Σ‖g‖ before and after clipping
        p = list(P)
        while start < stop:
            end = min(start + batch, stop)
            m = end - start
            if self.network.l2 > 0:  # l2·Σp² at the batch's starting weights, once per example
                total += decay * sum_of_squares(p) * m
            total, right, G, _ = self._examples(p, X, Y, order[start:end], total)
            correct += right
            G = [s / m for s in G]  # one example's: g itself (a grad starts 0.0 +, never -0.0)
            if self.network.l2 > 0:
                G = [g + 2.0 * decay * w for g, w in zip(G, p, strict=True)]
            if self.clip is not None:
                G = _clipped(G, self.clip, clip, tally)
            p = [w - lr * g for w, g in zip(p, G, strict=True)]
            start = end
        P[:] = p
        if counts is not None:
            for k, value in enumerate(tally):
                counts[k] += value
        return total, correct

    def gradient(
        self, P: list[float], X: Sequence[Sequence[float]], Y: Sequence[float], order: list[int]
    ) -> tuple[float, list[float]]:
        total, _, G, _ = self._examples(P, X, Y, order, -0.0)
        return total, [s / len(order) for s in G]

    def evaluate(
        self, P: list[float], X: Sequence[Sequence[float]], Y: Sequence[float]
    ) -> tuple[float, list[float]]:
        total, _, _, outputs = self._examples(P, X, Y, range(len(Y)), -0.0)
        return total, outputs


def _clipped(G: list[float], kind: str, c: float, tally: list) -> list[float]:
    """Clipping as `_clip_lines` does it, counted into `tally`."""
    norm = math.sqrt(sum_of_squares(G))
    tally[0] += 1
    tally[2] += norm
    if kind == "value":
        # the largest |g| as `_clip_lines` finds it (they differ only when one is NaN)
        big = max(abs(g) for g in G) if len(G) < 250 else 0.0
        for g in G if len(G) >= 250 else ():
            big = max(big, abs(g))
        clipped = big > c
        if clipped:
            G = [c if g > c else (-c if g < -c else g) for g in G]
    else:
        clipped = norm > c
        if clipped:
            f = c / norm
            G = [g * f for g in G]
    tally[1] += clipped
    tally[3] += math.sqrt(sum_of_squares(G)) if clipped else norm
    return G
