"""Recorded runs: the per-layer gradient statistics of a training loop gradviz watched from
outside (a PyTorch model, `gradviz.torch.watch`), saved as plain JSON.

A run has no spec, no weights and no data set: only what the recorder measured. Its
layers (named as the framework names them, `net.0`), its statistics at recorded steps
(`gradviz.stats.Diagnosis`, the same per-layer rows `gradviz grads` shows) and the loss
and accuracy curves it was given. `gradviz inspect` and `gradviz grads` read it as they
read a saved model, leaving out what needs a network or data (said in a line).

Reading checks everything, as a saved model's reading does: the format, each layer, each
recorded Diagnosis (field by field), the curves; a problem is a ModelError naming the field.
This module never imports the framework: reading a run needs only gradviz.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from gradviz.errors import GradvizError, InputError, ModelError, quoted
from gradviz.files import read_capped, write_atomic
from gradviz.model import MAX_MODEL_BYTES
from gradviz.numbers import from_json_number, json_safe
from gradviz.spec import read_field
from gradviz.stats import Diagnosis, History

FORMAT = "gradviz-run"
VERSION = 1
# A file we write starts with its format; a peek at the start tells a run from a model.
_PEEK_BYTES = 4096
_FORMAT_KEY = re.compile(rb'"format"\s*:\s*"gradviz-run"')


@dataclass(frozen=True)
class RunLayer:
    """One recorded layer: its module's name and class, its weight's shape, and the
    activation its statistics were read after (`activation_module`: the module's class,
    or None when the layer's own output was read)."""

    name: str
    kind: str
    shape: tuple[int, ...]
    activation: str
    activation_module: str | None = None
    params: tuple[str, ...] = ()  # the parameters in the row, by qualified name

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "kind": self.kind,
            "shape": list(self.shape),
            "activation": self.activation,
            "activation_module": self.activation_module,
            "params": list(self.params),
        }


@dataclass
class Run:
    """A recorded training run: its layers, the statistics at recorded steps (`history`,
    as (step, Diagnosis)), the logged curves (one entry per `log` call: its step, the
    loss, the accuracy or None), and where it came from (`framework`, `model`)."""

    layers: list[RunLayer]
    history: History
    steps_run: int
    every: int
    curve_steps: list[int] = field(default_factory=list)
    loss: list[float | None] = field(default_factory=list)
    accuracy: list[float | None] = field(default_factory=list)
    framework: str = "pytorch"
    model: str = ""
    world_size: int = 1
    notes: list[str] = field(default_factory=list)  # what the recorder read and did not
    source: Path | None = None

    def diagnosis(self) -> Diagnosis:
        """The latest recorded statistics."""
        return self.history[-1][1]

    @property
    def last_step(self) -> int:
        return self.history[-1][0]

    def curves(self) -> tuple[list[float], list[float], int]:
        """(loss, accuracy, every) as `Model.curves` gives them, for the same plots and
        sparklines: the logged points, `every` the steps between two of them (1 when they
        are not evenly spaced); NaN where a point was not logged."""
        steps = self.curve_steps
        gaps = {b - a for a, b in itertools.pairwise(steps)}
        every = gaps.pop() if len(gaps) == 1 and min(steps) >= 0 else 1
        loss = [float("nan") if v is None else v for v in self.loss]
        accuracy = [float("nan") if v is None else v for v in self.accuracy]
        return loss, accuracy, max(1, every)

    def description(self) -> str:
        """When and where it was recorded, in words, for titles."""
        ranks = f", {self.world_size} processes" if self.world_size > 1 else ""
        return (
            f"recorded in {self.framework} ({self.model or 'a model'}{ranks}) at step "
            f"{self.last_step} of {self.steps_run}"
        )

    def to_dict(self) -> dict:
        return {
            "format": FORMAT,
            "version": VERSION,
            "framework": self.framework,
            "model": self.model,
            "world_size": self.world_size,
            "steps_run": self.steps_run,
            "every": self.every,
            "layers": [layer.to_dict() for layer in self.layers],
            "curves": {"step": self.curve_steps, "loss": self.loss, "accuracy": self.accuracy},
            "history": [{"step": step, **d.to_dict()} for step, d in self.history],
            "notes": self.notes,
        }


def save_run(run: Run, path: Path | str) -> None:
    """Write atomically: a failure half-way leaves any previous file as it was."""
    text = json.dumps(json_safe(run.to_dict()), indent=1, allow_nan=False) + "\n"
    write_atomic(Path(path), text)


# -- reading ------------------------------------------------------------------------------


def is_run_file(path: Path | str) -> bool:
    """Whether `path` starts as a recorded run does (a peek at its first bytes, so a large
    saved model is not read twice). Unreadable: False (the model reader says why)."""
    try:
        with open(path, "rb") as file:
            head = file.read(_PEEK_BYTES)
    except OSError:
        return False
    return bool(_FORMAT_KEY.search(head))


def load_run(path: Path | str) -> Run:
    """A recorded run, checked; any problem is a ModelError naming the field."""
    path = Path(path)
    data = read_capped(path, MAX_MODEL_BYTES, ModelError, "run file")
    try:
        raw = json.loads(data.decode("utf-8"), parse_constant=lambda c: c)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelError(f"{path}: not a gradviz run (not valid JSON: {error})") from None
    except RecursionError:
        raise ModelError(f"{path}: nested too deeply to be a run") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise ModelError(f'{path}: not a gradviz run (no "format": "{FORMAT}")')
    try:
        run = run_from_dict(raw)
    except GradvizError as error:
        raise ModelError(f"{path}: {error.message}") from None
    run.source = path
    return run


def run_from_dict(raw: dict) -> Run:
    """The inverse of `Run.to_dict`, checked field by field (InputError naming the path)."""
    if raw.get("version") != VERSION:
        raise InputError(
            f"version: {quoted(raw.get('version'))} is not a version this gradviz reads ({VERSION})"
        )
    layers = _layers(raw.get("layers"))
    history = _history(raw.get("history"), layers)
    curves = raw.get("curves", {})
    if not isinstance(curves, dict):
        raise InputError("curves: expected an object with step, loss and accuracy")
    steps = read_field(curves.get("step", []), "list of count", "curves.step")
    loss = _numbers(curves.get("loss"), len(steps), "curves.loss")
    accuracy = _numbers(curves.get("accuracy"), len(steps), "curves.accuracy")
    return Run(
        layers=layers,
        history=history,
        steps_run=read_field(raw.get("steps_run"), "count", "steps_run"),
        every=read_field(raw.get("every"), "count", "every"),
        curve_steps=steps,
        loss=loss,
        accuracy=accuracy,
        framework=read_field(raw.get("framework"), "text", "framework"),
        model=read_field(raw.get("model"), "text", "model"),
        world_size=read_field(raw.get("world_size"), "count", "world_size"),
        notes=read_field(raw.get("notes", []), "list of text", "notes"),
    )


def _layers(raw: object) -> list[RunLayer]:
    if not isinstance(raw, list) or not raw:
        raise InputError("layers: expected a list of layers")
    layers = []
    for i, item in enumerate(raw):
        where = f"layers[{i}]"
        if not isinstance(item, dict):
            raise InputError(f"{where}: expected an object")
        shape = item.get("shape")
        if not isinstance(shape, list) or not shape:
            raise InputError(f"{where}.shape: expected a list of sizes")
        module = item.get("activation_module")
        layers.append(
            RunLayer(
                name=read_field(item.get("name"), "text", f"{where}.name"),
                kind=read_field(item.get("kind"), "text", f"{where}.kind"),
                shape=tuple(read_field(n, "count", f"{where}.shape") for n in shape),
                activation=read_field(item.get("activation"), "text", f"{where}.activation"),
                activation_module=None
                if module is None
                else read_field(module, "text", f"{where}.activation_module"),
                params=tuple(read_field(item.get("params", []), "list of text", f"{where}.params")),
            )
        )
    return layers


def _history(raw: object, layers: list[RunLayer]) -> History:
    if not isinstance(raw, list) or not raw:
        raise InputError("history: expected a list of recorded steps")
    names = [layer.name for layer in layers]
    out: History = []
    for i, item in enumerate(raw):
        where = f"history[{i}]"
        if not isinstance(item, dict):
            raise InputError(f"{where}: expected an object")
        step = read_field(item.get("step"), "count", f"{where}.step")
        diagnosis = Diagnosis.from_dict(item, where)
        if [layer.name for layer in diagnosis.layers] != names:
            raise InputError(f"{where}.layers: expected the layers {', '.join(names)}")
        diagnosis.epoch = step
        out.append((step, diagnosis))
    return out


def _numbers(raw: object, n: int, where: str) -> list[float | None]:
    if not isinstance(raw, list) or len(raw) != n:
        raise InputError(f"{where}: expected a list of {n} numbers (one per logged step)")
    values: list[float | None] = []
    for i, v in enumerate(raw):
        number = None if v is None else from_json_number(v)
        if v is not None and number is None:
            raise InputError(f"{where}[{i}]: {quoted(v)} is not a number")
        values.append(number)
    return values
