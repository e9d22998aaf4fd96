"""The same training in micrograd 0.1.0 (its `Value`, its loop): the other yardstick of
bench/whole.py, from the same WORKLOAD.json as bench/numpy_train.py.

`python bench/micrograd_train.py WORKLOAD.json [EPOCHS]` trains the first EPOCHS epochs (all
by default), the micrograd lesson's way: every step builds the graph of Values from the
weights, sums the examples' losses, zeroes every grad, `backward()`, updates. micrograd has
no sigmoid: it gets one in its own style (a `_backward` closure, math.exp). Imports no
gradviz and no numpy.
"""

import json
import math
import sys

from micrograd.engine import Value


def sigmoid(v):
    x = v.data
    e = math.exp(-abs(x))
    s = 1.0 / (1.0 + e) if x >= 0 else e / (1.0 + e)
    out = Value(s, (v,), "sigmoid")

    def _backward():
        v.grad += s * (1.0 - s) * out.grad

    out._backward = _backward
    return out


def activate(v, kind):
    return sigmoid(v) if kind == "sigmoid" else (v.relu() if kind == "relu" else v)


def main(path, epochs=None):
    with open(path) as file:
        w = json.load(file)
    layers = [
        ([[Value(x) for x in row] for row in W], [Value(x) for x in b]) for W, b in w["weights"]
    ]
    params = [p for W, b in layers for row, c in zip(W, b, strict=True) for p in (*row, c)]
    X, Y = w["X"], w["Y"]
    n = len(X)
    epochs = w["epochs"] if epochs is None else epochs

    def loss_of(i):
        values = X[i]
        for k, (W, b) in enumerate(layers):
            kind = w["output"] if k == len(layers) - 1 else w["hidden"]
            values = [
                activate(sum((wi * v for wi, v in zip(row, values, strict=True)), c), kind)
                for row, c in zip(W, b, strict=True)
            ]
        out = values[0]
        if w["loss"] == "hinge":
            return (1 + -(2.0 * Y[i] - 1.0) * out).relu()
        d = out - Y[i]
        return d * d

    for epoch in range(epochs):
        lr = w["lr"]
        if w["lr_end"] is not None:
            lr = w["lr"] - (w["lr"] - w["lr_end"]) * epoch / w["epochs"]
        batches = [[i] for i in w["orders"][epoch]] if w["online"] else [list(range(n))]
        for rows in batches:
            total = sum((loss_of(i) for i in rows), Value(0.0)) * (1.0 / len(rows))
            if w["l2"]:
                total = total + w["l2"] * sum((p * p for p in params), Value(0.0))
            for p in params:
                p.grad = 0.0
            total.backward()
            for p in params:
                p.data -= lr * p.grad
    print(f"{epochs} epochs, loss {total.data:.6f}")


if __name__ == "__main__":
    sys.setrecursionlimit(100_000)  # micrograd's topological sort is recursive
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else None)
