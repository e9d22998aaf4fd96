"""Training on the gradviz engine: the loop, its history, and the two executions it runs on.

Compiled straight-line code (gradviz.compile) for tiny networks and online updates, matrix
products over the batch (gradviz.batched) for wide layers over many examples:
`uses_batches` chooses. One update, the same in every path (and in `compile.Plain`):
- per example: the loss and every parameter's gradient from one backward pass;
- per batch: the gradients added in example order, divided by the batch size, plus
  2·l2·p with an l2 term (whose l2·Σp² at the batch's starting weights joins each
  example's loss); clipped (each to [−c, c], or all scaled by c/‖g‖ when ‖g‖ > c);
  then p ← p − lr·g, lr being the epoch's (`Spec.rate_at`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gradviz.batched import Batched
from gradviz.compile import Compiled, compile_network
from gradviz.data import Dataset, load
from gradviz.errors import SpecError, TrainingError
from gradviz.nn import (
    LOSS_FUNCTIONS,
    LayerSample,
    Network,
    is_correct,
    layer_samples,
    parameter_count,
    stats_rows,
    sum_of_squares,
)
from gradviz.numbers import fmt
from gradviz.schema import CLIPPING_KEYS
from gradviz.spec import Spec
from gradviz.stats import Diagnosis, diagnose, diagnose_all


@dataclass
class Evaluation:
    """A network on a data set, weights unchanged: mean loss, accuracy, every output."""

    loss: float
    accuracy: float
    outputs: list[float]


@dataclass
class History:
    """What happened during training, epoch by epoch.

    `loss[e]`/`accuracy[e]` are over the examples of epoch e+1 as each was seen, before
    its own update. `snapshots` are (epoch, the per-layer state after it) at epoch 0, every
    `Spec.stats_every` epochs and the last: the latest as raw `LayerSample`s, the earlier
    ones reduced to a `stats.Diagnosis` (all together, `reduce`) so that memory stays small."""

    loss: list[float] = field(default_factory=list)
    accuracy: list[float] = field(default_factory=list)
    snapshots: list[tuple[int, list[LayerSample] | Diagnosis]] = field(default_factory=list)
    stopped: str | None = None  # why training stopped early (non-finite loss)
    # with clipping, per epoch: (updates, how many clipped, mean ‖g‖ before, mean after)
    clipping: list[tuple[int, int, float, float]] = field(default_factory=list)

    @property
    def epochs_run(self) -> int:
        return len(self.loss)

    def reduce(self) -> None:
        """Every raw moment but the latest to its Diagnosis (one `diagnose_all`)."""
        raw = [k for k, (_, s) in enumerate(self.snapshots[:-1]) if not isinstance(s, Diagnosis)]
        moments = [self.snapshots[k] for k in raw]
        for k, diagnosis in zip(raw, diagnose_all(moments), strict=True):  # type: ignore[arg-type]
            self.snapshots[k] = (self.snapshots[k][0], diagnosis)

    def clipping_series(self, kept: slice = slice(None)) -> dict | None:
        """The clipping record as four lists (the epochs `kept`), for JSON; None without."""
        if not self.clipping:
            return None
        rows = self.clipping[kept]
        return {key: [row[i] for row in rows] for i, key in enumerate(CLIPPING_KEYS)}


@dataclass
class Result:
    spec: Spec
    network: Network
    dataset: Dataset
    history: History
    final: Evaluation


def evaluate(network: Network, dataset: Dataset, batched: bool | None = None) -> Evaluation:
    """Loss, accuracy and outputs of the network's current weights: one forward pass,
    over the batch or compiled (as `uses_batches` says, unless `batched` is given)."""
    if batched is None:
        batched = uses_batches(network.sizes, dataset.size, dataset.size, 1)
    P, Y = network.flat(), dataset.Y.tolist()
    with np.errstate(all="ignore"):
        if batched:
            total, array = Batched(network).evaluate(np.array(P), dataset.X, dataset.Y)
            outputs = array.tolist()
        else:
            X = [tuple(r) for r in dataset.X.tolist()]
            total, outputs = compile_network(network).evaluate(P, X, Y)
        reg = l2_term(network.l2, P)
    n = dataset.size
    threshold = LOSS_FUNCTIONS[network.loss].threshold
    correct = sum(is_correct(o, y, threshold) for o, y in zip(outputs, Y, strict=True))
    return Evaluation(total / n + reg if n else math.nan, correct / n if n else math.nan, outputs)


# -- which execution -----------------------------------------------------------------------
# A cost model of both, measured by bench/crossover.py (bench/README.md, "Which execution"):
# compiled code costs COMPILED_STEP per example per parameter after a compile of
# COMPILE_COST per parameter; a batched update BATCHED_LAYER per layer (a dozen numpy
# calls whatever their size) plus BATCHED_STEP per example per parameter.
COMPILED_STEP = 7e-8  # seconds
COMPILE_COST = 2.5e-4  # seconds per parameter, once per network shape
BATCHED_LAYER = 2.2e-5  # seconds per layer per update
BATCHED_STEP = 7e-10  # seconds


def uses_batches(sizes: Sequence[int], examples: int, batch: int, epochs: int) -> bool:
    """Whether training runs faster over batches (gradviz.batched) than compiled, by the
    cost model above."""
    parameters = parameter_count(sizes)
    layers = len(sizes) - 1
    work = epochs * examples * parameters
    updates = epochs * -(-examples // max(1, batch))
    compiled = COMPILE_COST * parameters + COMPILED_STEP * work
    batched = BATCHED_LAYER * layers * updates + BATCHED_STEP * work
    return batched < compiled


def l2_term(l2: float, weights: Sequence[float]) -> float:
    """l2·Σp² over every weight and bias (0.0 without an l2 term)."""
    return l2 * sum_of_squares(weights) if l2 else 0.0


OnEpoch = Callable[[int, float, float], None]

Weights = list[float] | np.ndarray  # as the compiled or batched execution holds them


# Raw recorded numbers held before they are reduced together: a few MB, which stay in the
# processor's cache (bench/whole.py: 30 MB at once made the largest training 20% slower).
PENDING_FLOATS = 2**18


def train(
    spec: Spec,
    dataset: Dataset | None = None,
    *,
    on_epoch: OnEpoch | None = None,
    keep_going: bool = False,
    record: bool = True,
) -> Result:
    """Train the spec's network from its seed; the same spec gives the same bits.

    Raises `Diverged` (carrying the training so far) when the loss or a weight stops
    being finite, unless `keep_going`; SpecError before it starts for a data set of the
    wrong width or more work than MAX_WORK."""
    data = dataset if dataset is not None else load_data(spec)
    check_data(spec, data)
    network = Network.from_spec(spec)
    clip = "value" if spec.clip_value is not None else ("norm" if spec.clip_norm else None)
    clip_at = spec.clip_value if spec.clip_value is not None else (spec.clip_norm or 0.0)
    n = data.size
    batch = min(n, {"full": n, "online": 1}.get(spec.update, spec.batch_size or n))
    # the examples' order, shuffled each epoch unless full-batch (which never loads numpy.random)
    rng = (
        np.random.default_rng(np.random.SeedSequence(spec.seed, spawn_key=(1,)))
        if spec.update != "full"
        else None
    )
    last_start = batch * ((n - 1) // batch)  # where an epoch's last batch begins
    history = History()
    rows = stats_rows(network, n)
    execution: Compiled | Batched
    if uses_batches(spec.layers, n, batch, spec.epochs):
        execution = Batched(network, clip)
        P: Weights = np.array(network.flat())
        X: object = data.X
        Y: object = data.Y
    else:
        execution = compile_network(network, clip, online=batch == 1)
        P = network.flat()
        X = [tuple(row) for row in data.X.tolist()]
        Y = data.Y.tolist()

    def run(
        weights: Weights,
        order: list[int],
        lr: float,
        start: int,
        stop: int,
        total: float = -0.0,
        correct: int = 0,
        counts: list | None = None,
    ) -> tuple[float, int]:
        return execution.run(
            weights, X, Y, order, start, stop, batch, lr, clip_at, total, correct, spec.l2, counts
        )

    def measure(
        weights: Weights,
        previous: Weights | None,
        x: np.ndarray = data.X[:rows],
        y: np.ndarray = data.Y[:rows],
    ) -> list[LayerSample]:
        if isinstance(execution, Compiled):
            network.set_flat(weights)
            return layer_samples(network, x, y, previous)
        return execution.samples(np.asarray(weights), x, y, previous)

    def result() -> Result:
        """The training so far, the network set to P and evaluated as it trained."""
        history.reduce()
        network.set_flat(P)
        final = evaluate(network, data, isinstance(execution, Batched))
        return Result(spec, network, data, history, final)

    pending = 0  # the numbers held by raw moments waiting to be reduced

    def snapshot(epoch: int, previous: Weights | None) -> None:
        nonlocal pending
        samples = measure(P, previous)
        history.snapshots.append((epoch, samples))
        pending += sum(s.size for s in samples)
        if pending > PENDING_FLOATS:
            history.reduce()
            pending = 0

    every = list(range(n))  # a full batch's order, every epoch
    with np.errstate(all="ignore"):
        if record:
            snapshot(0, None)
        for epoch in range(1, spec.epochs + 1):
            order = rng.permutation(n).tolist() if spec.update != "full" else every
            start_weights = P.copy()
            lr = spec.rate_at(epoch)
            counts = [0, 0, 0.0, 0.0] if clip is not None else None
            recording = record and (epoch % spec.stats_every == 0 or epoch == spec.epochs)
            # `previous`, when recording: the weights before the epoch's last update (two
            # calls over the same batches as one: the same bits)
            split = last_start if recording else 0
            total, correct = run(P, order, lr, 0, split, counts=counts)
            previous = P.copy() if recording else None
            total, correct = run(P, order, lr, split, n, total, correct, counts)
            loss = total / n
            history.loss.append(loss)
            if counts is not None:
                updates, clipped, before, after = counts
                history.clipping.append(
                    (updates, clipped, before / updates, after / updates)
                    if updates
                    else (0, 0, math.nan, math.nan)
                )
            history.accuracy.append(correct / n)
            if history.stopped is None and not _finite(loss, P):
                fact = _divergence(
                    run, measure, data, start_weights, order, lr, batch, epoch, loss, network.l2
                )
                history.stopped = f"{fact}. Lower {LOWER}."
                if not keep_going:
                    if record:  # the state it stopped in, NaN and all
                        snapshot(epoch, previous)
                    raise Diverged(fact, result())
            if recording:
                snapshot(epoch, previous)
            if on_epoch is not None:
                on_epoch(epoch, loss, correct / n)
        return result()


def _finite(total: float, P: Weights) -> bool:
    """The loss and every weight are finite (the sum first: it may overflow)."""
    if not math.isfinite(total):
        return False
    if isinstance(P, np.ndarray):
        return math.isfinite(P.sum()) or bool(np.isfinite(P).all())
    return math.isfinite(sum(P)) or all(map(math.isfinite, P))


LOWER = "the learning rate or clip gradients (clip_norm = 1)"  # what to do, after "Lower"


class Diverged(TrainingError):
    """Training stopped at a non-finite loss or weight, naming the epoch and the first
    layer; `result` is the training so far (for `--json` and diagnosis)."""

    def __init__(self, fact: str, result: Result) -> None:
        super().__init__(  # what happened on the error's line, what to do on the next
            f"{fact}.",
            hint=f"Lower {LOWER}, or pass {{keep_going=True}} to train on regardless.",
            options=["keep_going=True"],
        )
        self.result = result


def load_data(spec: Spec) -> Dataset:
    """The spec's data set (a CSV path is relative to the spec file's folder)."""
    return load(spec.data, Path(spec.base_dir or ""))


# Work refused before training: epochs × examples × parameters. 1e9 is a few minutes
# (bench/README.md): these are networks to look at, not to train for hours.
MAX_WORK = 1_000_000_000


def check_data(spec: Spec, data: Dataset) -> None:
    """What can only be checked with the data in hand, before training."""
    check_width(spec, data)
    check_work(spec, data.size)


def check_width(spec: Spec, data: Dataset) -> None:
    """The network's input width must be the data's number of features."""
    if data.n_features != spec.layers[0]:
        raise SpecError(
            f"{spec.locate('layers')}: the first size is {spec.layers[0]} but the data set "
            f"{data.name} has {data.n_features} feature(s): they must match"
        )


def check_work(spec: Spec, examples: int) -> None:
    """Training's work (epochs × examples × parameters) must stay within MAX_WORK."""
    work = spec.epochs * examples * spec.n_parameters
    if work > MAX_WORK:
        most = MAX_WORK // (examples * spec.n_parameters)
        raise SpecError(
            f"{spec.locate('epochs')}: {spec.epochs:,} epochs × {examples:,} examples × "
            f"{spec.n_parameters:,} parameters is {fmt(work, 3)} steps of work, more than the "
            f"{fmt(MAX_WORK)} allowed: use at most {most:,} epochs, or less data or a "
            "smaller network"
        )


def _divergence(
    run: Callable[..., tuple[float, int]],
    measure: Callable[..., list[LayerSample]],  # (weights, previous or None, X, Y)
    data: Dataset,
    weights: Weights,
    order: list[int],
    lr: float,
    batch: int,
    epoch: int,
    loss: float,
    l2: float,
) -> str:
    """Replay the epoch batch by batch (`run`, `measure`: `train`'s) from its starting
    `weights` to find the step where NaN/inf appeared, and the first layer holding it."""
    P = weights.copy()
    n = len(order)
    where = "the loss"  # (not found again on replay)
    for step, start in enumerate(range(0, n, batch), 1):
        end = min(n, start + batch)
        before = P.copy()
        total, _ = run(P, order, lr, start, end)
        if _finite(total, P):
            continue
        rows = order[start:end]
        found = diagnose(measure(before, None, data.X[rows], data.Y[rows])).first_nonfinite
        if found is not None:
            index, quantity = found
            where = f"layer L{index} (its {quantity})"
        elif math.isfinite(total):
            where = "the update (learning rate × gradient overflowed)"
        elif not math.isfinite(l2_term(l2, before)):
            where = "the loss (the outputs are finite; its L2 term, l2·Σp², overflowed)"
        else:
            where = "the loss (the outputs are finite, their error overflowed)"
        if n > batch:
            where += f", step {step} of the epoch"
        if found is not None and step == 1:
            # what the statistics recorded at the end of the last epoch saw
            origin = (
                "the initial weights"
                if epoch == 1
                else f"the weights at the end of epoch {epoch - 1}"
            )
            where += f", computed from {origin}"
        break
    return (
        f"training diverged at epoch {epoch}: the loss is {fmt(loss)}; NaN/inf first appeared "
        f"in {where}"
    )
