"""Training as matrix products over the batch: the second execution of `gradviz.train`.

The compiled trainer costs examples × parameters with almost nothing fixed per call: it
wins on tiny networks and online updates. A layer over a batch is a few numpy calls,
whatever its size: it wins where layers are wide and batches big (the lesson's deep net:
about 20× per epoch, bench/crossover.py); `gradviz.train.uses_batches` chooses.

The update is gradviz.train's, each activation from its op row and each loss from
gradviz.nn on `Value`s over the batch; only the order of the sums differs (BLAS's), so
the numbers agree with the engine to about 1e-15 per step.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from gradviz.engine import Value, backpropagate, evaluate, topological_order
from gradviz.nn import LOSS_FUNCTIONS, LayerSample, Network, layer_views, samples_of
from gradviz.ops import ACTIVATIONS


class Batched:
    """A network's shape as layers over a flat float64 parameter vector `P`
    (`nn.layer_views`), so that an update is one vector operation. X is an (n, inputs)
    array, Y an (n,) array of targets."""

    def __init__(self, network: Network, clip: str | None = None) -> None:
        self.network = network
        self.clip = clip  # None, "value" or "norm", as `gradviz.compile.compile_network`
        self.ops = [ACTIVATIONS[name] for name in network.activations]
        self.loss = LOSS_FUNCTIONS[network.loss]
        self.size = network.n_parameters
        self._G = np.empty(self.size)  # the batch's gradient sum, in P's layout
        self._grads = self.layers(self._G)
        self._loss_graphs: dict[int, tuple] = {}  # batch size: (output, target, order)
        self._rows: tuple = (None, None, None, None)  # (order, X, Y, rows) last trained on
        self._trained: tuple = (None, [])  # (P, its layers): training updates one P in place
        self._measured: tuple | None = None  # the pass `samples` made (`_measured_pass`)

    def layers(self, P: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        return layer_views(self.network.sizes, P)

    def forward(
        self, layers: list[tuple[np.ndarray, np.ndarray]], X: np.ndarray
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Every layer's pre-activations and activations over the batch, (m, n_out) each."""
        pre, act = [], []
        values = X
        for (W, b), op in zip(layers, self.ops, strict=True):
            z = values @ W.T + b
            values = z if op is None else op.forward(z)
            pre.append(z)
            act.append(values)
        return pre, act

    def losses(self, outputs: np.ndarray, Y: np.ndarray, slopes: bool) -> tuple:
        """Each example's loss, and (if `slopes`) ∂loss/∂output: the spec's loss on Values
        over the batch (built once per batch size, then evaluated again) and run backward."""
        m = len(Y)
        graph = self._loss_graphs.get(m)
        if graph is None:
            output, target = Value(outputs), Value(Y)
            order = topological_order(self.loss.build(output, target))
            graph = self._loss_graphs[m] = (output, target, order)
        else:
            output, target, order = graph
            output.data, target.data = outputs, Y
            evaluate(order)
        values = _per_example(order[-1].data, m)
        if not slopes:
            return values, None
        backpropagate(order)
        return values, _per_example(output.grad, m)

    def gradient(
        self,
        layers: list[tuple[np.ndarray, np.ndarray]],
        X: np.ndarray,
        Y: np.ndarray,
        pre: list[np.ndarray],
        act: list[np.ndarray],
    ) -> tuple[np.ndarray, np.ndarray]:
        """(each example's loss, the SUM of every parameter's gradient over the batch, in
        P's layout, in a buffer the next call overwrites): the chain rule, layer by layer."""
        losses, slope = self.losses(act[-1][:, 0], Y, slopes=True)
        delta = slope[:, None]
        for i in range(len(layers) - 1, -1, -1):
            op = self.ops[i]
            if op is not None:  # ∂loss/∂z = ∂loss/∂a · a'(z), the op's own slope
                delta = delta * op.local(act[i], pre[i])[0]
            GW, Gb = self._grads[i]
            np.matmul(delta.T, act[i - 1] if i else X, out=GW)
            np.add.reduce(delta, axis=0, out=Gb)
            if i:
                delta = delta @ layers[i][0]
        return losses, self._G

    def run(
        self,
        P: np.ndarray,
        X: np.ndarray,
        Y: np.ndarray,
        order: Sequence[int],
        start: int,
        stop: int,
        batch: int,
        lr: float,
        clip_at: float,
        total: float = -0.0,
        correct: int = 0,
        decay: float = 0.0,
        counts: list | None = None,
    ) -> tuple[float, int]:
        """`gradviz.compile.Compiled.run` over batches, the same arguments and results."""
        Xo, Yo, positive = self._examples(order, X, Y, start, stop)
        tally = [0, 0, 0.0, 0.0]  # updates, clipped, Σ‖g‖ before and after clipping
        if self._trained[0] is not P:
            self._trained = (P, self.layers(P))
        layers = self._trained[1]
        for first in range(0, len(Yo), batch):
            x, y = Xo[first : first + batch], Yo[first : first + batch]
            m = len(y)
            if decay:  # the l2 term at the batch's starting weights, once per example
                total += decay * float(P @ P) * m
            kept = self._measured_pass(P, x, y) if first == 0 else None
            if kept is None:
                pre, act = self.forward(layers, x)
                losses, G = self.gradient(layers, x, y, pre, act)
            else:
                pre, act, losses, G = kept
            total += float(losses.sum())
            # right: on the target's side of the threshold, as `nn.is_correct` (NaN: wrong)
            t, out = self.loss.threshold, act[-1][:, 0]
            right = np.where(positive[first : first + batch], out > t, out <= t)
            correct += int(np.count_nonzero(right))
            G /= m
            if decay:
                G += (2.0 * decay) * P
            if self.clip is not None:
                norm = math.sqrt(float(G @ G))
                tally[0] += 1
                tally[2] += norm
                if self.clip == "value":
                    hit = float(np.fmax.reduce(np.abs(G))) > clip_at  # (NaN is no hit)
                    if hit:
                        np.clip(G, -clip_at, clip_at, out=G)
                elif hit := norm > clip_at:
                    G *= clip_at / norm
                tally[1] += hit
                tally[3] += math.sqrt(float(G @ G)) if hit else norm
            P -= lr * G
        if counts is not None:
            for k, value in enumerate(tally):
                counts[k] += value
        return total, correct

    def _measured_pass(
        self, P: np.ndarray, x: np.ndarray, y: np.ndarray
    ) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray, np.ndarray] | None:
        """The pass `samples` made last, if this batch is the same weights on the same rows
        (full-batch training records its statistics on all rows, then the next epoch starts
        with that very pass). Used once, then dropped."""
        kept, self._measured = self._measured, None
        if kept is None:
            return None
        P_then, X_then, Y_then, pre, act, losses, G = kept
        if not (  # (arrays of other shapes are not equal)
            np.array_equal(P_then, P) and np.array_equal(X_then, x) and np.array_equal(Y_then, y)
        ):
            return None
        self._G[:] = G
        return pre, act, losses, self._G

    def _examples(
        self, order: Sequence[int], X: np.ndarray, Y: np.ndarray, start: int, stop: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """X, Y and Y > 0.5 of the examples order[start:stop]. The last order's are kept:
        full-batch training passes the same (never changed) order list every epoch."""
        last, last_X, last_Y, examples = self._rows
        if last is not order or last_X is not X or last_Y is not Y:
            rows = np.asarray(order, dtype=np.intp)
            examples = (X[rows], Y[rows], Y[rows] > 0.5)
            self._rows = (order, X, Y, examples)
        return tuple(part[start:stop] for part in examples)  # type: ignore[return-value]

    def evaluate(self, P: np.ndarray, X: np.ndarray, Y: np.ndarray) -> tuple[float, np.ndarray]:
        """(sum of losses, every output) of the weights P, unchanged."""
        _, act = self.forward(self.layers(P), X)
        outputs = act[-1][:, 0]
        losses, _ = self.losses(outputs, Y, slopes=False)
        return float(losses.sum()), outputs

    def samples(
        self,
        P: np.ndarray,
        X: np.ndarray,
        Y: np.ndarray,
        previous: np.ndarray | None = None,
    ) -> list[LayerSample]:
        """What `nn.layer_samples` measures, from one batched pass."""
        n = len(Y)
        layers = self.layers(P)
        pre, act = self.forward(layers, X)
        if n:
            losses, G = self.gradient(layers, X, Y, pre, act)
            self._measured = (P.copy(), X, Y, pre, act, losses, G.copy())
            G = G / n
        else:
            G = np.full(self.size, math.nan)
        return samples_of(self.network, P, G, pre, act, previous)


def _per_example(values: np.ndarray | float, m: int) -> np.ndarray:
    """A batch's per-example numbers as an (m,) array (one number broadcast)."""
    if type(values) is np.ndarray and values.shape == (m,):
        return values
    return np.broadcast_to(values, (m,))
