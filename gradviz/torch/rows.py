"""What the recorder reads: every parameter of a model, grouped into rows.

A row is one module's own parameters (`recurse=False`): a Linear's weight and bias, a norm's
affine weight and bias, attention's `in_proj_weight`/`in_proj_bias` (its `out_proj` is a
module of its own, so a row of its own), a raw `nn.Parameter` on a custom module. An RNN's
parameters make one row per layer and direction (`lstm.l0`, `lstm.l0_reverse`: their
`weight_ih`, `weight_hh` and biases). One tensor held by two modules (an embedding tied to
the output layer) is one row naming both (`embed ≡ head`). So every parameter is in exactly
one row, and nothing is silently dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from torch import nn

# An RNN's per-layer parameters: weight_ih_l0, bias_hh_l1_reverse, weight_hr_l0 ...
_RNN_PARAMETER = re.compile(r"^(?:weight|bias)_(?:ih|hh|hr)_(l\d+(?:_reverse)?)$")
# The modules whose output normalises away a constant shift of their input: a bias right
# before one of them gets (almost) no gradient, so it tells nothing of the signal δ.
NORMS: tuple[type[nn.Module], ...] = (
    nn.modules.batchnorm._NormBase,
    nn.LayerNorm,
    nn.GroupNorm,
    *((nn.RMSNorm,) if hasattr(nn, "RMSNorm") else ()),
)
TIED = " ≡ "  # between the names of the modules that hold one tensor


@dataclass(eq=False)
class Row:
    """One row of the table: the modules (two or more when a tensor is tied) and their
    parameters, by qualified name. `weights` are the parameters whose gradient the row's
    rms, mean and max |g| are of; `biases` give the backpropagated signal δ."""

    names: list[str]
    modules: list[nn.Module]
    params: list[tuple[str, nn.Parameter]] = field(default_factory=list)
    also: list[str] = field(default_factory=list)  # a tied tensor's other names

    @property
    def name(self) -> str:
        return TIED.join(self.names)

    @property
    def module(self) -> nn.Module:
        return self.modules[0]

    @property
    def kind(self) -> str:
        return TIED.join(dict.fromkeys(type(m).__name__ for m in self.modules))

    @property
    def weights(self) -> list[nn.Parameter]:
        found = [p for name, p in self.params if not _is_bias(name)]
        return found or [p for _, p in self.params]  # (a row of biases alone: read them)

    @property
    def biases(self) -> list[nn.Parameter]:
        if not any(not _is_bias(name) for name, _ in self.params):
            return []
        return [p for name, p in self.params if _is_bias(name)]

    @property
    def main(self) -> nn.Parameter:
        """The weight whose shape the row is known by (the largest of 2+ dimensions)."""
        weights = self.weights
        matrices = [w for w in weights if w.dim() >= 2]
        return max(matrices or weights, key=lambda w: w.numel())

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.main.shape)

    @property
    def n_params(self) -> int:
        return sum(p.numel() for _, p in self.params)

    @property
    def output_module(self) -> nn.Module:
        """The module whose output is the row's (a tied output layer: the Linear)."""
        if len(self.modules) > 1 and isinstance(self.modules[-1], nn.Linear):
            return self.modules[-1]
        return self.module

    @property
    def units(self) -> int | None:
        """The units of the module's output, for reading its activations: a Linear's or
        a convolution's outputs, a norm's features, an embedding's width; None for the
        rest (attention, RNNs, custom modules), whose output is not one row's units."""
        module = self.output_module
        if isinstance(module, nn.Linear):
            return module.out_features
        if isinstance(module, nn.modules.conv._ConvNd):
            return module.out_channels
        if isinstance(module, nn.Embedding):
            return module.embedding_dim
        if isinstance(module, nn.modules.batchnorm._NormBase):
            return module.num_features
        if isinstance(module, nn.GroupNorm):
            return module.num_channels
        if isinstance(module, nn.LayerNorm) and module.normalized_shape:
            return module.normalized_shape[-1]
        return None

    @property
    def reads_a_layer(self) -> bool:
        """Whether its bias is a layer's δ (a Linear or a convolution): its hop is read."""
        return isinstance(self.module, nn.Linear | nn.modules.conv._ConvNd)


def _is_bias(name: str) -> bool:
    return name.rsplit(".", 1)[-1].startswith("bias")


def _join(prefix: str, name: str) -> str:
    return ".".join(part for part in (prefix, name) if part)


def rows_of(model: nn.Module) -> list[Row]:
    """Every parameter of `model` in a row, in module order (the recorder orders them by
    the forward pass once it has seen one)."""
    rows: list[Row] = []
    by_key: dict[tuple[int, str], Row] = {}
    owner: dict[int, Row] = {}
    root = type(model).__name__
    for module_name, module in model.named_modules():
        for name, p in module._parameters.items():
            if p is None:
                continue
            match = _RNN_PARAMETER.match(name) if isinstance(module, nn.RNNBase) else None
            suffix = match.group(1) if match else ""
            key = (id(module), suffix)
            qualified = _join(module_name, name)
            row = by_key.get(key)
            tied = owner.get(id(p))
            if tied is not None:  # one tensor, a second holder: its row joins the first's
                label = _join(module_name or root, suffix)
                if row is not None and row is not tied:
                    _merge(tied, row, rows, by_key, owner)
                elif label not in tied.names:
                    tied.names.append(label)
                    tied.modules.append(module)
                by_key[key] = tied
                tied.also.append(qualified)
                continue
            if row is None:
                row = Row([_join(module_name or root, suffix)], [module])
                by_key[key] = row
                rows.append(row)
            row.params.append((qualified, p))
            owner[id(p)] = row
    return rows


def _merge(
    into: Row, row: Row, rows: list[Row], by_key: dict[tuple[int, str], Row], owner: dict[int, Row]
) -> None:
    """`row` holds a tensor `into` holds too: one row naming both."""
    for name in row.names:
        if name not in into.names:
            into.names.append(name)
    into.modules += [m for m in row.modules if m not in into.modules]
    into.params += row.params
    into.also += row.also
    for _, p in row.params:
        owner[id(p)] = into
    for key, value in list(by_key.items()):
        if value is row:
            by_key[key] = into
    rows.remove(row)
