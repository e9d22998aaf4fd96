"""Five small models to draw (the docs' pictures, the tests and bench/torch_draw.py): an
MLP, a 10-layer sigmoid stack, a small CNN, a transformer block (nn.TransformerEncoderLayer
with a head) and an LSTM. Each maker returns the model and a function computing its loss
on a fixed batch (fixed seeds: the same numbers every run).

    net, loss_of = MODELS["transformer"]()
    with gradviz.torch.record(net) as rec:
        loss_of().backward()
    rec.draw()
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

Example = tuple[nn.Module, Callable[[], torch.Tensor]]


def mlp() -> Example:
    """2-16-16-1, tanh, MSE on 8 examples."""
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))
    x = torch.randn(8, 2)
    y = torch.randn(8, 1)
    return net, lambda: nn.functional.mse_loss(net(x), y)


def deep() -> Example:
    """2-8-…-8-1 with a sigmoid after each of its 10 hidden layers: the gradient vanishes."""
    torch.manual_seed(0)
    layers = [nn.Linear(2, 8), nn.Sigmoid()]
    for _ in range(9):
        layers += [nn.Linear(8, 8), nn.Sigmoid()]
    layers += [nn.Linear(8, 1)]
    net = nn.Sequential(*layers)
    x = torch.randn(8, 2)
    y = torch.randn(8, 1)
    return net, lambda: nn.functional.mse_loss(net(x), y)


def cnn() -> Example:
    """two 3×3 convolutions, ReLU, max-pooling and a linear head on 12×12 images."""
    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Conv2d(1, 4, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(4, 8, 3),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(8 * 3 * 3, 10),
    )
    x = torch.randn(2, 1, 12, 12)
    y = torch.tensor([3, 7])
    return net, lambda: nn.functional.cross_entropy(net(x), y)


def transformer() -> Example:
    """`nn.TransformerEncoderLayer(8, 2, 16)` (no dropout) on 5 tokens, a linear head."""
    torch.manual_seed(0)
    net = nn.Sequential(
        nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True),
        nn.Flatten(),
        nn.Linear(8 * 5, 3),
    )
    x = torch.randn(2, 5, 8)
    y = torch.tensor([0, 2])
    return net, lambda: nn.functional.cross_entropy(net(x), y)


class LSTMNet(nn.Module):
    """An LSTM and a linear head on its last step's output."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(3, 6, batch_first=True)
        self.head = nn.Linear(6, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


def lstm() -> Example:
    """`nn.LSTM(3, 6)` over 4 steps, a linear head on the last."""
    torch.manual_seed(0)
    net = LSTMNet()
    x = torch.randn(2, 4, 3)
    y = torch.randn(2, 1)
    return net, lambda: nn.functional.mse_loss(net(x), y)


MODELS = {"mlp": mlp, "deep": deep, "cnn": cnn, "transformer": transformer, "lstm": lstm}
