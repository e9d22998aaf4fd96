"""The five models gradviz.torch draws in the tests, the samples and the benchmarks: an
MLP, a 10-layer sigmoid stack, a small CNN, a transformer block (nn.TransformerEncoderLayer
with a head) and an LSTM. Each maker returns the model and a function computing its loss
(fixed seeds: the same numbers every run)."""

from __future__ import annotations

import torch
from torch import nn


def mlp():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))
    x = torch.randn(8, 2)
    y = torch.randn(8, 1)
    return net, lambda: nn.functional.mse_loss(net(x), y)


def deep():
    torch.manual_seed(0)
    layers = [nn.Linear(2, 8), nn.Sigmoid()]
    for _ in range(9):
        layers += [nn.Linear(8, 8), nn.Sigmoid()]
    layers += [nn.Linear(8, 1)]
    net = nn.Sequential(*layers)
    x = torch.randn(8, 2)
    y = torch.randn(8, 1)
    return net, lambda: nn.functional.mse_loss(net(x), y)


def cnn():
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


def transformer():
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
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 6, batch_first=True)
        self.head = nn.Linear(6, 1)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


def lstm():
    torch.manual_seed(0)
    net = LSTMNet()
    x = torch.randn(2, 4, 3)
    y = torch.randn(2, 1)
    return net, lambda: nn.functional.mse_loss(net(x), y)


MODELS = {"mlp": mlp, "deep": deep, "cnn": cnn, "transformer": transformer, "lstm": lstm}
