"""Saved models: the spec, the trained weights and the training history, as plain JSON.

Never pickle: a model file is data a person can read and a program can check. Loading
checks everything (format, shapes, that every weight is a number, the types of the
recorded statistics) and says what is wrong in one line naming the field, so a
truncated or hand-edited file is a clear error, not a crash. Weights are finite unless
the file says training diverged (`history.stopped`: a run that trained on regardless):
then NaN and inf are kept and shown, never hidden. A model's CSV data is found relative
to the model file and only inside its folder. Also here: one example's loss graph of a
saved network (drawn by `gradviz.render.network`).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from gradviz.data import Dataset, load
from gradviz.engine import Value, topological_order
from gradviz.errors import GradvizError, InputError, ModelError, quoted, shortened
from gradviz.files import read_capped, write_atomic
from gradviz.nn import (
    Built,
    LayerSample,
    Network,
    example_graph,
    layer_samples,
    stats_rows,
)
from gradviz.numbers import fmt, from_json_number, json_safe
from gradviz.spec import (
    CLIPPING_FIELDS,
    CLIPPING_KEYS,
    HISTORY_FIELDS,
    HISTORY_OPTIONAL,
    LOSS_FUNCTIONS,
    Spec,
    read_fields,
    spec_from_mapping,
)
from gradviz.stats import Diagnosis, History, diagnose, history
from gradviz.train import Result

FORMAT = "gradviz-model"
# The advice older gradviz appended to `history.stopped` (to pass an option that trains on
# regardless), which model files written then still hold: `Model.stopped` leaves it out.
# The advice is now the `Diverged` error's, worded by its caller, and is never stored.
OLD_ADVICE = re.compile(r", or pass \S+ to train on regardless\.$")
VERSION = 1
MAX_MODEL_BYTES = 100_000_000
MAX_HISTORY_POINTS = 10_000  # loss/accuracy points kept in the file (evenly spaced)


@dataclass
class Model:
    """A trained network as saved: what to rebuild it, its weights, and its history.

    `history` holds plain JSON: `loss` and `accuracy` every `every` epochs,
    `epochs_run`, `stopped` (why training stopped early, or None), and `gradients`:
    the per-layer statistics (`gradviz.stats.Diagnosis.to_dict`) at recorded epochs.
    `source` is the file it was read from (None for a model just trained)."""

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
        """The data it was trained on. A model read from a file may name a CSV file only
        inside that file's folder: a model someone sends you must not make gradviz read
        (and quote in its errors) any other file of yours."""
        data = self.spec.data
        if self.source is not None and data.name == "csv" and data.path is not None:
            folder = self.source.parent
            path = folder / data.path
            if not path.resolve().is_relative_to(folder.resolve()):
                raise ModelError(
                    f"{self.source}: its data set {data.path} is outside the model's folder; "
                    "a model file may only name data beside it or below it. Move the model "
                    "next to its data, or give the data yourself with {data}",
                    options=["data"],
                )
            _regular_file(path, self.source)
        return load(data, Path(self.spec.base_dir) if self.spec.base_dir else None)

    def data_file(self) -> Path | None:
        """The CSV file its data set is read from (None for a built-in data set)."""
        data = self.spec.data
        if data.name != "csv" or data.path is None:
            return None
        path = Path(data.path)
        return Path(self.spec.base_dir) / path if self.spec.base_dir else path

    def layer_samples(self, dataset: Dataset | None = None) -> list[LayerSample]:
        """Per-layer state of the saved weights on its data (the first rows of a data set
        too big for `nn.STATS_FLOATS`)."""
        data = dataset if dataset is not None else self.dataset()
        network = self.network()
        rows = stats_rows(network, data.size)
        return layer_samples(network, data.X[:rows], data.Y[:rows])

    @property
    def stopped(self) -> str | None:
        """Why training diverged, or None. A saved model trained on after that (only a
        run that trains on regardless gets saved), so advice to do so, which files written
        before gradviz knew better may hold (`OLD_ADVICE`), is left out."""
        stopped = self.history.get("stopped")
        if stopped is not None and OLD_ADVICE.search(stopped):
            return OLD_ADVICE.sub(".", stopped)
        return stopped

    @property
    def epochs_run(self) -> int:
        return int(self.history.get("epochs_run", len(self.history.get("loss", []))))

    def snapshots(self) -> History:
        """The gradient statistics recorded during training, as (epoch, Diagnosis)."""
        return history([(g.get("epoch") or 0, g) for g in self.history.get("gradients", [])])

    def curves(self) -> tuple[list[float], list[float], int]:
        """(loss, accuracy, every): the saved curves as floats (NaN kept), one point
        every `every` epochs."""

        def floats(key: str) -> list[float]:  # (checked when loaded: never None here)
            return [from_json_number(v) or 0.0 for v in self.history.get(key, [])]

        return floats("loss"), floats("accuracy"), int(self.history.get("every", 1))

    def clipping(self) -> list[tuple[int, int, float, float]]:
        """The saved clipping record (see `train.History.clipping`); [] when the model
        did not clip or was saved before gradviz recorded it."""
        saved = self.history.get("clipping")
        if not saved:
            return []
        columns = [[from_json_number(v) for v in saved[key]] for key in CLIPPING_KEYS]
        return [
            (int(u or 0), int(c or 0), float(b or 0.0), float(a or 0.0))  # (checked on load)
            for u, c, b, a in zip(*columns, strict=True)
        ]


def from_result(result: Result) -> Model:
    """A Model from `gradviz.train.train`'s result, with its gradient history."""
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
            # with clipping (else absent), per kept epoch: updates, clipped, mean ‖g‖
            # before and after
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


# -- writing ------------------------------------------------------------------------------


def to_dict(model: Model, folder: Path | None = None) -> dict:
    """The model as JSON data. Given the `folder` the file goes in, a CSV data set inside
    it is named relative to it (the pair can move together, and `dataset` finds it);
    data elsewhere keeps its absolute path, which loading refuses without --data."""
    spec = model.spec.to_dict()
    if folder is not None and model.spec.data.name == "csv" and model.spec.data.path:
        spec["data"]["csv"] = _csv_reference(Path(spec["data"]["csv"]), folder)
    return {
        "format": FORMAT,
        "version": VERSION,
        "spec": spec,
        "layers": [
            {
                "name": f"L{i}",
                "activation": activation,
                "weights": W.tolist(),
                "biases": b.tolist(),
            }
            for i, ((W, b), activation) in enumerate(
                zip(model.weights, model.spec.activations, strict=True), 1
            )
        ],
        "history": model.history,
        "final": model.final,
    }


def _csv_reference(path: Path, folder: Path) -> str:
    """`path` relative to `folder` (with /) when it is inside it, else absolute."""
    try:
        return path.resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return str(path.absolute())


def to_json(model: Model, folder: Path | None = None) -> str:
    """Valid JSON (NaN and infinities as the strings "nan", "inf", "-inf")."""
    return json.dumps(json_safe(to_dict(model, folder)), indent=1, allow_nan=False) + "\n"


def save(model: Model, path: Path | str) -> None:
    """Write atomically: a failure half-way leaves any previous file as it was."""
    path = Path(path)
    write_atomic(path, to_json(model, path.parent))


# -- reading ------------------------------------------------------------------------------


def load_model(path: Path | str) -> Model:
    """A saved model, checked; any problem is a ModelError naming the field."""
    path = Path(path)
    data = read_capped(path, MAX_MODEL_BYTES, ModelError, "model file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelError(f"{path}: not a gradviz model (not UTF-8 text)") from None
    model = parse_model(text, str(path), base_dir=str(path.parent))
    model.source = path
    return model


def _regular_file(path: Path, model: Path) -> None:
    """A model's data path must be a plain file: a named pipe or a device named in a
    model someone sent would make gradviz wait forever, or read without end."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # missing or unreadable: read_csv says so
    if not stat.S_ISREG(mode):
        what = "a folder" if stat.S_ISDIR(mode) else "not a regular file (a pipe or a device)"
        raise ModelError(f"{model}: its data set {quoted(str(path))} is {what}")


def model_inputs(path: Path) -> list[Path]:
    """A saved model's file and the CSV file it names: the inputs that no output of a
    command may overwrite (`draw --model m.json -o points.csv` would destroy the data)."""
    try:
        data = load_model(path).data_file()
    except GradvizError:  # its error is raised where the command reads it
        return [path]
    return [path] if data is None else [path, data]


def parse_json(text: str, name: str, what: str) -> object:
    """JSON as gradviz reads every file it saved (a model, a recorded run: `what` names
    it in messages): numbers of at most MAX_NUMBER_LENGTH characters, no key twice in one
    object, NaN/Infinity kept as strings (refused where they matter); any problem is a
    ModelError naming the file (`name`) and where."""
    try:
        return json.loads(
            text,
            parse_constant=lambda c: c,
            parse_int=lambda t: int(_short_number(t, name)),
            parse_float=lambda t: float(_short_number(t, name)),
            object_pairs_hook=lambda pairs: _unique_keys(pairs, name),
        )
    except json.JSONDecodeError as error:
        problem = "truncated" if error.pos >= len(text.rstrip()) else "not valid JSON"
        raise ModelError(
            f"{name}: {problem}: {error.msg} (line {error.lineno} column {error.colno})"
        ) from None
    except RecursionError:
        raise ModelError(f"{name}: nested too deeply to be a {what}") from None


RUN_FORMAT = "gradviz-run"  # (gradviz.run's FORMAT: a model file must not be mistaken)


def parse_model(text: str, name: str = "model", base_dir: str | None = None) -> Model:
    raw = parse_json(text, name, "model")
    if isinstance(raw, dict) and raw.get("format") == RUN_FORMAT:
        raise ModelError(
            f"{name}: is a recorded run (gradviz.torch.watch): it holds statistics, not a "
            "network to draw, trace or check",
            hint="gradviz inspect and gradviz grads read a recorded run.",
        )
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise ModelError(f'{name}: not a gradviz model (no "format": "{FORMAT}")')
    try:
        return _model_from(raw, base_dir)
    except GradvizError as error:  # it names the field; this adds the file
        raise ModelError(f"{name}: {error.message}") from None


def _model_from(raw: dict, base_dir: str | None) -> Model:
    if raw.get("version") != VERSION:
        raise InputError(
            f"version: {quoted(raw.get('version'))} is not a version this gradviz reads ({VERSION})"
        )
    for key in ("spec", "layers", "history"):
        if key not in raw:
            raise InputError(f"{key}: missing")
    if not isinstance(raw["spec"], dict):
        raise InputError("spec: expected an object")
    spec = spec_from_mapping(raw["spec"], locate=lambda key: f"spec.{key}", base_dir=base_dir)
    history = raw["history"]
    _check_history(history)
    # A model whose training diverged (and says so) keeps its NaN/inf weights.
    diverged = history.get("stopped") is not None
    layers = raw["layers"]
    if not isinstance(layers, list) or len(layers) != len(spec.layers) - 1:
        raise InputError(f"layers: expected {len(spec.layers) - 1} layers as the spec says")
    weights = []
    for i, (layer, n_in, n_out) in enumerate(
        zip(layers, spec.layers, spec.layers[1:], strict=False), 1
    ):
        where = f"layers[{i - 1}] (L{i})"
        if not isinstance(layer, dict):
            raise InputError(f"{where}: expected an object with weights and biases")
        if layer.get("activation", spec.activations[i - 1]) != spec.activations[i - 1]:
            raise InputError(f"{where}.activation: does not match the spec")
        W = _matrix(layer.get("weights"), n_out, n_in, f"{where}.weights", f"L{i}", diverged)
        b = _vector(layer.get("biases"), n_out, f"{where}.biases", f"L{i}", diverged)
        weights.append((W, b))
    final = raw.get("final", {})
    if not isinstance(final, dict) or not all(
        from_json_number(final.get(key, 0.0)) is not None for key in ("loss", "accuracy")
    ):
        raise InputError("final: expected an object with the numbers loss and accuracy")
    return Model(spec, weights, history, final)


def _check_history(history: dict) -> None:
    """Every field of a saved history has the kind its readers expect (the tables in
    `gradviz.spec`); an InputError names the first that does not
    (`history.gradients[0].layers[0].rms`)."""
    read_fields(history, HISTORY_FIELDS, "history", "training history", HISTORY_OPTIONAL)
    clipping = history.get("clipping")  # absent from files older than the record
    if clipping is not None:
        what = ", ".join(CLIPPING_FIELDS)
        series = read_fields(clipping, CLIPPING_FIELDS, "history.clipping", what)
        if len({len(values) for values in series.values()}) != 1:
            raise InputError("history.clipping: its lists differ in length")
    gradients = history.get("gradients", [])
    if not isinstance(gradients, list):
        raise InputError("history.gradients: expected a list of objects")
    for i, entry in enumerate(gradients):
        Diagnosis.from_dict(entry, f"history.gradients[{i}]")


MAX_NUMBER_LENGTH = 100
"""Characters in one number of a model or run file (a float64 needs at most 24). Longer ones are
refused: Python would spend quadratic time on a huge integer, or fail past 4300 digits."""


def _short_number(text: str, name: str) -> str:
    if len(text) > MAX_NUMBER_LENGTH:
        raise ModelError(
            f"{name}: a number of {len(text):,} characters ({text[:20]}…) is longer than "
            f"the {MAX_NUMBER_LENGTH} allowed"
        )
    return text


def _unique_keys(pairs: list[tuple[str, object]], name: str) -> dict:
    """An object whose keys are all different: JSON readers disagree on which of two
    equal keys counts (Python's keeps the last), so a file with one is refused."""
    result: dict = {}
    for key, value in pairs:
        if key in result:
            raise ModelError(f"{name}: the key {json.dumps(key)} appears twice in one object")
        result[key] = value
    return result


def _vector(
    value: object, n: int, where: str, layer: str, diverged: bool, row: int | None = None
) -> np.ndarray:
    """n numbers: finite, or also "nan"/"inf"/"-inf" when the model says it diverged."""
    if not isinstance(value, list) or len(value) != n:
        raise InputError(f"{where}: expected {n} numbers")
    numbers = []
    for k, v in enumerate(value):
        x = from_json_number(v)
        if x is not None and (math.isfinite(x) or diverged):
            numbers.append(x)
            continue
        param = f"{layer}.N{row + 1}.w{k}" if row is not None else f"{layer}.N{k + 1}.b"
        nonfinite = x is not None or v in ("NaN", "Infinity", "-Infinity")
        problem = "is not finite (the model diverged)" if nonfinite else "is not a number"
        raise InputError(f"{where}[{k}]: {param} = {shortened(json.dumps(v))} {problem}")
    return np.array(numbers, dtype=np.float64)


def _matrix(
    value: object, rows: int, columns: int, where: str, layer: str, diverged: bool
) -> np.ndarray:
    if not isinstance(value, list) or len(value) != rows:
        raise InputError(f"{where}: expected {rows} rows of {columns} weights (n_out × n_in)")
    return np.array(
        [
            _vector(row, columns, f"{where}[{j}]", layer, diverged, row=j)
            for j, row in enumerate(value)
        ],
        dtype=np.float64,
    ).reshape(rows, columns)


# -- one example's graph ------------------------------------------------------------------


@dataclass
class LossGraph:
    """One example through a saved network, forward and backward.

    `clusters` maps every node to its layer (`L1`, …) or to `loss`; inputs are in no
    cluster. `neurons` maps a layer's nodes to their neuron (`L1.N2`). `model` is the
    saved model it came from (None for a bare Network): its data set says what one
    example cannot, such as which units are dead."""

    network: Network
    built: Built
    x: tuple[float, ...]
    y: float
    clusters: dict[Value, str]
    neurons: dict[Value, str]
    model: Model | None = None

    @property
    def loss(self) -> Value:
        return self.built.loss

    @property
    def size(self) -> int:
        return len(topological_order(self.built.loss))

    @cached_property
    def example(self) -> Diagnosis:
        """This example's per-layer statistics (what the layer view's nodes show)."""
        x, y = np.array([self.x]), np.array([self.y])
        return diagnose(layer_samples(self.network, x, y))

    @property
    def loss_formula(self) -> str:
        """The loss in terms of the output and the target (`spec.Loss.formula`)."""
        return LOSS_FUNCTIONS[self.network.loss].formula


@dataclass(frozen=True, slots=True)
class DataSetStatus:
    """The statuses `gradviz grads` gives a model, on its whole data set (`diagnosis`),
    and that data set in words; or, with no data set to use, `diagnosis` None and
    `data` saying why."""

    diagnosis: Diagnosis | None
    data: str
    size: int = 0


def data_set_status(graph: LossGraph) -> DataSetStatus:
    """One example cannot tell a dead unit (inactive on every example) or a stalled
    network (outputs that do not vary) from a unit or an output that happens to be 0
    here: statuses come from the model's whole data set, as in `gradviz grads`."""
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
    """One example of a data set: inputs, target, and the data set's name."""

    x: tuple[float, ...]
    y: float
    data: str


def first_example(model: Model, target: float | None = None) -> Example:
    """The example `draw`, `trace` and `check` take when no input is given: the first of
    the model's own data set (with `target` in place of its label, when given)."""
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
    """The graph of one example's loss with data and grads: named parameters (`L1.N2.w0`),
    inputs `x0`…, target `y`, and each node's layer for drawing clusters. Without `y`, the
    target is looked up in the model's data set."""
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
    clusters: dict[Value, str] = {}
    neurons: dict[Value, str] = {}
    inputs = set(built.inputs)
    for layer, acts in zip(network.layers, built.act, strict=True):
        for neuron, a in zip(layer.neurons, acts, strict=True):
            for node in topological_order(a):
                if node not in clusters and node not in inputs:
                    clusters[node] = layer.name
                    neurons[node] = neuron.name
    for node in topological_order(built.loss):
        if node not in clusters and node not in inputs:
            clusters[node] = "loss"
    source = model if isinstance(model, Model) else None
    return LossGraph(
        network, built, tuple(float(v) for v in x), float(y), clusters, neurons, source
    )
