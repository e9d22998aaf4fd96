"""Which torch modules are gradviz's activations: a module is read as an op row (gradviz.ops)
only if it computes exactly that op, its parameters checked; and the row's derivative as a
function of tensors, compiled from the row's own text, for the recorder's statistics on
the device. Shared by `watch` (what it reads after each layer) and `convert` (both ways).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
import torch.nn.modules.activation as torch_activations
from torch import nn

import gradviz.codegen as codegen
from gradviz.ops import ACTIVATIONS, Op

# The activation modules whose statistics the statuses know (gradviz.ops' activations):
# a module is read as the op only if it computes exactly that op (its parameters checked).
ACTIVATION_MODULES: dict[type[nn.Module], str] = {
    nn.Sigmoid: "sigmoid",
    nn.Tanh: "tanh",
    nn.ReLU: "relu",
    nn.Softplus: "softplus",
    nn.LeakyReLU: "leaky_relu",
    nn.ELU: "elu",
    nn.GELU: "gelu",
    nn.SiLU: "silu",
}

# The parameters with which a module computes gradviz's op (torch's softplus is x itself
# beyond its threshold of 20, ours x + log1p(e^-x): the same within 2e-9, 1e-10 relative).
_EXACTLY: dict[str, dict[str, object]] = {
    "softplus": {"beta": 1.0, "threshold": 20.0},
    "leaky_relu": {"negative_slope": 0.01},
    "elu": {"alpha": 1.0},
    "gelu": {"approximate": "tanh"},
}


# The functions (and tensor methods) that apply an activation, for one applied to a
# layer's output without a module (`torch.relu(self.fc(x))`, TransformerEncoderLayer's
# default relu, `x.relu_()`): each with what tells, from its arguments, the op row it
# computes exactly (None: another activation, or the same one with other parameters).
def _functional_activations() -> dict[Callable[..., Any], Callable[..., str | None]]:
    """Each op row a module computes, by its functions: `F.<op>`, and `torch.<op>` and
    `Tensor.<op>` where torch has them, and their in-place forms (`F.elu_`, `x.relu_()`),
    each with a check of its arguments against the parameters the module is checked
    against (`_EXACTLY`)."""
    found: dict[Callable[..., Any], Callable[..., str | None]] = {}
    for kind in ACTIVATION_MODULES.values():
        wanted = _EXACTLY.get(kind, {})
        arguments = _ARGUMENTS.get(kind, ())

        def check(*args: Any, kind: str = kind, wanted=wanted, arguments=arguments, **kwargs):  # type: ignore[no-untyped-def]
            given = {name: default for name, default in arguments}
            given |= dict(zip((name for name, _ in arguments), args[1:], strict=False))
            given |= kwargs
            return kind if all(given.get(k) == v for k, v in wanted.items()) else None

        for home, name in itertools.product((F, torch, torch.Tensor), (kind, f"{kind}_")):
            function = getattr(home, name, None)
            if function is not None:
                found[function] = check
    # activations gradviz does not know, and their in-place forms: said, read as linear
    for home, name, suffix in itertools.product((F, torch), _OTHERS, ("", "_")):
        function = getattr(home, name + suffix, None)
        if function is not None:
            found[function] = lambda *args, **kwargs: None
    return found


# The functions' arguments after the input that the checks read, with torch's defaults.
_ARGUMENTS: dict[str, tuple[tuple[str, object], ...]] = {
    "softplus": (("beta", 1.0), ("threshold", 20.0)),
    "leaky_relu": (("negative_slope", 0.01),),
    "elu": (("alpha", 1.0),),
    "gelu": (("approximate", "none"),),
}
_OTHERS = (
    "hardtanh", "relu6", "mish", "selu", "celu", "softsign", "logsigmoid", "hardswish",
    "hardsigmoid", "prelu", "rrelu", "glu", "tanhshrink", "threshold",
)  # fmt: skip
FUNCTIONAL = _functional_activations()

# The helpers an op row's derivative names, as torch functions (on the device).
_TORCH_NAMES: dict[str, Any] = {
    "np": torch,
    "number": lambda x: x,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "relu": torch.relu,
    "exp": torch.exp,
    "expm1": torch.expm1,
    "log1p": torch.log1p,
    "where": torch.where,
    # (a > 0) as a's dtype in one pass: a bool tensor and its copy cost four times as much
    "step": lambda a: torch.gt(a, 0, out=torch.empty_like(a)),
    "inf": math.inf,
    "nan": math.nan,
    "__name__": __name__,
    # (`__import__`: under a TorchDispatchMode, as torch's FlopCounterMode, torch's C++
    # imports Python modules through the calling frame's builtins)
    "__builtins__": {"abs": torch.abs, "float": float, "__import__": __import__},
}


def activation_of(module: nn.Module) -> str | None:
    """The op row `module` computes exactly ("gelu" for nn.GELU(approximate="tanh")), or
    None (another activation, or the same one with other parameters)."""
    kind = ACTIVATION_MODULES.get(type(module))
    if kind is None:
        return None
    wanted = _EXACTLY.get(kind, {})
    return kind if all(getattr(module, k, None) == v for k, v in wanted.items()) else None


def module_for(kind: str) -> nn.Module:
    """A new module that computes the op row `kind` exactly: `activation_of`'s inverse
    (torch's class for the row, made with the parameters it is checked against)."""
    cls = next(cls for cls, name in ACTIVATION_MODULES.items() if name == kind)
    return cls(**_EXACTLY.get(kind, {}))


def in_place(module: nn.Module) -> bool:
    """An activation that overwrites its input: a forward hook sees only its output, so
    one whose slope needs the input (every op but sigmoid, tanh, relu) cannot be read."""
    return bool(getattr(module, "inplace", False))


def is_activation(module: nn.Module) -> bool:
    """A module of torch's activation family (nn.GELU, nn.Hardtanh, nn.PReLU, ...), not
    nn.MultiheadAttention (which lives there too, but holds layers of its own)."""
    return type(module).__module__ == torch_activations.__name__ and not any(module.children())


def torch_slope(op: Op) -> Any:
    """The op row's derivative as a function of (output, input) tensors, compiled from
    the row's own text (the table's, never user text) with torch's helpers."""
    return codegen.generated("out, a", f"return {op.d[0]}", _TORCH_NAMES, f"d_{op.name}_torch")


def output_quadratic(op: Op) -> tuple[float, float, float] | None:
    """(c0, c1, c2) where the row's derivative is written in its output alone as
    c0 + c1·out + c2·out² (σ′ = out − out², tanh′ = 1 − out²): its mean over a batch is then
    c0 + c1·E[out] + c2·E[out²], from the two sums the recorder keeps of every output."""
    if re.search(r"\ba\b", op.d[0]):
        return None
    slope = torch_slope(op)
    at = [float(slope(torch.tensor(x, dtype=torch.float64), None)) for x in (0.0, 1.0, 2.0, 3.0)]
    c0, c2 = at[0], (at[2] - 2.0 * at[1] + at[0]) / 2.0
    c1 = at[1] - c0 - c2
    return (c0, c1, c2) if c0 + 3.0 * c1 + 9.0 * c2 == at[3] else None


# The activations read off their outputs alone, each as its op row allows: a derivative
# quadratic in the output (sigmoid, tanh), or a unit that dies at 0 and is never negative,
# whose slope is [out > 0] (relu). The others through the row's derivative at the input.
QUADRATIC_SLOPES = {
    name: quadratic
    for name, op in ACTIVATIONS.items()
    if op is not None and (quadratic := output_quadratic(op)) is not None
}
FROM_OUTPUTS = frozenset(QUADRATIC_SLOPES) | {
    name
    for name, op in ACTIVATIONS.items()
    if op is not None and op.dies_at == 0.0 and op.never_negative
}
