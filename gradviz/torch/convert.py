"""One network, two engines: a gradviz network (or saved model) as a `torch.nn.Sequential`
with the same weights in float64, and the reverse for the MLPs gradviz can express
(Linear layers with biases, each followed by at most one activation module that computes
one of gradviz's ops exactly: Sigmoid, Tanh, ReLU, Softplus(), LeakyReLU(), ELU(),
GELU(approximate="tanh"), SiLU; another module or other parameters are refused by name).

The parity tests train both side by side: only the order of the sums differs.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from gradviz.errors import InputError
from gradviz.model import Model
from gradviz.nn import Network
from gradviz.torch.activations import ACTIVATION_MODULES, activation_of, module_for


def to_module(model: Model | Network) -> nn.Sequential:
    """`Linear, activation, Linear, …` in float64 with `model`'s weights (copies)."""
    network = model.network() if isinstance(model, Model) else model
    if not isinstance(network, Network):
        raise InputError(f"to_module: expected a gradviz Model or Network, got {type(model)}")
    modules: list[nn.Module] = []
    for (W, b), activation in zip(network.weights(), network.activations, strict=True):
        linear = nn.Linear(W.shape[1], W.shape[0], dtype=torch.float64)
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(np.array(W, dtype=np.float64)))
            linear.bias.copy_(torch.from_numpy(np.array(b, dtype=np.float64)))
        modules.append(linear)
        if activation in ACTIVATION_MODULES.values():
            modules.append(module_for(activation))
    return nn.Sequential(*modules)


def from_module(module: nn.Module, loss: str = "mse", l2: float = 0.0) -> Network:
    """The gradviz network of an MLP (its weights copied as float64); anything else it
    holds is refused by name, since gradviz could not compute it."""
    children = list(module.children()) if isinstance(module, nn.Sequential) else None
    if not children:
        raise InputError(
            f"from_module: expected an nn.Sequential of Linear and activation modules, "
            f"got {type(module).__name__}"
        )
    sizes: list[int] = []
    activations: list[str] = []
    weights = []
    for i, child in enumerate(children):
        if isinstance(child, nn.Linear):
            if child.bias is None:
                raise InputError(f"from_module: layer {i} has no bias; gradviz layers have one")
            if sizes and sizes[-1] != child.in_features:
                raise InputError(
                    f"from_module: layer {i} takes {child.in_features} inputs but gets {sizes[-1]}"
                )
            sizes = sizes or [child.in_features]
            sizes.append(child.out_features)
            activations.append("linear")
            weights.append(
                (
                    child.weight.detach().to(torch.float64).cpu().numpy().copy(),
                    child.bias.detach().to(torch.float64).cpu().numpy().copy(),
                )
            )
        elif (kind := activation_of(child)) and activations and activations[-1] == "linear":
            activations[-1] = kind
        else:
            if kind is not None:
                what = "an activation without a layer before it"
            elif type(child) in ACTIVATION_MODULES:
                what = "this activation with these parameters"
            else:
                what = "it"
            raise InputError(
                f"from_module: module {i} ({child!r}): gradviz cannot express {what}; it takes "
                "Linear layers each followed by at most one of "
                + ", ".join(repr(module_for(kind)) for kind in ACTIVATION_MODULES.values())
            )
    network = Network(sizes, activations, loss, l2)
    network.set_weights(weights)
    return network
