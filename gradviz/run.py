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

from gradviz.errors import GradvizError, InputError, ModelError, listing, quoted, shortened
from gradviz.files import read_capped, write_atomic
from gradviz.model import FORMAT as MODEL_FORMAT
from gradviz.model import MAX_MODEL_BYTES, RUN_FORMAT, parse_json
from gradviz.numbers import from_json_number, json_safe
from gradviz.spec import MAX_TEXT, read_field, shown, whole_problem
from gradviz.stats import Diagnosis, History
from gradviz.text import printable

FORMAT = RUN_FORMAT
VERSION = 1
# A file we write starts with its format; a peek at the start tells a run from a model.
_PEEK_BYTES = 4096
_FORMAT_KEY = re.compile(rb'"format"\s*:\s*"(gradviz-run|gradviz-model)"')

MAX_LAYERS = 4_096
"""Layers in a run file (a ResNet-152 has 155 with weights; a 70-layer transformer ~500)."""
MAX_DIMENSIONS = 8  # of one layer's weight (a 3-d convolution's has 5)
MAX_STEP = 10**15
"""A step, step count or size in a run file: below 2**53, so every view that turns it
into a float (plots, the page's slider) keeps it exact, and none overflows."""


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
        """What `save_run` writes. Every text (a module's name, its class, the model's)
        is written as the reader accepts it (`saved_text`): control and invisible
        characters as escapes, cut to MAX_TEXT characters, so that a module named
        `add_module("a\\tb", ...)` reads back as the layer `a\\tb`. Two layers whose names
        meet that way are told apart by `#2`."""
        return _saved_texts(self._dict(), saved_names([layer.name for layer in self.layers]))

    def _dict(self) -> dict:
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
    """Write atomically: a failure half-way leaves any previous file as it was. A run the
    reader would refuse (more than MAX_LAYERS layers, a step beyond MAX_STEP) is an
    InputError before anything is written."""
    data = run.to_dict()
    data = json_safe(data)
    try:
        run_from_dict(data)  # type: ignore[arg-type]  (the reader's checks: it reads back)
    except GradvizError as error:
        raise InputError(f"cannot save this run: {error.message}") from None
    text = json.dumps(data, indent=1, allow_nan=False) + "\n"
    write_atomic(Path(path), text)


def saved_text(text: str) -> str:
    """`text` as a run file holds it: printable (`gradviz.text.printable`: a tab as `\\t`,
    a zero-width space as `\\u200b`) and at most MAX_TEXT characters (cut with …)."""
    shown = printable(text)
    return shown if len(shown) <= MAX_TEXT else shown[: MAX_TEXT - 1] + "…"


def saved_names(names: list[str]) -> dict[str, str]:
    """Each layer name as saved (`saved_text`), distinct: a name that meets an earlier
    one once escaped or cut gets `#2`, `#3`, ... (within MAX_TEXT)."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in names:
        shown = saved_text(name)
        k = 1
        while shown in taken:
            k += 1
            suffix = f"#{k}"
            shown = saved_text(name)[: MAX_TEXT - len(suffix)] + suffix
        taken.add(shown)
        out.setdefault(name, shown)
    return out


def _saved_texts(value: object, names: dict[str, str]) -> object:
    """Every string in `value` through `saved_text`; a layer's name (a "name" key) through
    `names`, so the layers and their statistics keep one name."""
    if isinstance(value, dict):
        return {
            k: names.get(v, saved_text(v))
            if k == "name" and isinstance(v, str)
            else _saved_texts(v, names)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_saved_texts(v, names) for v in value]
    if isinstance(value, str):
        return saved_text(value)
    return value


# -- reading ------------------------------------------------------------------------------


def is_run_file(path: Path | str) -> bool:
    """Whether `path` is a recorded run. A file gradviz wrote names its format in its
    first bytes, so a peek tells (a large saved model is not read twice); a file whose
    keys were put in another order (re-saved with sorted keys: `curves` and `history`
    come first) is read whole. Unreadable or not JSON: False (the model reader says why)."""
    try:
        with open(path, "rb") as file:
            head = file.read(_PEEK_BYTES)
    except OSError:
        return False
    if match := _FORMAT_KEY.search(head):
        return match.group(1).decode() == FORMAT
    try:
        raw = _read_json(Path(path))
    except GradvizError:
        return False
    return isinstance(raw, dict) and raw.get("format") == FORMAT


def _read_json(path: Path) -> object:
    """The file's JSON, read as a model file is (`model.parse_json`: its caps on size,
    number length and duplicate keys)."""
    data = read_capped(path, MAX_MODEL_BYTES, ModelError, "run file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelError(f"{path}: not a gradviz run (not UTF-8 text)") from None
    return parse_json(text, str(path), "run")


def load_run(path: Path | str) -> Run:
    """A recorded run, checked; any problem is a ModelError naming the field."""
    path = Path(path)
    raw = _read_json(path)
    if isinstance(raw, dict) and raw.get("format") == MODEL_FORMAT:
        raise ModelError(f"{path}: is a saved model, not a recorded run")
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
    steps, loss, accuracy = _curves(raw.get("curves"))
    return Run(
        layers=layers,
        history=history,
        steps_run=_count(raw.get("steps_run"), "steps_run"),
        every=_count(raw.get("every"), "every"),
        curve_steps=steps,
        loss=loss,
        accuracy=accuracy,
        framework=read_field(raw.get("framework"), "text", "framework"),
        model=read_field(raw.get("model"), "text", "model"),
        world_size=_count(raw.get("world_size"), "world_size"),
        notes=read_field(raw.get("notes", []), "list of text", "notes"),
    )


def _count(value: object, where: str) -> int:
    """A whole number from 0 to MAX_STEP (a step, a count, a size)."""
    if problem := whole_problem(value, 0, None, shown):
        raise InputError(f"{where}: {problem}")
    if value > MAX_STEP:  # type: ignore[operator]
        number = shortened(f"{value:,}", 30)
        raise InputError(f"{where}: {number} is more than the {MAX_STEP:,} allowed")
    return value  # type: ignore[return-value]


def _curves(raw: object) -> tuple[list[int], list[float | None], list[float | None]]:
    """(steps, loss, accuracy) of the logged points; a run that logged none may leave
    `curves` out, and one that logged no accuracy its `accuracy`."""
    if raw is None:
        return [], [], []
    if not isinstance(raw, dict):
        raise InputError("curves: expected an object with step, loss and accuracy")
    for key in ("step", "loss"):
        if key not in raw:
            raise InputError(f"curves.{key}: missing")
    steps = raw["step"]
    if not isinstance(steps, list):
        raise InputError("curves.step: expected a list of whole numbers ≥ 0")
    steps = [_count(v, f"curves.step[{i}]") for i, v in enumerate(steps)]
    loss = _numbers(raw["loss"], len(steps), "curves.loss")
    accuracy = _numbers(raw.get("accuracy", [None] * len(steps)), len(steps), "curves.accuracy")
    return steps, loss, accuracy


def _layers(raw: object) -> list[RunLayer]:
    if not isinstance(raw, list) or not raw:
        raise InputError("layers: expected a list of layers")
    if len(raw) > MAX_LAYERS:
        raise InputError(f"layers: {len(raw):,} layers is more than the {MAX_LAYERS:,} allowed")
    layers = []
    for i, item in enumerate(raw):
        where = f"layers[{i}]"
        if not isinstance(item, dict):
            raise InputError(f"{where}: expected an object")
        shape = item.get("shape")
        if not isinstance(shape, list) or not 1 <= len(shape) <= MAX_DIMENSIONS:
            raise InputError(f"{where}.shape: expected a list of 1 to {MAX_DIMENSIONS} sizes")
        module = item.get("activation_module")
        layers.append(
            RunLayer(
                name=read_field(item.get("name"), "text", f"{where}.name"),
                kind=read_field(item.get("kind"), "text", f"{where}.kind"),
                shape=tuple(_count(n, f"{where}.shape[{k}]") for k, n in enumerate(shape)),
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
        step = _count(item.get("step"), f"{where}.step")
        diagnosis = Diagnosis.from_dict(item, where)
        if [layer.name for layer in diagnosis.layers] != names:
            raise InputError(f"{where}.layers: expected the layers {listing(names)}")
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
