"""A network trained by hand in numpy: the yardstick of bench/whole.py.

`python bench/numpy_train.py WORKLOAD.json` trains the network the file describes (written
by bench/whole.py from a gradviz spec: layer sizes, activations, loss, learning rate and
its schedule, l2, epochs, full-batch or online with the example order of every epoch, the
data and the initial weights), and prints the last epoch's loss and the final accuracy.
The forward pass is one matrix product per layer, the backward pass is written out by hand,
as anyone would write it in numpy. It imports no gradviz: run as a whole process, it costs
what a numpy script costs (the interpreter, numpy's import, reading the file, training).
"""

import json
import sys

import numpy as np


def forward(layers, x, hidden, output):
    acts = [x]
    for i, (W, b) in enumerate(layers):
        z = acts[-1] @ W.T + b
        kind = output if i == len(layers) - 1 else hidden
        if kind == "sigmoid":
            acts.append(1.0 / (1.0 + np.exp(-z)))
        elif kind == "relu":
            acts.append(np.maximum(z, 0.0))
        else:
            acts.append(z)
    return acts


def step(layers, x, y, lr, w):
    """One update on the batch x, y; returns the batch's summed loss (l2 included)."""
    acts = forward(layers, x, w["hidden"], w["output"])
    out = acts[-1]
    m = len(x)
    if w["loss"] == "hinge":  # max(0, 1 - t·out), t = 2y - 1
        t = 2.0 * y - 1.0
        margin = 1.0 - t * out
        loss = np.maximum(margin, 0.0).sum()
        delta = np.where(margin > 0.0, -t, 0.0) / m
    else:  # mse
        loss = ((out - y) ** 2).sum()
        delta = 2.0 * (out - y) / m
    if w["l2"]:
        loss += w["l2"] * m * sum((W * W).sum() + (b * b).sum() for W, b in layers)
    for i in range(len(layers) - 1, -1, -1):
        W, b = layers[i]
        a = acts[i + 1]
        kind = w["output"] if i == len(layers) - 1 else w["hidden"]
        if kind == "sigmoid":
            delta = delta * a * (1.0 - a)
        elif kind == "relu":
            delta = delta * (a > 0.0)
        gW = delta.T @ acts[i]
        gb = delta.sum(axis=0)
        if i:
            delta_below = delta @ W
        if w["l2"]:
            gW = gW + 2.0 * w["l2"] * W
            gb = gb + 2.0 * w["l2"] * b
        W -= lr * gW
        b -= lr * gb
        if i:
            delta = delta_below
    return loss


def main(path):
    with open(path) as file:
        w = json.load(file)
    layers = [[np.array(W), np.array(b)] for W, b in w["weights"]]
    X = np.array(w["X"])
    Y = np.array(w["Y"])[:, None]
    n, epochs = len(X), w["epochs"]
    for epoch in range(epochs):
        lr = w["lr"]
        if w["lr_end"] is not None:  # linear: lr − (lr − lr_end)·k/epochs
            lr = w["lr"] - (w["lr"] - w["lr_end"]) * epoch / epochs
        if w["online"]:
            total = 0.0
            for i in w["orders"][epoch]:
                total += step(layers, X[i : i + 1], Y[i : i + 1], lr, w)
        else:
            total = step(layers, X, Y, lr, w)
    out = forward(layers, X, w["hidden"], w["output"])[-1]
    threshold = 0.0 if w["loss"] == "hinge" else 0.5
    accuracy = np.mean((out > threshold) == (Y > 0.5))
    print(f"loss {total / n:.6f} (last epoch), accuracy {accuracy:.2%}")


if __name__ == "__main__":
    main(sys.argv[1])
