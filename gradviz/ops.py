"""The op table as data: every primitive of the engine, defined once.

An op is two small Python expressions in its input names: its value (`out="a * b"`) and
one local derivative per input (`d=("b", "a")`, in `a`, `b` and the result `out`). Where
g · d would overflow though the product does not, a row also writes the product in the
incoming gradient `g` (`chain`: log credits g/a, as PyTorch does; 1/a is inf at 1e-310).
From those strings come the engine's callables (`forward`, `local`, `credit`, compiled on
first use by `gradviz.codegen` from the table's text, never user text), the training
compiler's templates (`code`, `local_code`), the formulas shown to a learner (unless the
textbook writes them differently: `shown`, checked numerically by tests/test_ops.py) and
the live page's JavaScript (`javascript(op)`). The rest of what anybody asks about an op
lives in its row too: its form (`a·b`), its node's symbol, positive defaults, kinks, the
largest slope, an activation's saturation band, micrograd's name.

The expressions may name only `HELPERS` (`number`, `div`, `step`, `where`, `exp`, ...,
`inf`, `nan`) and numpy as `np`: each works on a float and on a numpy array alike, so one
graph evaluates a batch with the numbers of separate scalar runs, and assets/engine.js
defines the same helpers. Adding an op is adding a row here (and to `UNARY_OPS`), its tests and a
line of docs: everything else reads the row.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeAlias

import gradviz.codegen as codegen

inf = math.inf

if TYPE_CHECKING:
    import numpy

Number: TypeAlias = "float | numpy.ndarray"


# -- the helpers an op's expressions may name ---------------------------------------


def _numpy() -> ModuleType:
    """numpy, imported on first use (drawing `a + b` needs none), then read from sys.modules:
    an import statement costs 0.3 µs a call, as much as tanh of a float itself."""
    numpy = sys.modules.get("numpy")
    if numpy is None:
        import numpy  # lazy: start-up
    return numpy


def number(r: Any) -> Number:
    """A numpy result (an array or a numpy scalar) as the engine stores it: an array, or a
    plain Python float for one number."""
    return r if r.ndim else float(r)


def div(x: Number, y: Number) -> Number:
    """x / y as IEEE 754 says, also for y = 0 (±inf, or nan for 0/0): never an exception."""
    if type(x) is float and type(y) is float:
        try:
            return x / y
        except ZeroDivisionError:
            if x != x or x == 0.0:
                return math.nan
            return math.copysign(math.inf, x) * math.copysign(1.0, y)
    return number(_numpy().divide(x, y))


def step(a: Number) -> Number:
    """The step function: 1 for a > 0, 0 for a <= 0, NaN passed through (np.heaviside's
    numbers: relu's slope, taken over every layer of a batch in every epoch)."""
    if type(a) is float:
        return 1.0 if a > 0.0 else (0.0 if a <= 0.0 else a)
    np = _numpy()
    if type(a) is not np.ndarray or a.ndim == 0:
        return number(np.heaviside(a, 0.0))
    # a comparison and a cast, and NaN put back only where there is one: np.heaviside has
    # no vectorised loop (206 us on a (600, 48) layer, this 12 us)
    out = np.greater(a, 0.0).astype(a.dtype if a.dtype.kind == "f" else float)
    nan = np.isnan(a)
    if nan.any():
        out[nan] = np.nan
    return out


# Plain floats go through `math` (a call costs a quarter of a numpy ufunc's), arrays through
# numpy. The two may round exp and log differently in the last bit: a batch of samples then
# gives each sample's numbers within 1 ulp per op of a separate scalar run (sin, cos, sqrt,
# abs and IEEE arithmetic agree exactly; tanh stays on numpy, see there). Where math raises,
# the IEEE value is returned.


def exp(a: Number) -> Number:
    """e^a; inf on overflow."""
    if type(a) is float:
        try:
            return math.exp(a)
        except OverflowError:
            return math.inf
    return number(_numpy().exp(a))


def log(a: Number) -> Number:
    """ln(a); -inf at 0, nan below."""
    if type(a) is float:
        if a > 0.0:
            return math.log(a)
        return -math.inf if a == 0.0 else math.nan
    return number(_numpy().log(a))


def tanh(a: Number) -> Number:
    """numpy's tanh for floats too: its vectorised tanh is up to 3 ulps from math.tanh,
    and one op's batch and scalar results stay within 1 ulp only this way (exactly)."""
    return number(_numpy().tanh(a))


def sin(a: Number) -> Number:
    """sin(a); nan at ±inf."""
    if type(a) is float:
        return math.sin(a) if a - a == 0.0 else math.nan
    return number(_numpy().sin(a))


def cos(a: Number) -> Number:
    """cos(a); nan at ±inf."""
    if type(a) is float:
        return math.cos(a) if a - a == 0.0 else math.nan
    return number(_numpy().cos(a))


def sqrt(a: Number) -> Number:
    """√a; nan below 0 (and -0.0 at -0.0, as IEEE says)."""
    if type(a) is float:
        return math.sqrt(a) if a >= 0.0 else (a if a != a else math.nan)
    return number(_numpy().sqrt(a))


def sigmoid(a: Number) -> Number:
    """σ(a) = 1/(1 + e^-a), never exponentiating a positive number: no overflow, tiny
    tails kept (σ(-40) ≈ 4e-18)."""
    if type(a) is float:
        e = math.exp(-abs(a))
        return 1.0 / (1.0 + e) if a >= 0.0 else e / (1.0 + e)
    np = _numpy()
    if type(a) is not np.ndarray or a.ndim == 0:
        return sigmoid(float(a))
    # the same two branches over an array, in place: a deep net's forward pass calls this
    # once per layer, and each array made is a visible part of the layer's cost
    e = np.abs(a if a.dtype.kind in "fc" else a.astype(float))
    np.negative(e, out=e)
    np.exp(e, out=e)
    denominator = e + 1.0
    # the numerator, 1 where a ≥ 0 and e below: e ≤ 1, so it is max(e, [a ≥ 0]) (NaN kept),
    # a third of the cost of a masked copy
    np.maximum(e, np.greater_equal(a, 0.0), out=e)
    return np.divide(e, denominator, out=e)


def relu(a: Number) -> Number:
    """max(a, 0), NaN passed through (np.maximum)."""
    if type(a) is float:
        return a if a > 0.0 else (0.0 if a <= 0.0 else a)
    return number(_numpy().maximum(a, 0.0))


def where(condition: Any, x: Number, y: Number) -> Number:
    """x where the condition holds, else y (both evaluated): a branch in an expression
    that floats, arrays and JavaScript (`c ? x : y`) all read the same way."""
    if type(condition) is bool:
        return x if condition else y
    return number(_numpy().where(condition, x, y))


def log1p(a: Number) -> Number:
    """ln(1 + a), exact for tiny a; -inf at -1, nan below."""
    if type(a) is float:
        if a > -1.0:
            return math.log1p(a)
        return -math.inf if a == -1.0 else math.nan
    return number(_numpy().log1p(a))


def expm1(a: Number) -> Number:
    """e^a - 1, exact for tiny a; inf on overflow."""
    if type(a) is float:
        try:
            return math.expm1(a)
        except OverflowError:
            return math.inf
    return number(_numpy().expm1(a))


# numpy's power loop takes exact shortcuts (1/a, sqrt(a), a·a, ...) when the exponent is one
# number, as in a scalar run, but not for an array of exponents, whose vectorised pow may
# differ in the last bit. Those elements are redone the scalar way (found by tests/).
_POWER_SHORTCUTS = (-1.0, 0.0, 0.5, 1.0, 2.0)


def power(a: Number, b: Number) -> Number:
    """a ** b, sample by sample exactly as separate scalar runs compute it."""
    np = _numpy()
    r = np.power(a, b)
    if type(b) is np.ndarray and r.ndim:
        base = np.broadcast_to(a, r.shape)
        for e in _POWER_SHORTCUTS:
            hit = np.broadcast_to(b == e, r.shape)
            if hit.any():
                r[hit] = np.power(base[hit], e)
    return number(r)


# The names an op's expressions may use, bound for the engine (floats and arrays).
_FUNCTIONS = (number, div, step, sigmoid, relu, power, where, exp, log1p, expm1, log, tanh)
HELPERS: dict[str, Any] = {
    **{function.__name__: function for function in (*_FUNCTIONS, sin, cos, sqrt)},
    "exp_nonpositive": math.exp,  # for floats ≤ 0 (and nan): never overflows, never raises
    "inf": math.inf,
    "nan": math.nan,
}
# The globals of the engine's generated callables (`__name__`: this module's, for the
# warnings filter).
ENGINE_NAMES = {**HELPERS, "__name__": __name__, "__builtins__": {"abs": abs, "float": float}}


def compiled_names(numpy_module: Any) -> dict[str, Any]:
    """The same names for code that only ever sees floats (gradviz.train's compiler):
    `number` is `float` there, which gives the same bits and skips a type test."""
    return {**HELPERS, "np": numpy_module, "number": float}


# -- the op ---------------------------------------------------------------------------

_TOKEN = re.compile(r"\b(out|a|b|t)\b")
_LITERAL = re.compile(r"(?<![\w.])(\d+)\.0\b")


def _template(expression: str, bound: Mapping[str, float]) -> str:
    """An expression in `a`, `b`, `out`, `t` as a compiler template in `{a}`, `{b}`, `{out}`,
    `{tmp}`, bound constants as literals (repr round-trips a float; inf, nan are names)."""
    text = _TOKEN.sub(
        lambda m: "{" + ("tmp" if m.group(1) == "t" else m.group(1)) + "}", expression
    )
    for name, value in bound.items():
        literal = repr(float(value))
        text = re.sub(rf"\b{name}\b", f"({literal})" if literal.startswith("-") else literal, text)
    return text


def _shown(expression: str, op_name: str) -> str:
    """A derivative as a learner reads it, when the code already says it plainly:
    `number(np.cos(a))` -> `cos(a)`, `1.0` -> `1`, `out` -> `exp(a)`."""
    text = expression
    if text.startswith("number(") and text.endswith(")"):
        text = text[len("number(") : -1]
    text = text.replace("np.", "").replace(" * ", "·").replace("sigmoid(", "σ(")
    text = re.sub(r"\bout\b", f"{op_name}(a)", text)
    return _LITERAL.sub(r"\1", text)


# The functions assets/engine.js defines for the page's op expressions, each the same IEEE
# operations as the helper of that name above (tests/test_html_parity.py measures them).
JS_HELPERS = frozenset(
    {"exp", "log", "log1p", "expm1", "tanh", "sin", "cos", "sqrt", "abs", "sign"}
    | {"div", "step", "relu", "sigmoid", "where", "pow"}
)
_JS_NAMES = JS_HELPERS | {"a", "b", "out", "n", "g", "inf", "nan"}
_NOT_JS = re.compile(r"\bif\b|\belse\b|\band\b|\bor\b|\bnot\b|\*\*|[&|]")


def _javascript(expression: str) -> str | None:
    """An op's expression as the page's JavaScript: the same text without numpy's spelling
    (`number(np.sign(a))` -> `(sign(a))`); None for a Python conditional or `**` (`js`)."""
    text = expression.replace("number(", "(").replace("np.", "")
    names = set(re.findall(r"(?<![\w.])[A-Za-z_]\w*", text))
    return None if _NOT_JS.search(text) or not names <= _JS_NAMES else text


def javascript(op: Op) -> tuple[str, tuple[str, ...]] | None:
    """The page's value and derivatives of an op, or None if they do not translate (an op
    made outside the table: tests/test_html_parity.py checks every row has them)."""
    if op.js is not None:
        return op.js
    forward, derivatives = _javascript(op.out), [_javascript(e) for e in op.d]
    if forward is None or None in derivatives:
        return None
    return forward, tuple(d for d in derivatives if d is not None)


def javascript_chain(op: Op) -> tuple[str, ...] | None:
    """The page's chain-rule products of an op that writes them (`Op.chain`), one per
    input (`g * (d)` where the row gives none), or None: the page multiplies g · local."""
    forms = javascript(op) if op.chain else None  # (the row writes all or none)
    if forms is None:
        return None
    products = [
        _javascript(c) if c is not None else f"g * ({d})"
        for c, d in zip(op.chain, forms[1], strict=True)
    ]
    return None if None in products else tuple(products)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class Op:
    """One primitive: written as `out`, `d` (and `shown`, `chain`), the rest derived once."""

    name: str
    symbol: str  # drawn on the op's node
    out: str  # the value, in the inputs a (, b)
    d: tuple[str, ...]  # d(out)/d(input_i), in a, b and out: the ONE definition
    shown: tuple[str, ...] | None = None  # the textbook's formulas where they differ from d
    # `out` for the compiler's floats where it calls a helper best inlined (scratch name `t`)
    inline: str | None = None
    form: str | None = None  # a learner's writing of it: "{a}·{b}"; None: "name({a})"
    passes_credit: bool = True  # False: a stop-gradient (detach)
    positive: tuple[bool, ...] = ()  # inputs whose default must be > 0 (log, sqrt, a^0.5)
    # Inputs where the slope jumps (relu and abs at 0): the gradient check reports a
    # finite difference across one (it measures neither side) instead of failing.
    kinks: tuple[float, ...] = ()
    # max |local derivative| (σ' <= 0.25; None: unbounded), for the vanishing diagnostics
    max_slope: float | None = None
    slope_name: str | None = None  # an activation's derivative as the verdict names it: σ′
    # Outputs outside this band are saturated (slope nearly 0): the statistics count them.
    saturation: tuple[float, float] | None = None
    # A unit whose outputs are all at most this passes no gradient back: dead (relu at 0).
    dies_at: float | None = None
    # Only ever rising, so an output band is an input band. gelu and silu dip below 0 (an
    # output near 0 has slope 1/2 or 0), so theirs is a band of inputs: `saturation_input`.
    monotone: bool = True
    saturation_input: tuple[float, float] | None = None
    output_range: tuple[float, float] | None = None  # bounds (σ: [0, 1]) for plots' colours
    # Never negative (σ, relu, softplus): no output layer for a hinge loss, which reads signs.
    never_negative: bool = False
    activation: bool = False  # a layer may use it (a spec's `activation`, `--activation`)
    # The verdict's advice when gradients vanish through layers of it (the first in
    # ACTIVATIONS' order of the layers' activations that has one).
    vanishing_advice: str | None = None
    # The page's JavaScript (value, derivatives) where `out` and `d` do not translate as
    # they stand (`_javascript`): pow, whose numpy shortcuts engine.js's `pow` copies.
    js: tuple[str, tuple[str, ...]] | None = None
    micrograd: str | None = None  # micrograd's `_op` where it differs from symbol ('ReLU')
    bound: Mapping[str, float] = field(default_factory=dict)  # constants named (n of a ** n)
    # g·d(out)/d(input_i) as one expression in the incoming `g` (None: g times d[i]) where
    # d alone overflows but the product does not: log's 1/a is inf at 1e-310, g/a finite.
    chain: tuple[str | None, ...] = ()

    forward: Callable[..., Number] = field(init=False)
    local: Callable[..., tuple[Number, ...]] = field(init=False)
    # credit(g, out, *inputs): the chain rule's products g·d(out)/d(input_i) (`chain`)
    credit: Callable[..., tuple[Number, ...]] = field(init=False)
    code: str = field(init=False)
    local_code: tuple[str, ...] = field(init=False)
    chain_code: tuple[str | None, ...] = field(init=False)  # `chain` as templates in {g}
    formulas: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        if not self.monotone and self.saturation is not None:
            raise ValueError(f"{self.name}: not monotone, so its saturation band is of inputs")
        inputs = "a, b"[: 3 * len(self.d) - 2]  # "a" or "a, b"
        chain = self.chain + (None,) * (len(self.d) - len(self.chain))
        credits = [c if c is not None else f"g * ({e})" for e, c in zip(self.d, chain, strict=True)]
        generated = {  # attribute: (parameters, what it returns, the function's name)
            "forward": (inputs, self.out, self.name),
            "local": (f"out, {inputs}", f"({', '.join(self.d)},)", f"d_{self.name}"),
            "credit": (f"g, out, {inputs}", f"({', '.join(credits)},)", f"credit_{self.name}"),
        }
        for attribute, (params, returned, name) in generated.items():
            object.__setattr__(
                self, attribute, _on_first_call(self, attribute, params, returned, name)
            )
        derived = {
            "code": _template(self.inline or f"out = {self.out}", self.bound),
            "local_code": tuple(_template(e, self.bound) for e in self.d),
            "chain_code": tuple(
                None if c is None else re.sub(r"\bg\b", "{g}", _template(c, self.bound))
                for c in chain
            ),
            "chain": chain if any(chain) else (),  # () where the row writes none
            "formulas": self.shown or tuple(_shown(e, self.name) for e in self.d),
        }
        for name, value in derived.items():
            object.__setattr__(self, name, value)
        if len(self.formulas) != len(self.d):
            raise ValueError(f"{self.name}: one formula per input")
        if not self.positive:
            object.__setattr__(self, "positive", (False,) * len(self.d))

    @property
    def arity(self) -> int:
        return len(self.d)

    def __repr__(self) -> str:
        return f"Op({self.name})"


def _on_first_call(op: Op, attribute: str, params: str, returned: str, name: str) -> Callable:
    """A stand-in for `op.attribute` that compiles it when first called and puts it in its
    place: compiling every op's functions at import slowed `gradviz draw`."""
    function: Callable | None = None

    def first_call(*args: Any) -> Any:
        nonlocal function
        if function is None:
            names = {**ENGINE_NAMES, **op.bound}  # the helpers and the op's constants
            if "np." in returned:
                names["np"] = _numpy()
            function = codegen.generated(params, f"return {returned}", names, name)
            object.__setattr__(op, attribute, function)
        return function(*args)

    first_call.__name__ = codegen.identifier(name)
    return first_call


# -- the table --------------------------------------------------------------------------

ADD = Op(name="add", symbol="+", out="a + b", d=("1.0", "1.0"), form="{a} + {b}")
SUB = Op(name="sub", symbol="−", out="a - b", d=("1.0", "-1.0"), form="{a} - {b}", micrograd="-")
MUL = Op(name="mul", symbol="*", out="a * b", d=("b", "a"), form="{a}·{b}")
DIV = Op(
    name="div",
    symbol="÷",
    out="div(a, b)",
    # -a/b² as -out/b: the same number where a/b is finite, without squaring b
    d=("div(1.0, b)", "div(-out, b)"),
    shown=("1/b", "-a/b²"),
    form="{a}/{b}",
    micrograd="/",
)
NEG = Op(name="neg", symbol="−", out="-a", d=("-1.0",), form="-{a}", micrograd="-")
POW = Op(
    name="pow",
    symbol="**",
    out="power(a, b)",
    # the limits the bare formulas miss: a^0 is constant (0, not 0·0⁻¹ = nan), and
    # a^b·ln(a) -> 0 as a -> 0 for b > 0. For a < 0, ln(a) is nan: a^b is not defined for
    # the exponents next to b, so its slope in b does not exist.
    d=(
        "number(np.where(np.equal(b, 0.0), 0.0, b * power(a, b - 1.0)))",
        "number(np.where(np.equal(a, 0.0) & np.greater(b, 0.0), 0.0, out * np.log(a)))",
    ),
    shown=("b·a^(b-1)", "a^b·ln(a)"),
    form="{a}^{b}",
    positive=(True, False),
    js=(
        "pow(a, b)",
        ("b === 0 ? 0 : b * pow(a, b - 1)", "a === 0 && b > 0 ? 0 : out * Math.log(a)"),
    ),
)
EXP = Op(name="exp", symbol="exp", out="exp(a)", d=("out",))
LOG = Op(
    name="log", symbol="log", out="log(a)", d=("div(1.0, a)",), shown=("1/a",),
    positive=(True,), chain=("div(g, a)",),
)  # fmt: skip
TANH = Op(
    name="tanh",
    symbol="tanh",
    out="tanh(a)",
    d=("1.0 - out * out",),
    shown=("1 - tanh²(a)",),
    max_slope=1.0,
    slope_name="tanh′",
    saturation=(-0.97, 0.97),
    output_range=(-1.0, 1.0),
    activation=True,
    vanishing_advice="Try ReLU, Xavier init, or fewer layers.",
)
SIGMOID = Op(
    name="sigmoid",
    never_negative=True,
    symbol="sigmoid",
    out="sigmoid(a)",
    inline=(  # sigmoid() on one float, written out (no call but exp's)
        "t = exp_nonpositive(-abs(a))\nout = 1.0 / (1.0 + t) if a >= 0.0 else t / (1.0 + t)"
    ),
    d=("out * (1.0 - out)",),
    shown=("σ(a)·(1 - σ(a))",),
    max_slope=0.25,
    slope_name="σ′",
    saturation=(0.015, 0.985),
    output_range=(0.0, 1.0),
    activation=True,
    vanishing_advice="Try tanh or ReLU, Xavier/He init, or fewer layers.",
)
RELU = Op(
    name="relu",
    never_negative=True,
    symbol="relu",
    out="relu(a)",
    inline="out = a if a > 0.0 else (0.0 if a <= 0.0 else a)",  # relu() on a float, written out
    d=("step(a)",),
    shown=("1 if a > 0 else 0",),
    kinks=(0.0,),
    max_slope=1.0,
    slope_name="relu′",
    dies_at=0.0,
    activation=True,
    micrograd="ReLU",
)
SIN = Op(name="sin", symbol="sin", out="sin(a)", d=("cos(a)",), max_slope=1.0)
COS = Op(name="cos", symbol="cos", out="cos(a)", d=("-sin(a)",), max_slope=1.0)
ABS = Op(
    name="abs", symbol="abs", out="abs(a)", d=("number(np.sign(a))",), kinks=(0.0,),
    max_slope=1.0,
)  # fmt: skip
SQRT = Op(
    name="sqrt", symbol="sqrt", out="sqrt(a)", d=("div(0.5, out)",),
    shown=("1/(2·√a)",), positive=(True,),
)  # fmt: skip
DETACH = Op(
    name="detach", symbol="detach", out="a", d=("0.0",), shown=("0 (stop-gradient)",),
    passes_credit=False,
)  # fmt: skip

# The activations people compare when they study vanishing and dying gradients. Their
# saturation bands are where the slope is below 0.015, as sigmoid's (σ′ = 0.0148 there).
SOFTPLUS = Op(
    name="softplus",
    never_negative=True,
    symbol="softplus",
    out="relu(a) + log1p(exp(-abs(a)))",  # ln(1 + e^a), never exponentiating a positive a
    d=("sigmoid(a)",),
    shown=("σ(a)",),
    max_slope=1.0,
    saturation=(0.015, inf),  # toward 0 for very negative inputs: slope 1 - e^-out < 0.015
    activation=True,
)
LEAKY_RELU = Op(
    name="leaky_relu",
    symbol="leaky_relu",
    out="where(a > 0.0, a, 0.01 * a)",
    d=("where(a > 0.0, 1.0, where(a <= 0.0, 0.01, a))",),  # NaN passed through, as relu's
    shown=("1 if a > 0 else 0.01",),
    kinks=(0.0,),
    max_slope=1.0,
    activation=True,  # slope 0.01 below 0: never dead, never saturated
)
ELU = Op(
    name="elu",
    symbol="elu",
    out="where(a > 0.0, a, expm1(a))",  # α = 1: smooth at 0, slope 1 on both sides
    d=("where(a > 0.0, 1.0, exp(a))",),
    shown=("1 if a > 0 else exp(a)",),
    max_slope=1.0,
    saturation=(-0.985, inf),  # toward -1 for very negative inputs: slope 1 + out
    activation=True,
)
# GPT-2's tanh approximation 0.5·a·(1 + tanh(√(2/π)·(a + 0.044715·a³))), written with
# 0.5·(1 + tanh(u)) = σ(2u): the same function, without tanh's cancellation near -1.
GELU = Op(
    name="gelu",
    symbol="gelu",
    out="a * sigmoid(1.5957691216057308 * (a + 0.044715 * a * a * a))",
    # σ(u) + a·σ(u)·(1 - σ(u))·u′: u = 2√(2/π)·(a + 0.044715·a³), u′ = 2√(2/π)·(1 + 3·0.044715·a²).
    # Beyond |a| = 1e50, σ(u) is exactly 0 or 1 in float64 and the slope is step(a): there
    # a³ overflows, and 0·inf would make the slope NaN (below -9.4e102, above 3.7e154).
    d=(
        "where(abs(a) < 1e50, sigmoid(1.5957691216057308 * (a + 0.044715 * a * a * a)) * (1.0 "
        "+ a * (1.0 - sigmoid(1.5957691216057308 * (a + 0.044715 * a * a * a))) * "
        "1.5957691216057308 * (1.0 + 0.134145 * a * a)), step(a))",
    ),
    shown=("σ(u)·(1 + a·(1 - σ(u))·u′), u = 2√(2/π)·(a + 0.044715·a³)",),
    max_slope=1.129,  # 1.12899 near a = 1.42 (tests/test_activations.py)
    monotone=False,  # dips to -0.17 near a = -0.75
    saturation_input=(-3.0, inf),
    activation=True,
)
SILU = Op(
    name="silu",
    symbol="silu",
    out="a * sigmoid(a)",
    d=("sigmoid(a) * (1.0 + a * (1.0 - sigmoid(a)))",),
    shown=("σ(a)·(1 + a·(1 - σ(a)))",),
    max_slope=1.0999,  # 1.09984 near a = 2.40
    monotone=False,  # dips to -0.28 near a = -1.28
    saturation_input=(-6.0, inf),
    activation=True,
)


@lru_cache(maxsize=256)
def power_op(n: float) -> Op:
    """`a ** n` for a constant exponent: a unary op, so `x**2` has no edge to a constant."""
    shown = repr(int(n)) if float(n).is_integer() else repr(n)
    less = repr(int(n - 1)) if float(n - 1).is_integer() else repr(n - 1)
    return Op(
        name=f"pow{shown}",
        symbol=f"**{shown}",
        out="number(np.power(a, n))",
        # a^0 is constant: its slope is 0 everywhere, also at a = 0 where 0·0⁻¹ is nan.
        d=("number(np.zeros_like(a))",) if n == 0 else ("number(n * np.power(a, n - 1.0))",),
        shown=(f"{shown}·a^{less}",) if n != 0 else ("0",),
        form=f"{{a}}^{shown}",
        positive=(not float(n).is_integer(),),
        bound={"n": float(n)},
        # one entry for every n (the page passes n): `pow` is engine.js's copy of numpy's
        js=("pow(a, n)", ("n === 0 ? 0 : n * pow(a, n - 1)",)),
    )


_UNARY = (EXP, LOG, TANH, SIGMOID, RELU, SIN, COS, ABS, SQRT, DETACH)
UNARY_OPS: dict[str, Op] = {op.name: op for op in (*_UNARY, SOFTPLUS, LEAKY_RELU, ELU, GELU, SILU)}
"""The functions an expression may call, by name (each is also a method of Value and a
function of gradviz and gradviz.engine)."""

BINARY_OPS: dict[str, Op] = {op.name: op for op in (ADD, SUB, MUL, DIV, POW)}

ACTIVATIONS: dict[str, Op | None] = {
    **{op.name: op for op in (SIGMOID, TANH, RELU)},  # the textbooks' three first
    **{op.name: op for op in UNARY_OPS.values() if op.activation},
    "linear": None,
}
"""A layer's activation by its name in a spec (None: linear, slope 1), every op marked
`activation`, in the order the spec's errors and `--activation`'s help list them."""


_TEMPLATES = [
    text
    for op in (*BINARY_OPS.values(), NEG, *UNARY_OPS.values(), power_op(0.0), power_op(2.0))
    for text in (op.code, *op.local_code)
]
OP_NAMES = frozenset(re.findall(r"[A-Za-z_]\w*", re.sub(r"\{\w+\}", "", " ".join(_TEMPLATES))))
"""Every name the compiler's templates may call (its allow-list of generated code)."""
