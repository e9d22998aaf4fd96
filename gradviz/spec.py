"""Specs: which network to build and how to train it, checked: a TOML file, a built-in
preset (the specs of samples/*.toml) or the same keys given as options. Every mistake
names the key (`data.size`) and the file line. Our own small checkers, not a validation
library: ours name the line and say what to do (and pydantic's import took 44 ms).
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TypeGuard

from gradviz.data import BUILTIN, GENERATED, MAX_POINTS, DataSpec
from gradviz.errors import QUOTE_LIMIT, SpecError, quoted, shortened
from gradviz.files import read_capped
from gradviz.nn import INITS, LOSS_FUNCTIONS, LOSSES, parameter_count
from gradviz.ops import ACTIVATIONS

# -- the vocabulary of a spec -------------------------------------------------------------

ACTIVATION_NAMES = tuple(ACTIVATIONS)  # the op table's activations, and "linear"
LR_SCHEDULES = ("constant", "linear")

# Sizes refused before anything is built: every parameter becomes a few graph nodes and
# about ten lines of compiled code, so these bound memory (~300 MB while compiling) and
# compile time (~2 s at the limit). These are networks for looking at, not for production.
MAX_LAYERS = 64
MAX_WIDTH = 1024
MAX_PARAMETERS = 5_000
MAX_EPOCHS = 1_000_000
# Gradient statistics recorded during one training run, at most.
MAX_RECORDS = 1_000

# The built-in networks, the same as samples/*.toml: a variant is the preset it is `like`
# with some keys changed.
PRESETS: dict[str, dict] = {}


def _preset(name: str, like: str | None = None, **keys: object) -> None:
    # a copy all the way down: no two presets share a `data` table or a `layers` list
    PRESETS[name] = copy.deepcopy({**(PRESETS[like] if like else {}), "name": name, **keys})


_preset(
    "xor",
    layers=[2, 4, 1],
    activation="sigmoid",
    data="xor",
    epochs=2000,
    learning_rate=1.0,
    update="full",
)
_preset("xor-relu", like="xor", activation="relu", init="he", epochs=1000, learning_rate=0.2)
_preset(
    "circle",
    layers=[2, 8, 1],
    activation="sigmoid",
    data={"name": "circle", "size": 80},
    epochs=2000,
    learning_rate=0.5,
    update="online",
)
_DEEP = [2, *[16] * 9, 1]  # nine hidden layers of 16 units: ten weight layers
_preset("deep-sigmoid", like="circle", layers=_DEEP, epochs=300, learning_rate=1.0, update="full")
_preset("deep-relu", like="deep-sigmoid", activation="relu", init="he", learning_rate=0.05)
_preset("and", like="xor", data="and", epochs=1000)
_preset("or", like="xor", data="or", epochs=1000)
_preset(  # micrograd's demo.ipynb
    "moons",
    layers=[2, 16, 16, 1],
    activation="relu",
    output_activation="linear",
    init="micrograd",
    loss="hinge",
    l2=1e-4,
    data={"name": "moons", "size": 100, "noise": 0.1, "seed": 1},
    epochs=100,
    learning_rate=1.0,
    lr_schedule="linear",
    lr_end=0.1,
    update="full",
)
_preset(
    "spiral",
    layers=[2, 16, 16, 1],
    activation="relu",
    init="he",
    data="spiral",
    epochs=300,
    learning_rate=0.1,
    update="online",
)


@dataclass(frozen=True)
class Spec:
    """A network and how to train it, checked. Built only by `spec_from_mapping`, so the
    defaults live in one place: the table `SPEC_KEYS`."""

    name: str
    layers: tuple[int, ...]
    activations: tuple[str, ...]  # one per weight layer; the last is the output's
    data: DataSpec
    init: str
    loss: str
    epochs: int
    learning_rate: float
    update: str  # "full", "online" or "minibatch"
    batch_size: int | None  # for "minibatch"
    clip_value: float | None
    clip_norm: float | None
    seed: int
    record_every: int | None  # gradient statistics every N epochs
    # l2 · Σ p² added to the loss over every weight AND bias, as micrograd's demo does
    # (`alpha * sum(p*p for p in model.parameters())`): its gradient 2·l2·p joins each
    # parameter's gradient before clipping
    l2: float
    lr_schedule: str  # "linear": from learning_rate towards lr_end
    lr_end: float | None
    base_dir: str | None = field(default=None, compare=False)  # for relative CSV paths
    # Where a key was written (`--layers`, `xor.toml line 3: layers`; `str`: the key
    # itself), for what is found wrong after reading: the data's width, the work.
    locate: Callable[[str], str] = field(default=str, compare=False, repr=False)

    @property
    def n_parameters(self) -> int:
        return parameter_count(self.layers)

    @property
    def data_path(self) -> Path | None:
        """A CSV data set's file, relative to the spec's folder (None: a built-in set)."""
        return None if self.data.path is None else Path(self.base_dir or "") / self.data.path

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
        """About 20 records by default."""
        return self.record_every or max(1, self.epochs // 20)

    def to_dict(self) -> dict:
        """The spec as plain JSON types, readable back by `spec_from_mapping`."""
        out: dict = {}
        for key in SPEC_KEYS.values():
            value = key.write(self) if key.write else getattr(self, key.name)
            if key.always or value != key.default:
                out[key.name] = value
        if self.data_path is not None:
            # absolute, so a saved model finds its data wherever the model file goes
            out["data"]["csv"] = str(self.data_path.absolute())
        return out


# -- reading specs --------------------------------------------------------------------------

Locate = Callable[[str], str]
MAX_SPEC_BYTES = 1_000_000  # a spec is a few lines


def load_spec(path: Path) -> Spec:
    raw, locate = _read_spec(path)
    return spec_from_mapping(raw, locate=locate, base_dir=str(path.parent))


def _read_spec(path: Path) -> tuple[dict, Locate]:
    data = read_capped(path, MAX_SPEC_BYTES, SpecError, "spec file")
    try:
        text = data.decode("utf-8-sig")  # a byte-order mark (Windows editors) is not TOML's
    except UnicodeDecodeError as error:
        raise SpecError(f"{path}: not UTF-8 text (byte {error.start})") from None
    import tomllib  # lazy: start-up (a preset, `gradviz train xor`, reads no TOML)

    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SpecError(_toml_problem(path, text, str(error))) from None
    except ValueError:  # an integer of more than 4300 digits (Python's own limit)
        raise SpecError(f"{path}: a number is too long to read (more than 4300 digits)") from None
    except RecursionError:
        raise SpecError(f"{path}: nested too deeply to be a spec") from None
    lines = text.splitlines()

    def locate(key: str) -> str:
        number = _key_line(lines, key)
        return f"{path} line {number}: {key}" if number else f"{path}: {key}"

    return raw, locate


_TOML_AT = re.compile(r"(.*) \(at line (\d+), column \d+\)$", re.DOTALL)
_TOML_KEY = re.compile(r"""\s*\[*\s*((?:"[^"]*"|'[^']*'|[\w.\s-])+?)\s*(?:=|\])""")
_TOML_REPEATS = ("Cannot overwrite a value", "Cannot declare", "Cannot mutate immutable")


def _toml_problem(path: Path, text: str, problem: str) -> str:
    """tomllib's message, made like every other spec error: a key given twice is named
    with its line (`s.toml line 3: layers: given twice`)."""
    found = _TOML_AT.match(problem)
    if found is not None and found.group(1).startswith(_TOML_REPEATS):
        line, lines = int(found.group(2)), text.splitlines()
        key = _TOML_KEY.match(lines[line - 1]) if line <= len(lines) else None
        if key is not None:
            name = ".".join(part.strip().strip("\"'") for part in key.group(1).split("."))
            return f"{path} line {line}: {shortened(name)}: given twice"
    return f"{path}: invalid TOML: {problem}"


def _key_line(lines: Sequence[str], key: str) -> int | None:
    """The line (from 1) where `key` (`layers`, `data.size`, `layers[2]`) is written."""
    parts = key.split("[")[0].split(".")
    section, bare = (parts[0], parts[1]) if len(parts) == 2 else (None, parts[0])
    pattern = re.compile(rf"^\s*(\"?){re.escape(bare)}\1\s*=")
    in_section = section is None
    for number, line in enumerate(lines, 1):
        if section is None and re.match(rf"^\s*\[\[?{re.escape(bare)}\]", line):
            return number  # a table of that name
        stripped = line.strip()
        if stripped.startswith("["):  # top-level keys come before any table
            in_section = section is not None and stripped.strip("[] ") == section
            continue
        if pattern.match(line) and (in_section or bare == section):
            return number
    if section is not None:  # `data = {…}` inline, or `[data]` header
        header = re.compile(rf"^\s*(\[{re.escape(section)}\]|{re.escape(section)}\s*=)")
        return next((n for n, line in enumerate(lines, 1) if header.match(line)), None)
    return None


def resolve_spec(
    source: str | None, overrides: Mapping[str, object], option_names: Mapping[str, str]
) -> Spec:
    """A TOML file or preset name (or nothing), with options on top; errors in options
    name the option (`--layers`)."""
    given = {key: value for key, value in overrides.items() if value is not None}
    base: dict = {}
    file_locate: Locate | None = None
    base_dir = None
    if source is None:
        missing = [option_names[k] for k in ("layers", "data") if k not in given]
        if missing:
            raise SpecError(
                f"give a spec (a TOML file or one of {', '.join(PRESETS)}) or at least "
                f"{' and '.join(missing)}"
            )
    elif Path(source).is_file() or source.endswith(".toml"):
        base, file_locate = _read_spec(Path(source))
        base_dir = str(Path(source).parent)
        # the file alone must be a valid spec: its errors name its lines
        spec_from_mapping(base, locate=file_locate, base_dir=base_dir)
    elif source in PRESETS:
        base = dict(PRESETS[source])
    else:
        raise SpecError(
            f"{quoted(source)} is neither a spec file nor a built-in network; built-in: "
            f"{', '.join(PRESETS)}"
        )
    if "data" in given and isinstance(base.get("data"), dict) and isinstance(given["data"], str):
        # `--data circle` replaces the data set, keeping no options of the old one
        base.pop("data")
    merged = {**base, **given}
    if "batch_size" in merged:
        merged["update"] = f"minibatch {merged.pop('batch_size')}"

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


def spec_from_mapping(
    raw: Mapping[str, object], *, locate: Locate = lambda key: key, base_dir: str | None = None
) -> Spec:
    """Check every key as `SPEC_KEYS` declares it, then the `RULES` between keys, and build
    the spec. `locate(key)` says where a key was written."""

    def fail(key: str, problem: str) -> SpecError:
        # a key is the user's text: a 20,000-character one is cut where the line is named
        where = locate(key)
        if len(key) > QUOTE_LIMIT:
            where = where.replace(key, shortened(key))
        return SpecError(f"{shortened(where, 3 * QUOTE_LIMIT)}: {problem}")

    if not isinstance(raw, Mapping):
        raise SpecError("a spec is a table of keys")
    _refuse_unknown(raw, SPEC_KEYS, "", "known keys", fail)
    values: dict = {}
    for key in SPEC_KEYS.values():
        value = raw.get(key.name, key.default)
        if value is None and key.missing:
            raise fail(key.name, key.missing)
        value = key.read(value, key.name, fail)
        values.update(key.into(value) if key.into else {key.name: value})
    for rule in RULES:
        values.update(rule(values, fail) or {})
    return Spec(**{name: values[name] for name in SPEC_FIELDS}, base_dir=base_dir, locate=locate)


# -- the table of keys ----------------------------------------------------------------------

Fail = Callable[[str, str], SpecError]
Reader = Callable[[object, str, Fail], object]  # checks a key's value and converts it


@dataclass(frozen=True)
class Key:
    """One key of a spec (or of its `[data]` table): how its value is read, its default,
    what it fills, and how `Spec.to_dict` writes it."""

    name: str
    read: Reader
    default: object = None  # None: optional, or required when `missing` says what to give
    missing: str | None = None
    into: Callable[[object], dict] | None = None  # the fields it fills; None: its name's
    write: Callable[[Spec], object] | None = None  # for to_dict; None: its name's field
    always: bool = True  # to_dict writes it even when it is the default
    # why it does not apply to a data set (of `[data]`: "csv" or a built-in name), or None
    applies: Callable[[str], str | None] = lambda kind: None


def _refuse_unknown(
    raw: Mapping[str, object], table: Mapping[str, Key], prefix: str, known: str, fail: Fail
) -> None:
    for name in raw:
        if name not in table:
            hint = _suggest(name, list(table))
            raise fail(f"{prefix}{name}", f"unknown key{hint}; {known}: {', '.join(table)}")


def spelled(value: object) -> str:
    """A spec's value as its file spells it, for an error: `true`, not Python's `True`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return quoted(value)


def _suggest(word: str, choices: Sequence[str]) -> str:
    import difflib  # lazy: start-up (only a mistake needs a close match)

    close = difflib.get_close_matches(word, choices, n=1)
    shown = quoted(word, 30)  # the line names the key already, and lists the known ones
    return f" {shown} (did you mean {quoted(close[0])}?)" if close else f" {shown}"


def choice(names: Sequence[str]) -> Reader:
    def read(value: object, key: str, fail: Fail) -> str:
        if not isinstance(value, str) or value not in names:
            hint = _suggest(value, names) if isinstance(value, str) else f" {spelled(value)}"
            raise fail(key, f"unknown value{hint}; expected one of {', '.join(names)}")
        return value

    return read


def whole_problem(
    value: object, low: int, high: int | None, show: Callable[[object], str]
) -> str | None:
    """What is wrong with `value` as a whole number from `low` (to `high`), or None."""
    bound = f" ≥ {low}" if high is None else ""
    if isinstance(value, bool) or not isinstance(value, int) or (high is None and value < low):
        return f"expected a whole number{bound}, got {show(value)}"
    if high is not None and not low <= value <= high:
        return f"{value:,} is out of range ({low:,} to {high:,})"
    return None


def whole(low: int, high: int) -> Reader:
    def read(value: object, key: str, fail: Fail) -> int:
        if problem := whole_problem(value, low, high, spelled):
            raise fail(key, problem)
        return value  # type: ignore[return-value]

    return read


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)  # True is an int here


def positive(value: object, key: str, fail: Fail) -> float:
    """Rates and clipping bounds: > 0, at most 1e6."""
    if not _is_number(value):
        raise fail(key, f"expected a number, got {spelled(value)}")
    number = float(value) if not isinstance(value, int) or abs(value) < 2**1000 else math.inf
    if not math.isfinite(number) or number <= 0 or number > 1e6:
        raise fail(key, f"{spelled(value)} must be a positive number (at most 1e6)")
    return number


def between(low: float, high: float, wording: str) -> Reader:
    def read(value: object, key: str, fail: Fail) -> float:
        if not _is_number(value) or not low <= value <= high:
            raise fail(key, f"{spelled(value)} must be a number from {wording}")
        return float(value)

    return read


def optional(read: Reader) -> Reader:
    """`read`, or None (not given, or null in a model file)."""
    return lambda value, key, fail: None if value is None else read(value, key, fail)


def text(problem: str, longest: int) -> Reader:
    """A line of text, no control characters: it is printed to terminals."""

    def read(value: object, key: str, fail: Fail) -> str:
        if isinstance(value, str) and len(value) > longest:
            raise fail(key, f"{len(value):,} characters is more than the {longest} allowed")
        if not isinstance(value, str) or not value.strip():
            raise fail(key, problem)
        if not value.isprintable():
            raise fail(key, f"{quoted(value)} holds control characters")
        return value

    return read


def _layers(value: object, key: str, fail: Fail) -> tuple[int, ...]:
    if isinstance(value, str):
        value = _split_ints(value)
    if not isinstance(value, list | tuple) or len(value) < 2:
        raise fail(key, "expected at least two sizes (inputs and outputs), e.g. [2, 4, 1]")
    if len(value) - 1 > MAX_LAYERS:
        raise fail(key, f"{len(value) - 1} layers is more than the {MAX_LAYERS} allowed")
    for i, size in enumerate(value):
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise fail(f"{key}[{i}]", f"{quoted(size)} is not a positive integer")
        if size > MAX_WIDTH:
            raise fail(f"{key}[{i}]", f"{size} units is more than the {MAX_WIDTH} allowed")
    if value[-1] != 1:
        raise fail(
            key,
            f"the last size is the number of outputs and must be 1 (the probability of "
            f"class 1), not {value[-1]}",
        )
    count = parameter_count(value)
    if count > MAX_PARAMETERS:
        raise fail(
            key,
            f"{count:,} parameters is more than the {MAX_PARAMETERS:,} allowed "
            "(every parameter is a node of the graph)",
        )
    return tuple(value)


def _split_ints(text: str) -> list[object]:
    """`2, 4, 1` (`--layers`): the whole numbers as ints, the rest as written."""
    parts = [part.strip() for part in text.split(",")]
    return [int(part) if re.fullmatch(r"[+-]?\d{1,9}", part) else part for part in parts]


_activation = choice(ACTIVATION_NAMES)


def _activation_list(value: object, key: str, fail: Fail) -> str | tuple[str, ...]:
    """One name for every hidden layer, or one per layer (how many: the rule `_activations`)."""
    if isinstance(value, str) and "," in value:
        value = [part.strip() for part in value.split(",")]
    if isinstance(value, str):
        return _activation(value, key, fail)
    if not isinstance(value, list):
        names = ", ".join(ACTIVATION_NAMES)
        raise fail(key, f"expected a name ({names}) or a list of them")
    return tuple(_activation(name, f"{key}[{i}]", fail) for i, name in enumerate(value))


def _update(value: object, key: str, fail: Fail) -> tuple[str, int | None]:
    if not isinstance(value, str):
        raise fail(key, f'expected "full", "online" or "minibatch N", got {spelled(value)}')
    words = value.split()
    if words in (["full"], ["online"]):
        return words[0], None
    if words and words[0] == "minibatch":
        if len(words) == 2 and words[1].isdigit() and 1 <= int(words[1]) <= MAX_POINTS:
            return "minibatch", int(words[1])
        raise fail(key, f'{quoted(value)}: write the batch size after it, e.g. "minibatch 16"')
    raise fail(key, f"unknown mode {quoted(value)}; expected full, online or minibatch N")


def _data(value: object, key: str, fail: Fail) -> DataSpec:
    if isinstance(value, str):
        if value in BUILTIN:
            return DataSpec(value)
        if value.lower().endswith(".csv") and value.isprintable():
            return DataSpec("csv", path=value)
        raise fail(
            key,
            f"unknown data set{_suggest(value, BUILTIN)}; built-in: {', '.join(BUILTIN)}, "
            "or a path ending in .csv",
        )
    if not isinstance(value, Mapping):
        raise fail(key, "expected a data set name or a table ([data] with name or csv)")
    _refuse_unknown(value, DATA_KEYS, f"{key}.", "known", fail)
    if "csv" in value or value.get("name") == "csv":
        kind = "csv"  # (a name beside csv says nothing more)
        if value.get("csv") is None:
            raise fail(f"{key}.csv", "expected the path of a CSV file")
    elif value.get("name") is None:
        raise fail(key, "give name = (a built-in data set) or csv = (a file path)")
    else:
        kind = DATA_KEYS["name"].read(value["name"], f"{key}.name", fail)
    given = {name: option for name, option in value.items() if name != "name"}
    for name in given:  # a key for other data sets, before any value is read
        if problem := DATA_KEYS[name].applies(kind):
            raise fail(f"{key}.{name}", problem)
    if kind == "moons" and "seed" in given:  # numpy's RandomState, as scikit-learn: < 2³²
        whole(0, 2**32 - 1)(given["seed"], f"{key}.seed", fail)
    options = {
        DATA_FIELDS.get(name, name): DATA_KEYS[name].read(option, f"{key}.{name}", fail)
        for name, option in given.items()
    }
    return DataSpec(kind, **options)


def _is_column(value: object) -> bool:
    """A column's name or 0-based number (not `true`, though Python's bool is an int)."""
    return isinstance(value, str | int) and not isinstance(value, bool)


def _label(value: object, key: str, fail: Fail) -> str:
    if not _is_column(value):
        raise fail(key, "expected a column name or a 0-based column number")
    return str(value)


def _features(value: object, key: str, fail: Fail) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(_is_column(f) for f in value):
        raise fail(key, "expected a list of column names or numbers")
    return tuple(str(f) for f in value)


def _generated_only(kind: str) -> str | None:
    if kind == "csv":
        return "applies to generated data sets, not to a CSV file"
    return None if kind in GENERATED else f"the {kind} data set is fixed (four points)"


def _noisy_only(kind: str) -> str | None:
    if problem := _generated_only(kind):
        return problem
    return None if GENERATED[kind][1] is not None else f"the {kind} data set has no noise setting"


def _csv_only(kind: str) -> str | None:
    return None if kind == "csv" else "applies to CSV files only"


def _table(*keys: Key) -> dict[str, Key]:
    return {key.name: key for key in keys}


DATA_KEYS = _table(
    Key("name", choice(BUILTIN)),
    Key("csv", text("expected the path of a CSV file", 4096), applies=_csv_only),
    Key("size", optional(whole(1, MAX_POINTS)), applies=_generated_only),
    Key("seed", whole(0, 2**63 - 1), applies=_generated_only),
    Key("noise", optional(between(0, 10, "0 to 10")), applies=_noisy_only),
    Key("label", optional(_label), applies=_csv_only),
    Key("features", optional(_features), applies=_csv_only),
)
DATA_FIELDS = {"csv": "path"}  # read only where given: `gradviz.data.DataSpec` has the defaults

NO_LAYERS = "missing: give the layer sizes, e.g. layers = [2, 4, 1]"
NO_DATA = 'missing: say which data set to train on, e.g. data = "xor"'


def _mode(update: tuple[str, int | None]) -> dict:
    return {"update": update[0], "batch_size": update[1]}


SPEC_KEYS = _table(  # in the order errors list them and to_dict writes them
    Key("name", text("expected a short text", 100), "network"),
    Key("layers", _layers, missing=NO_LAYERS, write=lambda spec: list(spec.layers)),
    Key("activation", _activation_list, "sigmoid", write=lambda s: list(s.activations[:-1])),
    # default: the loss's (sigmoid; linear for hinge), see the rule `_activations`
    Key("output_activation", optional(_activation), write=lambda s: s.activations[-1]),
    Key("init", choice(INITS), "default"),
    Key("loss", choice(LOSSES), "mse"),
    Key("data", _data, missing=NO_DATA, write=lambda spec: spec.data.to_dict()),
    Key("epochs", whole(1, MAX_EPOCHS), 1000),
    Key("learning_rate", positive, 0.5),
    Key("update", _update, "full", into=_mode, write=lambda spec: spec.update_text),
    Key("clip_value", optional(positive), always=False),
    Key("clip_norm", optional(positive), always=False),
    Key("seed", whole(0, 2**63 - 1), 0),
    Key("record_every", optional(whole(1, MAX_EPOCHS)), always=False),
    Key("l2", between(0, 1e3, "0 to 1000 (e.g. 1e-4)"), 0.0, always=False),
    Key("lr_schedule", choice(LR_SCHEDULES), "constant", always=False),
    Key("lr_end", optional(between(0, 1e6, "0 to 1e6")), always=False),
)
SPEC_FIELDS = [f.name for f in fields(Spec) if f.name not in ("base_dir", "locate")]


# -- the rules between keys, after each key is read ----------------------------------------


def _activations(v: dict, fail: Fail) -> dict:
    """One activation per weight layer, the output's by default the loss's."""
    hidden = len(v["layers"]) - 2
    given, output = v["activation"], v["output_activation"]
    if isinstance(given, str):
        given = (given,) * hidden
    elif len(given) == hidden + 1:
        if output is not None and output != given[-1]:
            raise fail("output_activation", "also given as the last item of activation")
        return {"activations": given}
    elif len(given) != hidden:
        raise fail(
            "activation",
            f"{len(given)} activations for {hidden} hidden layer(s): give one name for all "
            f"of them, a list of {hidden}, or {hidden + 1} including the output",
        )
    return {"activations": (*given, output or LOSS_FUNCTIONS[v["loss"]].default_output)}


def _bce_needs_a_probability(v: dict, fail: Fail) -> None:
    if v["loss"] == "bce" and v["activations"][-1] != "sigmoid":
        raise fail(
            "loss",
            f"bce needs a sigmoid output (a probability), not {v['activations'][-1]}: "
            'set output_activation = "sigmoid" or use loss = "mse"',
        )


def _hinge_needs_a_signed_score(v: dict, fail: Fail) -> None:
    """hinge reads the sign of the output: an output the op table marks never negative
    (sigmoid, relu, ...) makes every prediction +1 (XOR at 50% whatever the outputs)."""
    output = v["activations"][-1]
    op = ACTIVATIONS.get(output)
    if v["loss"] == "hinge" and op is not None and op.never_negative:
        raise fail(
            "loss",
            f"hinge needs a score that can be negative (its sign is the prediction), and a "
            f'{output} output never is: set output_activation = "linear" or use loss = "bce"',
        )


def _one_clipping(v: dict, fail: Fail) -> None:
    if v["clip_value"] is not None and v["clip_norm"] is not None:
        raise fail("clip_norm", "choose one of clip_value and clip_norm, not both")


def _records_bounded(v: dict, fail: Fail) -> None:
    every, epochs = v["record_every"], v["epochs"]
    if every is not None and epochs // every > MAX_RECORDS:
        raise fail(
            "record_every",
            f"every {every} of {epochs:,} epochs is more than {MAX_RECORDS:,} records; "
            f"use at least {math.ceil(epochs / MAX_RECORDS)}",
        )


def _schedule_has_an_end(v: dict, fail: Fail) -> None:
    if v["lr_end"] is not None and v["lr_schedule"] == "constant":
        raise fail("lr_end", 'applies to a schedule: add lr_schedule = "linear"')
    if v["lr_end"] is None and v["lr_schedule"] == "linear":
        raise fail("lr_schedule", "linear needs an end value: add lr_end = (e.g. 0.1)")


RULES: tuple[Callable[[dict, Fail], dict | None], ...] = (
    _activations,
    _bce_needs_a_probability,
    _hinge_needs_a_signed_score,
    _one_clipping,
    _records_bounded,
    _schedule_has_an_end,
)
