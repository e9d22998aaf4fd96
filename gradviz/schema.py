"""The files gradviz saves and reads back: saved models and recorded runs, as plain JSON.

Never pickle: a file is data a person can read and a program can check. For both kinds:
numbers of at most MAX_NUMBER_LENGTH characters, no key twice in one object, NaN and
infinities as "nan", "inf", "-inf" (in a model's weights only when training diverged),
every statistic checked against a table of kinds; a mistake is one line naming the
field's path. A recorded run (gradviz.torch.watch) holds only layers, statistics and curves.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from gradviz.errors import GradvizError, InputError, ModelError, listing, quoted, shortened
from gradviz.files import read_capped, write_atomic
from gradviz.numbers import from_json_number, json_safe
from gradviz.ops import ACTIVATIONS
from gradviz.records import LAYER_OPTIONAL, Diagnosis, History, LayerStats, Run, RunLayer
from gradviz.spec import Spec, spec_from_mapping, whole_problem
from gradviz.stats import STATUSES
from gradviz.text import printable

if TYPE_CHECKING:
    from gradviz.model import Model

# -- tables of fields ------------------------------------------------------------------
# A kind: "count" (a whole number ≥ 0), "step" (≥ 1), "size" (a count ≤ MAX_STEP),
# "number" (≥ 0), "signed", "flag", "text"; "?" after it: or null; "list of" before it.

MAX_TEXT = 1_000  # characters of a name, status or reason read from a file

_KINDS = {"int": "count", "float": "number", "bool": "flag", "str": "text"}


def _fields_of(record: type, signed: tuple[str, ...] = (), skip: tuple[str, ...] = ()) -> dict:
    """Each field of a `gradviz.records` class, in order, of the kind its type says
    (`float | None`: "number?"); floats are ≥ 0 unless `signed`."""
    table = {}
    for f in fields(record):
        if f.name not in skip:
            base = str(f.type).removesuffix(" | None")
            kind = "signed" if f.name in signed else _KINDS[base]
            table[f.name] = kind + ("?" if base != f.type else "")
    return table


LAYER_FIELDS = _fields_of(LayerStats, signed=("act_mean",))  # only the mean has a sign
DIAGNOSIS_FIELDS = _fields_of(Diagnosis, skip=("layers", "first_nonfinite"))
DIAGNOSIS_OPTIONAL = ("unit", "judged_by", "optimizer", "clip_scale")


HISTORY_FIELDS: dict[str, str] = {
    "loss": "list of signed",  # every `every` epochs
    "accuracy": "list of signed",
    "epochs_run": "count",
    "every": "step",
    "stopped": "text?",  # why training diverged
}
"""A saved model's `history` (beside its `gradients`, each read by `read_diagnosis`)."""
HISTORY_OPTIONAL = ("epochs_run", "every", "stopped")  # absent from older files

CLIPPING_FIELDS: dict[str, str] = {
    "updates": "list of count",
    "clipped": "list of count",
    "norm_before": "list of signed",
    "norm_after": "list of signed",
}
"""`history.clipping` (`gradviz.train.History.clipping_series`)."""
CLIPPING_KEYS = tuple(CLIPPING_FIELDS)

_PLURALS = {
    "count": "whole numbers ≥ 0",
    "size": "whole numbers ≥ 0",
    "signed": "numbers",
    "number": "numbers ≥ 0",
    "text": "short lines of text",
}


def shown(value: object) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:30] + "…"


def read_field(value: object, kind: str, where: str) -> object:
    """`value` read back from JSON as a field of `kind`, or an InputError naming `where`."""
    base = kind.removesuffix("?")
    if value is None and base != kind:
        return None
    if base.startswith("list of "):
        item = base.removeprefix("list of ")
        if not isinstance(value, list):
            raise InputError(f"{where}: expected a list of {_PLURALS[item]}")
        return [read_field(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
    if base in ("number", "signed"):
        number = from_json_number(value)
        if number is None or (number < 0 and base == "number"):
            bound = " ≥ 0" if base == "number" else ""
            raise InputError(f"{where}: expected a number{bound}, got {shown(value)}")
        return number
    if base in ("count", "step", "size"):
        if problem := whole_problem(value, int(base == "step"), None, shown):
            raise InputError(f"{where}: {problem}")
        if base == "size" and value > MAX_STEP:  # type: ignore[operator]
            number = shortened(f"{value:,}", 30)
            raise InputError(f"{where}: {number} is more than the {MAX_STEP:,} allowed")
        return value
    if base == "flag":
        if not isinstance(value, bool):
            raise InputError(f"{where}: expected true or false, got {shown(value)}")
        return value
    if not isinstance(value, str):
        raise InputError(f"{where}: expected a short line of text, got {shown(value)}")
    if len(value) > MAX_TEXT:
        raise InputError(
            f"{where}: expected a short line of text, got {shown(value)} "
            f"({len(value):,} characters, more than the {MAX_TEXT:,} allowed)"
        )
    if not value.isprintable():
        bad = next(ch for ch in value if not ch.isprintable())
        raise InputError(
            f"{where}: expected a short line of text, got {shown(value)} (it holds "
            f"{printable(bad)}, a control or invisible character; gradviz writes them as "
            "escapes)"
        )
    return value


def read_fields(
    data: object, table: Mapping[str, str], where: str, what: str, optional: Sequence[str] = ()
) -> dict:
    """Every field of `table` from the object `data`, checked (`optional` ones may be absent)."""
    if not isinstance(data, dict):
        raise InputError(f"{where}: expected an object of {what}")
    values = {}
    for key, kind in table.items():
        if key in data:
            values[key] = read_field(data[key], kind, f"{where}.{key}")
        elif key not in optional:
            raise InputError(f"{where}.{key}: missing")
    return values


def read_layer_stats(data: object, where: str = "layer") -> LayerStats:
    """The inverse of `LayerStats.to_dict`, checked against LAYER_FIELDS."""
    values = read_fields(data, LAYER_FIELDS, where, "layer statistics", LAYER_OPTIONAL)
    if values["status"] not in STATUSES:
        raise InputError(f"{where}.status: {shown(values['status'])} is not a status")
    if values["activation"] not in ACTIVATIONS:
        raise InputError(f"{where}.activation: {shown(values['activation'])} is unknown")
    return LayerStats(**values)


def read_diagnosis(data: object, where: str = "gradients") -> Diagnosis:
    """The inverse of `Diagnosis.to_dict`, checked field by field."""
    if not isinstance(data, dict):
        raise InputError(f"{where}: expected an object of gradient statistics")
    raw_layers = data.get("layers")
    if not isinstance(raw_layers, list) or not raw_layers:
        raise InputError(f"{where}.layers: expected a list of layer statistics")
    layers = [read_layer_stats(layer, f"{where}.layers[{i}]") for i, layer in enumerate(raw_layers)]
    for i, layer in enumerate(layers):
        if layer.index != i + 1 or layer.is_output != (i == len(layers) - 1):
            raise InputError(f"{where}.layers[{i}]: expected layer {i + 1}, the output layer last")
    first = data.get("first_nonfinite")
    if first is not None:
        if not isinstance(first, dict):
            raise InputError(f"{where}.first_nonfinite: expected null or an object")
        index = read_field(first.get("layer"), "count", f"{where}.first_nonfinite.layer")
        quantity = read_field(first.get("in"), "text", f"{where}.first_nonfinite.in")
        first = (index, quantity)
    values = read_fields(data, DIAGNOSIS_FIELDS, where, "gradient statistics", DIAGNOSIS_OPTIONAL)
    if values.get("unit", "epoch") not in ("epoch", "step"):
        raise InputError(f"{where}.unit: {shown(values['unit'])} is not epoch or step")
    if values.get("judged_by", "gradient") not in ("gradient", "update"):
        raise InputError(f"{where}.judged_by: {shown(values['judged_by'])} is unknown")
    return Diagnosis(layers=layers, first_nonfinite=first, **values)  # type: ignore[arg-type]


# -- saved models -----------------------------------------------------------------------

MODEL_FORMAT = "gradviz-model"
MODEL_VERSION = 1
RUN_FORMAT = "gradviz-run"
MAX_MODEL_BYTES = 100_000_000


def model_dict(model: Model, folder: Path | None = None) -> dict:
    """The model as JSON data; a CSV data set inside `folder` (the file's) is named
    relative to it (the pair can move together), data elsewhere by its absolute path."""
    spec = model.spec.to_dict()
    if folder is not None and model.spec.data.name == "csv" and model.spec.data.path:
        path = Path(spec["data"]["csv"])
        try:
            spec["data"]["csv"] = path.resolve().relative_to(folder.resolve()).as_posix()
        except ValueError:  # outside the folder
            spec["data"]["csv"] = str(path.absolute())
    return {
        "format": MODEL_FORMAT,
        "version": MODEL_VERSION,
        "spec": spec,
        "layers": [
            {"name": f"L{i}", "activation": act, "weights": W.tolist(), "biases": b.tolist()}
            for i, ((W, b), act) in enumerate(
                zip(model.weights, model.spec.activations, strict=True), 1
            )
        ],
        "history": model.history,
        "final": model.final,
    }


def model_json(model: Model, folder: Path | None = None) -> str:
    """Valid JSON (NaN and infinities as the strings "nan", "inf", "-inf")."""
    return json.dumps(json_safe(model_dict(model, folder)), indent=1, allow_nan=False) + "\n"


# -- reading both -----------------------------------------------------------------------


def parse_json(text: str, name: str, what: str) -> object:
    """JSON as gradviz reads every file it saved (`what`: model or run), by the rules above;
    any problem is a ModelError naming the file (`name`) and where."""
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


def _check_version(raw: dict, version: int) -> None:
    if raw.get("version") != version:
        got = quoted(raw.get("version"))
        raise InputError(f"version: {got} is not a version this gradviz reads ({version})")


def model_parts(raw: dict, base_dir: str | None) -> tuple[Spec, list, dict, dict]:
    """A saved model's spec, weights, history and final numbers, checked."""
    _check_version(raw, MODEL_VERSION)
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
    return spec, weights, history, final


def _check_history(history: dict) -> None:
    """Every field of a saved history has the kind its readers expect (the tables above)."""
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
        read_diagnosis(entry, f"history.gradients[{i}]")


# Characters in one number of a model or run file (a float64 needs at most 24): Python
# would spend quadratic time on a huge integer, or fail past 4300 digits.
MAX_NUMBER_LENGTH = 100


def _short_number(text: str, name: str) -> str:
    if len(text) > MAX_NUMBER_LENGTH:
        raise ModelError(
            f"{name}: a number of {len(text):,} characters ({text[:20]}…) is longer than "
            f"the {MAX_NUMBER_LENGTH} allowed"
        )
    return text


def _unique_keys(pairs: list[tuple[str, object]], name: str) -> dict:
    """An object whose keys all differ: JSON readers disagree on which of two counts."""
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
        [_vector(row, columns, f"{where}[{j}]", layer, diverged, j) for j, row in enumerate(value)]
    )


# -- recorded runs -----------------------------------------------------------------------

RUN_VERSION = 1
# A file we write starts with its format; a peek at the start tells a run from a model.
_PEEK_BYTES = 4096
_FORMAT_KEY = re.compile(rb'"format"\s*:\s*"(gradviz-run|gradviz-model)"')

MAX_RUN_LAYERS = 4_096  # (a ResNet-152 has 155 layers with weights; a transformer ~500)
MAX_DIMENSIONS = 8  # of one layer's weight (a 3-d convolution's has 5)
# A step, step count or size in a run file: below 2**53, so that every view that turns it
# into a float (plots, the page's slider) keeps it exact, and none overflows.
MAX_STEP = 10**15


def save_run(run: Run, path: Path | str) -> None:
    """Write atomically; a run the reader would refuse is an InputError before writing."""
    data = json_safe(run_dict(run))
    try:
        run_from_dict(data)  # type: ignore[arg-type]  (the reader's checks: it reads back)
    except GradvizError as error:
        raise InputError(f"cannot save this run: {error.message}") from None
    text = json.dumps(data, indent=1, allow_nan=False) + "\n"
    write_atomic(Path(path), text)


def run_dict(run: Run) -> dict:
    """What `save_run` writes: every text as the reader accepts it (`saved_text`), two
    layer names that meet that way told apart by `#2`."""
    data = {
        "format": RUN_FORMAT,
        "version": RUN_VERSION,
        "framework": run.framework,
        "model": run.model,
        "world_size": run.world_size,
        "steps_run": run.steps_run,
        "every": run.every,
        "layers": [layer.to_dict() for layer in run.layers],
        "curves": {"step": run.curve_steps, "loss": run.loss, "accuracy": run.accuracy},
        "history": [{"step": step, **d.to_dict()} for step, d in run.history],
        "notes": run.notes,
    }
    return _saved_texts(data, saved_names([layer.name for layer in run.layers]))


def saved_text(text: str) -> str:
    """`text` as a run file holds it: `gradviz.text.printable`, cut to MAX_TEXT with …."""
    shown = printable(text)
    return shown if len(shown) <= MAX_TEXT else shown[: MAX_TEXT - 1] + "…"


def saved_names(names: list[str]) -> dict[str, str]:
    """Each layer name as saved (`saved_text`), distinct: `#2`, `#3`, … where they meet."""
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
    """Every string in `value` through `saved_text`, a "name" through `names`."""
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
    """Whether `path` is a recorded run: a peek at its first bytes, where gradviz writes
    the format, else (keys re-sorted) the whole file. Unreadable or not JSON: False."""
    try:
        with open(path, "rb") as file:
            head = file.read(_PEEK_BYTES)
    except OSError:
        return False
    if match := _FORMAT_KEY.search(head):
        return match.group(1).decode() == RUN_FORMAT
    try:
        raw = _read_json(Path(path))
    except GradvizError:
        return False
    return isinstance(raw, dict) and raw.get("format") == RUN_FORMAT


def read_saved(path: Path, what: str) -> str:
    """The text of a saved `what` ("model" or "run"): at most MAX_MODEL_BYTES of UTF-8."""
    data = read_capped(path, MAX_MODEL_BYTES, ModelError, f"{what} file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelError(f"{path}: not a gradviz {what} (not UTF-8 text)") from None


def _read_json(path: Path) -> object:
    return parse_json(read_saved(path, "run"), str(path), "run")


def load_run(path: Path | str) -> Run:
    path = Path(path)
    raw = _read_json(path)
    if isinstance(raw, dict) and raw.get("format") == MODEL_FORMAT:
        raise ModelError(f"{path}: is a saved model, not a recorded run")
    if not isinstance(raw, dict) or raw.get("format") != RUN_FORMAT:
        raise ModelError(f'{path}: not a gradviz run (no "format": "{RUN_FORMAT}")')
    try:
        run = run_from_dict(raw)
    except GradvizError as error:
        raise ModelError(f"{path}: {error.message}") from None
    run.source = path
    return run


def run_from_dict(raw: dict) -> Run:
    """The inverse of `run_dict`, checked field by field."""
    _check_version(raw, RUN_VERSION)
    layers = _layers(raw.get("layers"))
    history = _history(raw.get("history"), layers)
    steps, loss, accuracy = _curves(raw.get("curves"))
    return Run(
        layers=layers,
        history=history,
        steps_run=read_field(raw.get("steps_run"), "size", "steps_run"),
        every=read_field(raw.get("every"), "size", "every"),
        curve_steps=steps,
        loss=loss,
        accuracy=accuracy,
        framework=read_field(raw.get("framework"), "text", "framework"),
        model=read_field(raw.get("model"), "text", "model"),
        world_size=read_field(raw.get("world_size"), "size", "world_size"),
        notes=read_field(raw.get("notes", []), "list of text", "notes"),
    )


def _curves(raw: object) -> tuple[list[int], list[float | None], list[float | None]]:
    """(steps, loss, accuracy) of the logged points (`curves` and `accuracy` optional)."""
    if raw is None:
        return [], [], []
    if not isinstance(raw, dict):
        raise InputError("curves: expected an object with step, loss and accuracy")
    for key in ("step", "loss"):
        if key not in raw:
            raise InputError(f"curves.{key}: missing")
    steps = read_field(raw["step"], "list of size", "curves.step")
    loss = _numbers(raw["loss"], len(steps), "curves.loss")
    accuracy = _numbers(raw.get("accuracy", [None] * len(steps)), len(steps), "curves.accuracy")
    return steps, loss, accuracy


def _layers(raw: object) -> list[RunLayer]:
    if not isinstance(raw, list) or not raw:
        raise InputError("layers: expected a list of layers")
    if len(raw) > MAX_RUN_LAYERS:
        raise InputError(f"layers: {len(raw):,} layers is more than the {MAX_RUN_LAYERS:,} allowed")
    layers = []
    for i, item in enumerate(raw):
        where = f"layers[{i}]"
        if not isinstance(item, dict):
            raise InputError(f"{where}: expected an object")
        shape = item.get("shape")
        if not isinstance(shape, list) or not 1 <= len(shape) <= MAX_DIMENSIONS:
            raise InputError(f"{where}.shape: expected a list of 1 to {MAX_DIMENSIONS} sizes")
        layers.append(
            RunLayer(
                name=read_field(item.get("name"), "text", f"{where}.name"),
                kind=read_field(item.get("kind"), "text", f"{where}.kind"),
                shape=tuple(read_field(shape, "list of size", f"{where}.shape")),
                activation=read_field(item.get("activation"), "text", f"{where}.activation"),
                activation_module=read_field(
                    item.get("activation_module"), "text?", f"{where}.activation_module"
                ),
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
        step = read_field(item.get("step"), "size", f"{where}.step")
        diagnosis = read_diagnosis(item, where)
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
