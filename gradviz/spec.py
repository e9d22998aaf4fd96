"""Specs: which network to build and how to train it, checked.

A spec is a TOML file, a built-in preset (`xor`, `circle`, …: the same specs as
samples/*.toml, which a test keeps equal), or the same keys given as options. Every
mistake names the key (`data.size`), and the file line where TOML gives one. Read only
where specs are read: `gradviz draw` of an expression never imports this module.

The checks are our own small checkers (one per kind of key) rather than a validation
library: pydantic or msgspec would bring their own messages, while ours name the TOML line
and say what to do (tests pin them), and importing pydantic with one model class took
about 44 ms here (median of 5), half of what the whole `gradviz draw` process costs.
"""

from __future__ import annotations

import difflib
import itertools
import json
import math
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gradviz.data import BUILTIN, GENERATED, MAX_POINTS, DataSpec
from gradviz.errors import QUOTE_LIMIT, InputError, SpecError, quoted, shortened
from gradviz.files import read_capped
from gradviz.numbers import from_json_number

if TYPE_CHECKING:
    from gradviz.engine import Value


# -- the vocabulary of a spec -------------------------------------------------------------

ACTIVATION_NAMES = ("sigmoid", "tanh", "relu", "linear")  # nn.ACTIVATIONS: their ops
INITS = ("default", "xavier", "he", "uniform1", "micrograd")
LR_SCHEDULES = ("constant", "linear")


@dataclass(frozen=True)
class Loss:
    """A loss in one place, as an op is in the op table: how it is built from the
    network's output and the target, and its formula and slope for display."""

    name: str
    build: Callable[[Value, Value], Value]
    formula: str  # the loss in terms of the output `out` and the target `y`
    derivative: str  # ∂loss/∂out, in the same terms
    # an output is right when it is on the target's side of this (0.5 for a probability;
    # 0 for a score whose sign is the class, as hinge loss reads it)
    threshold: float = 0.5
    default_output: str = "sigmoid"  # the output activation when the spec names none


def _mse(output: Value, target: Value) -> Value:
    d = output - target
    return d * d  # the square as a product: exact, and both edges are drawn


def _bce(output: Value, target: Value) -> Value:
    return -(target * output.log() + (1.0 - target) * (1.0 - output).log())


def _hinge(output: Value, target: Value) -> Value:
    # labels ±1: the data's 0/1 target read as t = 2y − 1 (exact for 0 and 1); then
    # micrograd's max-margin loss relu(1 + (−t)·score), written 1 − t·score (the same bits)
    sign = target * 2.0 - 1.0
    return (1.0 - sign * output).relu()


LOSS_FUNCTIONS: dict[str, Loss] = {
    loss.name: loss
    for loss in (
        Loss("mse", _mse, "(out − y)²", "2·(out − y)"),
        Loss("bce", _bce, "−(y·log out + (1−y)·log(1−out))", "(out − y)/(out·(1 − out))"),
        Loss(
            "hinge",
            _hinge,
            "max(0, 1 − t·out), t = 2y − 1 = ±1",
            "−t where t·out < 1, else 0",
            threshold=0.0,
            default_output="linear",
        ),
    )
}
LOSSES = tuple(LOSS_FUNCTIONS)
UPDATES = ("full", "online", "minibatch N")

# Sizes refused before anything is built: every parameter becomes a few graph nodes and
# about ten lines of compiled code, so these bound memory (~300 MB while compiling) and
# compile time (~2 s at the limit). These are networks for looking at, not for production.
MAX_LAYERS = 64
MAX_WIDTH = 1024
MAX_PARAMETERS = 5_000
MAX_EPOCHS = 1_000_000
# Gradient statistics recorded during one training run, at most.
MAX_RECORDS = 1_000

KEYS = (
    "name",
    "layers",
    "activation",
    "output_activation",
    "init",
    "loss",
    "data",
    "epochs",
    "learning_rate",
    "update",
    "clip_value",
    "clip_norm",
    "seed",
    "record_every",
    "l2",
    "lr_schedule",
    "lr_end",
)
DATA_KEYS = ("name", "csv", "size", "seed", "noise", "label", "features")

# The built-in networks, the same as samples/*.toml (a test keeps them in sync).
PRESETS: dict[str, dict] = {
    "xor": {
        "name": "xor",
        "layers": [2, 4, 1],
        "activation": "sigmoid",
        "data": "xor",
        "epochs": 2000,
        "learning_rate": 1.0,
        "update": "full",
    },
    "xor-relu": {
        "name": "xor-relu",
        "layers": [2, 4, 1],
        "activation": "relu",
        "init": "he",
        "data": "xor",
        "epochs": 1000,
        "learning_rate": 0.2,
        "update": "full",
    },
    "circle": {
        "name": "circle",
        "layers": [2, 8, 1],
        "activation": "sigmoid",
        "data": {"name": "circle", "size": 80},
        "epochs": 2000,
        "learning_rate": 0.5,
        "update": "online",
    },
    "deep-sigmoid": {
        "name": "deep-sigmoid",
        "layers": [2, 16, 16, 16, 16, 16, 16, 16, 16, 16, 1],
        "activation": "sigmoid",
        "data": {"name": "circle", "size": 80},
        "epochs": 300,
        "learning_rate": 1.0,
        "update": "full",
    },
    "deep-relu": {
        "name": "deep-relu",
        "layers": [2, 16, 16, 16, 16, 16, 16, 16, 16, 16, 1],
        "activation": "relu",
        "init": "he",
        "data": {"name": "circle", "size": 80},
        "epochs": 300,
        "learning_rate": 0.05,
        "update": "full",
    },
}
for _gate in ("and", "or"):
    PRESETS[_gate] = {**PRESETS["xor"], "name": _gate, "data": _gate, "epochs": 1000}
PRESETS["moons"] = {  # micrograd's demo.ipynb
    "name": "moons",
    "layers": [2, 16, 16, 1],
    "activation": "relu",
    "output_activation": "linear",
    "init": "micrograd",
    "loss": "hinge",
    "l2": 1e-4,
    "data": {"name": "moons", "size": 100, "noise": 0.1, "seed": 1},
    "epochs": 100,
    "learning_rate": 1.0,
    "lr_schedule": "linear",
    "lr_end": 0.1,
    "update": "full",
}
PRESETS["spiral"] = {
    "name": "spiral",
    "layers": [2, 16, 16, 1],
    "activation": "relu",
    "init": "he",
    "data": "spiral",
    "epochs": 300,
    "learning_rate": 0.1,
    "update": "online",
}


@dataclass(frozen=True)
class Spec:
    """A network and how to train it, checked: every field is usable as it is."""

    name: str
    layers: tuple[int, ...]
    activations: tuple[str, ...]  # one per weight layer; the last is the output's
    data: DataSpec
    init: str = "default"
    loss: str = "mse"
    epochs: int = 1000
    learning_rate: float = 0.5
    update: str = "full"  # "full", "online" or "minibatch"
    batch_size: int | None = None  # for "minibatch"
    clip_value: float | None = None
    clip_norm: float | None = None
    seed: int = 0
    record_every: int | None = None  # gradient statistics every N epochs
    # l2 · Σ p² added to the loss over every weight AND bias, as micrograd's demo does
    # (`alpha * sum(p*p for p in model.parameters())`): its gradient 2·l2·p joins each
    # parameter's gradient before clipping
    l2: float = 0.0
    lr_schedule: str = "constant"  # "linear": from learning_rate towards lr_end
    lr_end: float | None = None
    base_dir: str | None = field(default=None, compare=False)  # for relative CSV paths
    # Where a key was written (`--layers`, `xor.toml line 3: layers`; `str`: the key
    # itself), for what is found wrong after reading: the data's width, the work.
    locate: Callable[[str], str] = field(default=str, compare=False, repr=False)

    @property
    def n_parameters(self) -> int:
        return parameter_count(self.layers)

    @property
    def update_text(self) -> str:
        return f"minibatch {self.batch_size}" if self.update == "minibatch" else self.update

    def rate_at(self, epoch: int) -> float:
        """The learning rate of epoch `epoch` (1-based). Linear: lr − (lr − lr_end)·k/epochs
        with k = epoch − 1, micrograd's `1.0 - 0.9*k/100` for 1.0 → 0.1 over 100 steps
        (the last epoch's rate is one step short of lr_end, as there)."""
        if self.lr_schedule != "linear" or self.lr_end is None:
            return self.learning_rate
        k = epoch - 1
        return self.learning_rate - (self.learning_rate - self.lr_end) * k / self.epochs

    @property
    def stats_every(self) -> int:
        """Epochs between recorded gradient statistics (about 20 records by default)."""
        return self.record_every or max(1, self.epochs // 20)

    def to_dict(self) -> dict:
        """The spec as plain JSON types, readable back by `spec_from_mapping`."""
        out: dict = {
            "name": self.name,
            "layers": list(self.layers),
            "activation": list(self.activations[:-1]),
            "output_activation": self.activations[-1],
            "init": self.init,
            "loss": self.loss,
            "data": self.data.to_dict(),
            "epochs": self.epochs,
            "learning_rate": self.learning_rate,
            "update": self.update_text,
            "seed": self.seed,
        }
        for key in ("clip_value", "clip_norm", "record_every", "lr_end"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.l2:
            out["l2"] = self.l2
        if self.lr_schedule != "constant":
            out["lr_schedule"] = self.lr_schedule
        if self.data.name == "csv" and self.data.path:
            # absolute, so a saved model finds its data wherever the model file goes
            path = Path(self.base_dir or "") / self.data.path
            out["data"]["csv"] = str(path.absolute())
        return out


def parameter_count(layers: Sequence[int]) -> int:
    return sum((n_in + 1) * n_out for n_in, n_out in itertools.pairwise(layers))


# -- reading specs --------------------------------------------------------------------------

Locate = Callable[[str], str]


MAX_SPEC_BYTES = 1_000_000  # a spec is a few lines


def load_spec(path: Path) -> Spec:
    """A spec from a TOML file; every mistake names the key and, where found, the line."""
    raw, locate = _read_spec(path)
    return spec_from_mapping(raw, locate=locate, base_dir=str(path.parent))


def _read_spec(path: Path) -> tuple[dict, Locate]:
    """A spec file's table of keys, and where each key is written in it."""
    data = read_capped(path, MAX_SPEC_BYTES, SpecError, "spec file")
    try:
        text = data.decode("utf-8-sig")  # a byte-order mark (Windows editors) is not TOML's
    except UnicodeDecodeError as error:
        raise SpecError(f"{path}: not UTF-8 text (byte {error.start})") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SpecError(_toml_problem(path, text, str(error))) from None
    except ValueError:  # an integer of more than 4300 digits (Python's own limit)
        raise SpecError(f"{path}: a number is too long to read (more than 4300 digits)") from None
    except RecursionError:
        raise SpecError(f"{path}: nested too deeply to be a spec") from None
    return raw, _file_locator(path, text)


_TOML_AT = re.compile(r"(.*) \(at line (\d+), column \d+\)$", re.DOTALL)
_TOML_KEY = re.compile(r"""\s*\[*\s*((?:"[^"]*"|'[^']*'|[\w.\s-])+?)\s*(?:=|\])""")
_TOML_REPEATS = ("Cannot overwrite a value", "Cannot declare", "Cannot mutate immutable")


def _toml_problem(path: Path, text: str, problem: str) -> str:
    """tomllib's message, made like every other spec error: a key given twice is named
    with its line (`s.toml line 3: layers: given twice`)."""
    found = _TOML_AT.match(problem)
    if found is None:
        return f"{path}: invalid TOML: {problem}"
    message, line = found.group(1), int(found.group(2))
    if message.startswith(_TOML_REPEATS):
        lines = text.splitlines()
        key = _TOML_KEY.match(lines[line - 1]) if line <= len(lines) else None
        if key is not None:
            name = ".".join(part.strip().strip("\"'") for part in key.group(1).split("."))
            return f"{path} line {line}: {shortened(name)}: given twice"
    return f"{path}: invalid TOML: {problem}"


def resolve_spec(
    source: str | None, overrides: Mapping[str, object], option_names: Mapping[str, str]
) -> Spec:
    """The spec the command line asks for: a TOML file or preset name (or nothing), with
    options on top. Errors in options name the option (`--layers`)."""
    base: dict = {}
    file_locate: Locate | None = None
    base_dir = None
    if source is not None:
        path = Path(source)
        if path.is_file() or source.endswith(".toml"):
            base, file_locate = _read_spec(path)
            base_dir = str(path.parent)
            # the file alone must be a valid spec: its errors name its lines
            spec_from_mapping(base, locate=file_locate, base_dir=base_dir)
        elif source in PRESETS:
            base = dict(PRESETS[source])
        else:
            raise SpecError(
                f"{quoted(source)} is neither a spec file nor a built-in network; built-in: "
                f"{', '.join(PRESETS)}"
            )
    given = {key: value for key, value in overrides.items() if value is not None}
    if source is None:
        missing = [option_names[k] for k in ("layers", "data") if k not in given]
        if missing:
            raise SpecError(
                f"give a spec (a TOML file or one of {', '.join(PRESETS)}) or at least "
                f"{' and '.join(missing)}"
            )
    if "data" in given and isinstance(base.get("data"), dict) and isinstance(given["data"], str):
        # `--data circle` replaces the data set, keeping no options of the old one
        base.pop("data")
    merged = {**base, **given}
    if "batch_size" in merged:
        size = merged.pop("batch_size")
        merged["update"] = f"minibatch {size}"

    def locate(key: str) -> str:
        top = key.split(".")[0].split("[")[0]
        if top in given or (top == "update" and "batch_size" in given):
            return option_names.get(top, top)
        return file_locate(key) if file_locate else f"{source}: {key}"

    return spec_from_mapping(merged, locate=locate, base_dir=base_dir)


def preset(name: str) -> Spec:
    """A built-in network by name (the same as `samples/<name>.toml` where one exists)."""
    if name not in PRESETS:
        raise SpecError(f"no built-in network {quoted(name)}; built-in: {', '.join(PRESETS)}")
    return spec_from_mapping(PRESETS[name], locate=lambda key: f"preset {name}: {key}")


def _file_locator(path: Path, text: str) -> Locate:
    """`samples/x.toml line 3: layers` when the key's line can be found."""
    lines = text.splitlines()

    def locate(key: str) -> str:
        parts = key.split("[")[0].split(".")
        section, bare = (parts[0], parts[1]) if len(parts) == 2 else (None, parts[0])
        pattern = re.compile(rf"^\s*(\"?){re.escape(bare)}\1\s*=")
        in_section = section is None
        for number, line in enumerate(lines, 1):
            if section is None and re.match(rf"^\s*\[\[?{re.escape(bare)}\]", line):
                return f"{path} line {number}: {key}"  # a table of that name
            stripped = line.strip()
            if stripped.startswith("["):
                in_section = section is not None and stripped.strip("[] ") == section
                if section is None:
                    break  # top-level keys come before any table
                continue
            if in_section and pattern.match(line):
                return f"{path} line {number}: {key}"
            if section is not None and pattern.match(line) and bare == section:
                return f"{path} line {number}: {key}"
        if section is not None:  # `data = {…}` inline, or `[data]` header
            for number, line in enumerate(lines, 1):
                if re.match(rf"^\s*(\[{re.escape(section)}\]|{re.escape(section)}\s*=)", line):
                    return f"{path} line {number}: {key}"
        return f"{path}: {key}"

    return locate


def spec_from_mapping(
    raw: Mapping[str, object], *, locate: Locate = lambda key: key, base_dir: str | None = None
) -> Spec:
    """Check every key of a spec and build it. `locate(key)` says where a key was written."""

    def fail(key: str, problem: str) -> SpecError:
        # a key is the user's text: a 20,000-character one is cut where the line is named
        where = locate(key)
        if len(key) > QUOTE_LIMIT:
            where = where.replace(key, shortened(key))
        return SpecError(f"{shortened(where, 3 * QUOTE_LIMIT)}: {problem}")

    if not isinstance(raw, Mapping):
        raise SpecError("a spec is a table of keys")
    for key in raw:
        if key not in KEYS:
            raise fail(key, f"unknown key{_suggest(key, KEYS)}; known keys: {', '.join(KEYS)}")

    layers = _layers(raw.get("layers"), fail)
    n_weight_layers = len(layers) - 1
    activations = _activations(raw, n_weight_layers, fail)
    init = _choice(raw.get("init", "default"), INITS, "init", fail)
    loss = _choice(raw.get("loss", "mse"), LOSSES, "loss", fail)
    given = raw.get("activation")
    if isinstance(given, str):
        given = given.split(",")
    if "output_activation" not in raw and not (
        isinstance(given, list) and len(given) == n_weight_layers
    ):
        default_output = LOSS_FUNCTIONS[loss].default_output
        activations = (*activations[:-1], default_output)
    if loss == "bce" and activations[-1] != "sigmoid":
        raise fail(
            "loss",
            f"bce needs a sigmoid output (a probability), not {activations[-1]}: "
            'set output_activation = "sigmoid" or use loss = "mse"',
        )
    if "data" not in raw:
        raise fail("data", 'missing: say which data set to train on, e.g. data = "xor"')
    data = _data(raw["data"], fail)
    epochs = _integer(raw.get("epochs", 1000), "epochs", 1, MAX_EPOCHS, fail)
    rate = _positive(raw.get("learning_rate", 0.5), "learning_rate", fail)
    update, batch_size = _update(raw.get("update", "full"), fail)
    clip_value = _optional_positive(raw.get("clip_value"), "clip_value", fail)
    clip_norm = _optional_positive(raw.get("clip_norm"), "clip_norm", fail)
    if clip_value is not None and clip_norm is not None:
        raise fail("clip_norm", "choose one of clip_value and clip_norm, not both")
    seed = _integer(raw.get("seed", 0), "seed", 0, 2**63 - 1, fail)
    every = raw.get("record_every")
    record_every = None if every is None else _integer(every, "record_every", 1, MAX_EPOCHS, fail)
    if record_every is not None and epochs // record_every > MAX_RECORDS:
        raise fail(
            "record_every",
            f"every {record_every} of {epochs:,} epochs is more than {MAX_RECORDS:,} records; "
            f"use at least {math.ceil(epochs / MAX_RECORDS)}",
        )
    l2 = raw.get("l2", 0.0)
    if isinstance(l2, bool) or not isinstance(l2, int | float) or not 0 <= l2 <= 1e3:
        raise fail("l2", f"{l2!r} must be a number from 0 to 1000 (e.g. 1e-4)")
    schedule = _choice(raw.get("lr_schedule", "constant"), LR_SCHEDULES, "lr_schedule", fail)
    lr_end = raw.get("lr_end")
    if lr_end is not None:
        if (
            isinstance(lr_end, bool)
            or not isinstance(lr_end, int | float)
            or not (0 <= lr_end <= 1e6)
        ):
            raise fail("lr_end", f"{lr_end!r} must be a number from 0 to 1e6")
        lr_end = float(lr_end)
        if schedule == "constant":
            raise fail("lr_end", 'applies to a schedule: add lr_schedule = "linear"')
    elif schedule == "linear":
        raise fail("lr_schedule", "linear needs an end value: add lr_end = (e.g. 0.1)")
    name = raw.get("name", "network")
    if not isinstance(name, str) or not name.strip() or len(name) > 100:
        raise fail("name", "expected a short text")
    if not name.isprintable():  # it is printed to terminals: no escape sequences from a file
        raise fail("name", f"{quoted(name)} holds control characters")
    return Spec(
        name=name,
        layers=layers,
        activations=activations,
        data=data,
        init=init,
        loss=loss,
        epochs=epochs,
        learning_rate=rate,
        update=update,
        batch_size=batch_size,
        clip_value=clip_value,
        clip_norm=clip_norm,
        seed=seed,
        record_every=record_every,
        l2=float(l2),
        lr_schedule=schedule,
        lr_end=lr_end,
        base_dir=base_dir,
        locate=locate,
    )


def _suggest(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1)
    shown = quoted(word, 30)  # the line names the key already, and lists the known ones
    return f" {shown} (did you mean {quoted(close[0])}?)" if close else f" {shown}"


def _layers(value: object, fail: Callable[[str, str], SpecError]) -> tuple[int, ...]:
    if value is None:
        raise fail("layers", "missing: give the layer sizes, e.g. layers = [2, 4, 1]")
    if isinstance(value, str):
        value = _split_ints(value)
    if not isinstance(value, list | tuple) or len(value) < 2:
        raise fail("layers", "expected at least two sizes (inputs and outputs), e.g. [2, 4, 1]")
    if len(value) - 1 > MAX_LAYERS:
        raise fail("layers", f"{len(value) - 1} layers is more than the {MAX_LAYERS} allowed")
    for i, size in enumerate(value):
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise fail(f"layers[{i}]", f"{quoted(size)} is not a positive integer")
        if size > MAX_WIDTH:
            raise fail(f"layers[{i}]", f"{size} units is more than the {MAX_WIDTH} allowed")
    if value[-1] != 1:
        raise fail(
            "layers",
            f"the last size is the number of outputs and must be 1 (the probability of "
            f"class 1), not {value[-1]}",
        )
    count = parameter_count(value)
    if count > MAX_PARAMETERS:
        raise fail(
            "layers",
            f"{count:,} parameters is more than the {MAX_PARAMETERS:,} allowed "
            "(every parameter is a node of the graph)",
        )
    return tuple(value)


def _split_ints(text: str) -> list[object]:
    out: list[object] = []
    for part in text.split(","):
        part = part.strip()
        out.append(int(part) if re.fullmatch(r"[+-]?\d{1,9}", part) else part)
    return out


def _activations(
    raw: Mapping[str, object], n_layers: int, fail: Callable[[str, str], SpecError]
) -> tuple[str, ...]:
    hidden = n_layers - 1
    given = raw.get("activation", "sigmoid")
    output = raw.get("output_activation")
    if isinstance(given, str) and "," in given:
        given = [part.strip() for part in given.split(",")]
    if isinstance(given, str):
        names = [_choice(given, ACTIVATION_NAMES, "activation", fail)] * hidden
    elif isinstance(given, list):
        if len(given) not in (hidden, n_layers):
            raise fail(
                "activation",
                f"{len(given)} activations for {hidden} hidden layer(s): give one name for all "
                f"of them, a list of {hidden}, or {n_layers} including the output",
            )
        names = [
            _choice(name, ACTIVATION_NAMES, f"activation[{i}]", fail)
            for i, name in enumerate(given)
        ]
        if len(given) == n_layers:
            if output is not None and output != names[-1]:
                raise fail("output_activation", "also given as the last item of activation")
            return tuple(names)
    else:
        raise fail("activation", "expected a name (sigmoid, tanh, relu, linear) or a list of them")
    out = _choice(
        output if output is not None else "sigmoid", ACTIVATION_NAMES, "output_activation", fail
    )
    return (*names, out)


def _choice(
    value: object, choices: Sequence[str], key: str, fail: Callable[[str, str], SpecError]
) -> str:
    if not isinstance(value, str) or value not in choices:
        shown = repr(value) if not isinstance(value, str) else value
        hint = _suggest(value, choices) if isinstance(value, str) else f" {shown}"
        raise fail(key, f"unknown value{hint}; expected one of {', '.join(choices)}")
    return value


def _integer(
    value: object, key: str, low: int, high: int, fail: Callable[[str, str], SpecError]
) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(key, f"expected a whole number, got {quoted(value)}")
    if not low <= value <= high:
        raise fail(key, f"{value:,} is out of range ({low:,} to {high:,})")
    return value


def _positive(value: object, key: str, fail: Callable[[str, str], SpecError]) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise fail(key, f"expected a number, got {quoted(value)}")
    number = float(value) if not isinstance(value, int) or abs(value) < 2**1000 else math.inf
    if not math.isfinite(number) or number <= 0 or number > 1e6:
        raise fail(key, f"{quoted(value)} must be a positive number (at most 1e6)")
    return number


def _optional_positive(
    value: object, key: str, fail: Callable[[str, str], SpecError]
) -> float | None:
    return None if value is None else _positive(value, key, fail)


def _update(value: object, fail: Callable[[str, str], SpecError]) -> tuple[str, int | None]:
    if not isinstance(value, str):
        raise fail("update", f'expected "full", "online" or "minibatch N", got {quoted(value)}')
    words = value.split()
    if words in (["full"], ["online"]):
        return words[0], None
    if words and words[0] == "minibatch":
        if len(words) == 2 and words[1].isdigit() and 1 <= int(words[1]) <= MAX_POINTS:
            return "minibatch", int(words[1])
        raise fail("update", f'{quoted(value)}: write the batch size after it, e.g. "minibatch 16"')
    raise fail("update", f"unknown mode {quoted(value)}; expected full, online or minibatch N")


def _data(value: object, fail: Callable[[str, str], SpecError]) -> DataSpec:
    if isinstance(value, str):
        if value in BUILTIN:
            return DataSpec(value)
        if value.lower().endswith(".csv") and value.isprintable():
            return DataSpec("csv", path=value)
        raise fail(
            "data",
            f"unknown data set{_suggest(value, BUILTIN)}; built-in: {', '.join(BUILTIN)}, "
            "or a path ending in .csv",
        )
    if not isinstance(value, Mapping):
        raise fail("data", "expected a data set name or a table ([data] with name or csv)")
    for key in value:
        if key not in DATA_KEYS:
            raise fail(
                f"data.{key}",
                f"unknown key{_suggest(key, DATA_KEYS)}; known: {', '.join(DATA_KEYS)}",
            )
    if "csv" in value or value.get("name") == "csv":
        path = value.get("csv")
        if not isinstance(path, str) or not path:
            raise fail("data.csv", "expected the path of a CSV file")
        if not path.isprintable():
            raise fail("data.csv", f"{quoted(path)} holds control characters")
        for key in ("size", "noise"):
            if key in value:
                raise fail(f"data.{key}", "applies to generated data sets, not to a CSV file")
        label = value.get("label")
        if label is not None and not isinstance(label, str | int):
            raise fail("data.label", "expected a column name or a 0-based column number")
        features = value.get("features")
        if features is not None and (
            not isinstance(features, list) or not all(isinstance(f, str | int) for f in features)
        ):
            raise fail("data.features", "expected a list of column names or numbers")
        return DataSpec(
            "csv",
            path=path,
            label=None if label is None else str(label),
            features=None if features is None else tuple(str(f) for f in features),
        )
    name = value.get("name")
    if name is None:
        raise fail("data", "give name = (a built-in data set) or csv = (a file path)")
    name = _choice(name, BUILTIN, "data.name", fail)
    for key in ("label", "features"):
        if key in value:
            raise fail(f"data.{key}", "applies to CSV files only")
    size = value.get("size")
    noise = value.get("noise")
    if name not in GENERATED:
        for key in ("size", "noise", "seed"):
            if key in value:
                raise fail(f"data.{key}", f"the {name} data set is fixed (four points)")
    if size is not None:
        size = _integer(size, "data.size", 1, MAX_POINTS, fail)
    if noise is not None:
        if GENERATED[name][1] is None:
            raise fail("data.noise", f"the {name} data set has no noise setting")
        if isinstance(noise, bool) or not isinstance(noise, int | float) or not 0 <= noise <= 10:
            raise fail("data.noise", f"{quoted(noise)} must be a number from 0 to 10")
        noise = float(noise)
    # moons draws from numpy's RandomState as scikit-learn does: seeds below 2³²
    top = 2**32 - 1 if name == "moons" else 2**63 - 1
    seed = _integer(value.get("seed", 0), "data.seed", 0, top, fail)
    return DataSpec(name, size=size, seed=seed, noise=noise)


# -- the statistics a saved model holds: one table of fields ------------------------------
# A kind is what a field holds; "?" after it: or null. Floats may be "nan", "inf", "-inf"
# (how gradviz writes them). Every mistake names the field's path (`history.gradients[0].
# layers[1].rms`) and shows the value as the file had it.

MAX_TEXT = 1_000  # characters of a name, status or reason read from a file

LAYER_FIELDS: dict[str, str] = {
    "index": "count",
    "name": "text",
    "activation": "text",
    "is_output": "flag",
    "n_in": "count",
    "n_out": "count",
    "n_params": "count",
    "batch": "count",
    "mean_abs": "number",
    "max_abs": "number",
    "rms": "number",
    "norm": "number",
    "signal": "number",
    "rel": "number?",
    "below": "number?",
    "growth": "number",
    "hop": "number?",
    "hop_bound": "number?",
    "grad_data": "number?",
    "update_data": "number?",
    "act_mean": "signed",  # of the floats only the activations' mean has a sign
    "act_std": "number",
    "mean_slope": "number",
    "saturated": "number?",
    "dead": "number",
    "dead_units": "count",
    "nonfinite": "count",
    "nonfinite_in": "text?",
    "status": "text",
    "reason": "text",
}
"""A layer's statistics (`gradviz.stats.LayerStats`, in its order; a test keeps them equal)."""

DIAGNOSIS_FIELDS: dict[str, str] = {
    "at_rest": "flag",
    "output_spread": "number",
    "stalled": "flag",
    "epoch": "count?",
}
"""The whole network's, beside its `layers` (`gradviz.stats.Diagnosis`)."""


def shown(value: object) -> str:
    """A value from a file as it was written, cut short."""
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:30] + "…"


def read_field(value: object, kind: str, where: str) -> object:
    """`value` read back from JSON as a field of `kind` (see LAYER_FIELDS), or an
    InputError naming `where`."""
    base = kind.removesuffix("?")
    if value is None and base != kind:
        return None
    if base in ("number", "signed"):
        number = from_json_number(value)
        if number is None or (number < 0 and base == "number"):
            raise InputError(f"{where}: expected a number ≥ 0, got {shown(value)}")
        return number
    if base == "count":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InputError(f"{where}: expected a whole number ≥ 0, got {shown(value)}")
        return value
    if base == "flag":
        if not isinstance(value, bool):
            raise InputError(f"{where}: expected true or false, got {shown(value)}")
        return value
    if not isinstance(value, str) or len(value) > MAX_TEXT or not value.isprintable():
        raise InputError(f"{where}: expected a short line of text, got {shown(value)}")
    return value


def read_fields(data: object, table: Mapping[str, str], where: str, what: str) -> dict:
    """Every field of `table` from the object `data`, each checked: missing, or of the
    wrong kind, is an InputError naming its path (`where.rms`)."""
    if not isinstance(data, dict):
        raise InputError(f"{where}: expected an object of {what}")
    values = {}
    for key, kind in table.items():
        if key not in data:
            raise InputError(f"{where}.{key}: missing")
        values[key] = read_field(data[key], kind, f"{where}.{key}")
    return values
