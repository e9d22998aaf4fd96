"""A saved model (spec, trained weights, training history) and one example's loss graph
through it. Its file format is gradviz.schema's; its CSV data is read only from inside
the model file's folder.
"""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from gradviz.data import Dataset
from gradviz.engine import Value, topological_order
from gradviz.errors import GradvizError, InputError, ModelError, quoted
from gradviz.files import write_atomic
from gradviz.nn import (
    LOSS_FUNCTIONS,
    Built,
    LayerSample,
    Network,
    example_graph,
    layer_samples,
    stats_rows,
)
from gradviz.numbers import fmt, from_json_number
from gradviz.schema import (
    CLIPPING_KEYS,
    MODEL_FORMAT,
    RUN_FORMAT,
    model_json,
    model_parts,
    parse_json,
    read_diagnosis,
    read_saved,
)
from gradviz.spec import Spec
from gradviz.stats import Diagnosis, History, diagnose, history
from gradviz.train import Result, load_data

# The advice older gradviz appended to `history.stopped`, which `Model.stopped` leaves out.
OLD_ADVICE = re.compile(r", or pass \S+ to train on regardless\.$")
MAX_HISTORY_POINTS = 10_000  # loss/accuracy points kept in the file (evenly spaced)


@dataclass
class Model:
    """A trained network as saved: its spec, weights, and history (plain JSON: `loss` and
    `accuracy` every `every` epochs, `epochs_run`, `stopped`, and `gradients`, each a
    `Diagnosis.to_dict`); `source` is the file it was read from (None: just trained)."""

    spec: Spec
    weights: list[tuple[np.ndarray, np.ndarray]]
    history: dict = field(default_factory=dict)
    final: dict = field(default_factory=dict)
    source: Path | None = None

    def network(self) -> Network:
        network = Network(self.spec.layers, self.spec.activations, self.spec.loss, self.spec.l2)
        network.set_weights(self.weights)
        return network

    def dataset(self) -> Dataset:
        """The data it was trained on: a model file may name a CSV file only inside its own
        folder (a model someone sends you must not make gradviz read any other file)."""
        data, path = self.spec.data, self.spec.data_path  # (load_model: from the model's folder)
        if self.source is not None and path is not None:
            folder = self.source.parent
            if not path.resolve().is_relative_to(folder.resolve()):
                raise ModelError(
                    f"{self.source}: its data set {data.path} is outside the model's folder; "
                    "a model file may only name data beside it or below it. Move the model "
                    "next to its data, or give the data yourself with {data}",
                    options=["data"],
                )
            _regular_file(path, self.source)
        return load_data(self.spec)

    def layer_samples(self, dataset: Dataset | None = None) -> list[LayerSample]:
        """Per-layer state of the saved weights on its data (`nn.stats_rows` of it)."""
        data = dataset if dataset is not None else self.dataset()
        network = self.network()
        rows = stats_rows(network, data.size)
        return layer_samples(network, data.X[:rows], data.Y[:rows])

    @property
    def stopped(self) -> str | None:
        """Why training diverged, or None; never advice to train on (it did: `OLD_ADVICE`)."""
        stopped = self.history.get("stopped")
        return None if stopped is None else OLD_ADVICE.sub(".", stopped)

    @property
    def epochs_run(self) -> int:
        return int(self.history.get("epochs_run", len(self.history.get("loss", []))))

    def snapshots(self) -> History:
        saved = self.history.get("gradients", [])
        return history([(g.get("epoch") or 0, read_diagnosis(g)) for g in saved])

    def curves(self) -> tuple[list[float], list[float], int]:
        """(loss, accuracy, every): the saved curves as floats, a point every `every` epochs."""

        def floats(key: str) -> list[float]:  # (checked when loaded: never None here)
            return [from_json_number(v) or 0.0 for v in self.history.get(key, [])]

        return floats("loss"), floats("accuracy"), int(self.history.get("every", 1))

    def clipping(self) -> list[tuple[int, int, float, float]]:
        """The saved `train.History.clipping` ([] without clipping, or from older files)."""
        saved = self.history.get("clipping")
        if not saved:
            return []
        columns = [[from_json_number(v) for v in saved[key]] for key in CLIPPING_KEYS]
        return [
            (int(u or 0), int(c or 0), float(b or 0.0), float(a or 0.0))  # (checked on load)
            for u, c, b, a in zip(*columns, strict=True)
        ]


def from_result(result: Result) -> Model:
    history = result.history
    network = result.network
    every = max(1, math.ceil(history.epochs_run / MAX_HISTORY_POINTS))
    kept = slice(every - 1, None, every)
    return Model(
        spec=result.spec,
        weights=network.weights(),
        history={
            "epochs_run": history.epochs_run,
            "every": every,
            "loss": history.loss[kept],
            "accuracy": history.accuracy[kept],
            "stopped": history.stopped,
            **({"clipping": clipping} if (clipping := history.clipping_series(kept)) else {}),
            "gradients": [
                (s if isinstance(s, Diagnosis) else diagnose(s, epoch=e)).to_dict()
                for e, s in history.snapshots
            ],
        },
        final={
            "loss": result.final.loss,
            "accuracy": result.final.accuracy,
        },
    )


# -- reading ------------------------------------------------------------------------------


def load_model(path: Path | str) -> Model:
    path = Path(path)
    model = parse_model(read_saved(path, "model"), str(path), base_dir=str(path.parent))
    model.source = path
    return model


def _regular_file(path: Path, model: Path) -> None:
    """A model's data must be a plain file: a pipe or a device would make gradviz wait."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # missing or unreadable: read_csv says so
    if not stat.S_ISREG(mode):
        what = "a folder" if stat.S_ISDIR(mode) else "not a regular file (a pipe or a device)"
        raise ModelError(f"{model}: its data set {quoted(str(path))} is {what}")


def model_inputs(path: Path) -> list[Path]:
    """A saved model's file and its CSV file: inputs no command's output may overwrite."""
    try:
        spec = load_model(path).spec
    except GradvizError:  # its error is raised where the command reads it
        return [path]
    return [path] if spec.data_path is None else [path, spec.data_path]


def save(model: Model, path: Path | str) -> None:
    """Write atomically: a failure half-way leaves any previous file as it was."""
    write_atomic(Path(path), model_json(model, Path(path).parent))


def parse_model(text: str, name: str = "model", base_dir: str | None = None) -> Model:
    raw = parse_json(text, name, "model")
    if isinstance(raw, dict) and raw.get("format") == RUN_FORMAT:
        raise ModelError(
            f"{name}: is a recorded run (gradviz.torch.watch): it holds statistics, not a "
            "network to draw, trace or check",
            hint="gradviz inspect and gradviz grads read a recorded run.",
        )
    if not isinstance(raw, dict) or raw.get("format") != MODEL_FORMAT:
        raise ModelError(f'{name}: not a gradviz model (no "format": "{MODEL_FORMAT}")')
    try:
        return Model(*model_parts(raw, base_dir))
    except GradvizError as error:  # it names the field; this adds the file
        raise ModelError(f"{name}: {error.message}") from None


# -- one example's graph ------------------------------------------------------------------


@dataclass
class LossGraph:
    """One example through a saved network, forward and backward. `clusters` maps every
    node but the inputs to its layer (`L1`, …) or `loss`; `model` (None for a bare
    Network) has the whole data set."""

    network: Network
    built: Built
    x: tuple[float, ...]
    y: float
    clusters: dict[Value, str]
    model: Model | None = None

    @property
    def loss(self) -> Value:
        return self.built.loss

    @property
    def size(self) -> int:
        return len(topological_order(self.built.loss))

    @cached_property
    def example(self) -> Diagnosis:
        x, y = np.array([self.x]), np.array([self.y])
        return diagnose(layer_samples(self.network, x, y))

    @property
    def loss_formula(self) -> str:
        return LOSS_FUNCTIONS[self.network.loss].formula


@dataclass(frozen=True, slots=True)
class DataSetStatus:
    """The statuses `gradviz grads` gives a model on its whole data set, and that data
    set in words (without one: `diagnosis` None and `data` saying why)."""

    diagnosis: Diagnosis | None
    data: str
    size: int = 0


def data_set_status(graph: LossGraph) -> DataSetStatus:
    """Statuses from the model's whole data set: one example cannot tell a dead unit or a
    stalled network from a unit or an output that happens to be 0 here."""
    model = graph.model
    if model is None:
        return DataSetStatus(None, "a network without a data set")
    try:
        data = model.dataset()
        samples = model.layer_samples(data)
    except GradvizError as error:  # its CSV data is missing or outside its folder
        return DataSetStatus(None, f"its data set cannot be read ({error.message})")
    return DataSetStatus(diagnose(samples), f"{data.size} examples of {data.name}", data.size)


def parse_input(text: str, width: int) -> tuple[float, ...]:
    """`0,1` → (0.0, 1.0); the count must match the network's inputs."""
    parts = [p.strip() for p in text.split(",")]
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        raise InputError(
            f"{{input}} {quoted(text)}: expected {width} numbers separated by commas",
            options=["input"],
        ) from None
    if len(values) != width or not all(math.isfinite(v) for v in values):
        raise InputError(
            f"{{input}} {quoted(text)}: expected {width} finite numbers separated by commas",
            options=["input"],
        )
    return values


@dataclass(frozen=True)
class Example:
    x: tuple[float, ...]
    y: float
    data: str


def first_example(model: Model, target: float | None = None) -> Example:
    """The example `draw`, `trace` and `check` take without an input: its data's first."""
    data = model.dataset()
    x = tuple(float(v) for v in data.X[0])
    return Example(x, float(data.Y[0]) if target is None else target, data.name)


def target_for(model: Model, x: Sequence[float]) -> float:
    """The label of `x` in the model's data set (for an input the user typed)."""
    data = model.dataset()
    row = np.asarray(x, dtype=np.float64)
    matches = np.nonzero(np.all(np.equal(data.X, row), axis=1))[0]
    if matches.size == 0:
        shown = ", ".join(fmt(v) for v in x)
        raise InputError(
            f"input ({shown}) is not in the data set {data.name}: give its target ({{target}})",
            options=["target"],
        )
    return float(data.Y[matches[0]])


def network_loss_graph(
    model: Model | Network, x: Sequence[float], y: float | None = None
) -> LossGraph:
    """One example's loss graph with data, grads and each node's layer (for clusters);
    without `y`, the target is looked up in the model's data set."""
    network = model.network() if isinstance(model, Model) else model.copy()
    if len(x) != network.sizes[0]:
        raise InputError(f"the network takes {network.sizes[0]} inputs, got {len(x)}")
    if y is None:
        if not isinstance(model, Model):
            raise InputError("give the target y for this input")
        y = target_for(model, x)
    elif not math.isfinite(y):
        raise InputError(f"{{target}} {fmt(y)}: expected a finite number", options=["target"])
    with np.errstate(all="ignore"):
        built = example_graph(network, x, y)
    inputs = set(built.inputs)
    clusters: dict[Value, str] = {}  # each node in the first layer (or the loss) to reach it
    tops = [(layer.name, acts) for layer, acts in zip(network.layers, built.act, strict=True)]
    for name, outputs in [*tops, ("loss", [built.loss])]:
        for node in (node for top in outputs for node in topological_order(top)):
            if node not in inputs:
                clusters.setdefault(node, name)
    source = model if isinstance(model, Model) else None
    return LossGraph(network, built, tuple(float(v) for v in x), float(y), clusters, source)
