"""Data sets for the small networks: the logic gates, 2-D point clouds, and CSV files.

Every data set is binary classification: rows of features `X` (n, d) and a 0/1 target
`Y` (n,). Generated sets are deterministic given their size, noise and seed, so a saved
model only needs to remember those numbers to get its data back.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gradviz.errors import DataError, listing, quoted
from gradviz.files import read_capped

# Refused before anything is allocated: a few megabytes of floats at most.
MAX_POINTS = 100_000
MAX_FEATURES = 1_000
MAX_CSV_BYTES = 50_000_000

GATES: dict[str, tuple[float, float, float, float]] = {
    # targets for the inputs (0,0), (0,1), (1,0), (1,1)
    "xor": (0.0, 1.0, 1.0, 0.0),
    "and": (0.0, 0.0, 0.0, 1.0),
    "or": (0.0, 1.0, 1.0, 1.0),
}
# name -> (default size, default noise); None: the option does not apply
GENERATED: dict[str, tuple[int, float | None]] = {
    "circle": (80, None),
    "moons": (100, 0.1),
    "spiral": (100, 0.1),
}
BUILTIN = (*GATES, *GENERATED)


@dataclass(frozen=True)
class DataSpec:
    """Where a data set comes from: a built-in name with its options, or a CSV file."""

    name: str  # a built-in name, or "csv"
    size: int | None = None
    seed: int = 0
    noise: float | None = None
    path: str | None = None  # CSV file (as written in the spec)
    label: str | None = None  # CSV label column: a header name or a 0-based index
    features: tuple[str, ...] | None = None  # CSV feature columns (default: all others)

    def to_dict(self) -> dict:
        """Only the fields that apply, in plain JSON types."""
        out: dict = {"name": self.name}
        if self.name == "csv":
            out["csv"] = self.path  # the key a spec's [data] table uses
            if self.label is not None:
                out["label"] = self.label
            if self.features is not None:
                out["features"] = list(self.features)
            return out
        if self.name in GENERATED:
            out["size"] = self.resolved_size
            out["seed"] = self.seed
            if GENERATED[self.name][1] is not None:
                out["noise"] = self.resolved_noise
        return out

    @property
    def resolved_size(self) -> int:
        if self.size is not None:
            return self.size
        return GENERATED[self.name][0] if self.name in GENERATED else len(GATES[self.name])

    @property
    def resolved_noise(self) -> float:
        if self.noise is not None:
            return self.noise
        default = GENERATED.get(self.name, (0, None))[1]
        return 0.0 if default is None else default

    def describe(self) -> str:
        """A short name for tables: `xor`, `circle (seed 0)`, `points.csv`."""
        if self.name == "csv":
            return str(self.path)
        if self.name in GENERATED:
            return f"{self.name} (seed {self.seed})"
        return self.name


@dataclass(frozen=True)
class Dataset:
    """Features `X` (n, d) float64, targets `Y` (n,) of 0.0/1.0, and column names."""

    name: str
    X: np.ndarray
    Y: np.ndarray
    feature_names: tuple[str, ...]

    @property
    def size(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])


def load(spec: DataSpec, base: Path | None = None) -> Dataset:
    """The data set a spec names; CSV paths are relative to `base` (the spec's folder)."""
    if spec.name in GATES:
        X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
        return Dataset(spec.name, X, np.array(GATES[spec.name]), ("x0", "x1"))
    if spec.name in GENERATED:
        size = spec.resolved_size
        if not 1 <= size <= MAX_POINTS:
            raise DataError(f"data size {size} is out of range (1 to {MAX_POINTS:,})")
        X, Y = _GENERATORS[spec.name](size, spec.resolved_noise, spec.seed)
        return Dataset(spec.describe(), X, Y, ("x0", "x1"))
    if spec.name == "csv":
        if spec.path is None:
            raise DataError("a CSV data set needs a path")
        path = Path(spec.path)
        if base is not None and not path.is_absolute():
            path = base / path
        return read_csv(path, label=spec.label, features=spec.features)
    raise DataError(
        f"unknown data set {quoted(spec.name)}; built-in: {', '.join(BUILTIN)}, or a CSV file"
    )


# -- generated point clouds -------------------------------------------------------------


def _circle(n: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Points uniform in [-1.5, 1.5]², label 1 inside the unit circle (about 35% of them)."""
    X = np.random.default_rng(seed).uniform(-1.5, 1.5, size=(n, 2))
    Y = (np.sum(X * X, axis=1) < 1.0).astype(np.float64)
    return X, Y


def _moons(n: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's `make_moons(n, noise=noise, random_state=seed)`, point for point:
    half circles (cos t, sin t) labelled 0 and (1 − cos t, 1 − sin t − 0.5) labelled 1,
    shuffled, then noise added, both drawn from numpy's legacy `RandomState(seed)`."""
    n_out = n // 2
    n_in = n - n_out
    t_out = np.linspace(0, np.pi, n_out)
    t_in = np.linspace(0, np.pi, n_in)
    X = np.vstack(
        [
            np.append(np.cos(t_out), 1 - np.cos(t_in)),
            np.append(np.sin(t_out), 1 - np.sin(t_in) - 0.5),
        ]
    ).T
    Y = np.hstack([np.zeros(n_out), np.ones(n_in)])
    generator = np.random.RandomState(seed)
    indices = np.arange(n)
    generator.shuffle(indices)  # sklearn.utils.shuffle: a shuffled range, then indexing
    X, Y = X[indices], Y[indices]
    X = X + generator.normal(scale=noise, size=X.shape)
    return X, Y


def _spiral(n: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaved spiral arms, one per class (the CS231n set), angle noise `noise`."""
    rng = np.random.default_rng(seed)
    parts, labels = [], []
    for arm, count in enumerate((n - n // 2, n // 2)):
        r = np.linspace(0.05, 1.0, count)
        t = np.linspace(arm * math.pi, arm * math.pi + 3.0 * math.pi, count)
        t = t + rng.normal(0.0, noise, size=count)
        parts.append(np.stack([r * np.sin(t), r * np.cos(t)], axis=1))
        labels.append(np.full(count, float(arm)))
    return np.concatenate(parts), np.concatenate(labels)


_GENERATORS = {"circle": _circle, "moons": _moons, "spiral": _spiral}  # the GENERATED sets


# -- CSV --------------------------------------------------------------------------------


def read_csv(
    path: Path, *, label: str | None = None, features: tuple[str, ...] | None = None
) -> Dataset:
    """Feature columns and a 0/1 (or −1/1) label column (default: the last). A header row is
    detected by a cell that is not a number. Every problem names its line."""
    data = read_capped(path, MAX_CSV_BYTES, DataError, "CSV file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise DataError(f"{path}: not UTF-8 text (byte {error.start})") from None
    return parse_csv(text, str(path), label=label, features=features)


def parse_csv(
    text: str, name: str, *, label: str | None = None, features: tuple[str, ...] | None = None
) -> Dataset:
    """The CSV reader behind `read_csv`, on text already in memory."""
    import csv  # lazy: start-up (only a CSV data set needs it)

    lines = io.StringIO(text, newline=None)  # any line end: \n, \r\n, or \r alone (old Macs)
    try:
        rows = [(number, row) for number, row in enumerate(csv.reader(lines), 1)]
    except csv.Error as error:
        raise DataError(f"{name}: invalid CSV: {error}") from None
    rows = [(n, [cell.strip() for cell in row]) for n, row in rows if any(c.strip() for c in row)]
    if not rows:
        raise DataError(f"{name}: the CSV file has no rows")
    first_line, first = rows[0]
    has_header = any(_float(cell) is None for cell in first)
    header = first if has_header else [f"x{i}" for i in range(len(first))]
    body = rows[1:] if has_header else rows
    width = len(header)
    if width < 2:
        raise DataError(f"{name} line {first_line}: need at least one feature and a label column")
    if len(set(header)) != width:
        raise DataError(f"{name} line {first_line}: repeated column name in the header")
    for cell in header:
        if not cell.isprintable():  # names are printed to terminals: no escape sequences
            raise DataError(
                f"{name} line {first_line}: column name {quoted(cell)} holds control characters"
            )
    if not body:
        raise DataError(f"{name}: the CSV file has a header but no data rows")
    if len(body) > MAX_POINTS:
        raise DataError(f"{name}: {len(body):,} rows is more than the {MAX_POINTS:,} allowed")

    label_column = _column(label, header, name, "label") if label is not None else width - 1
    if features is None:
        feature_columns = [i for i in range(width) if i != label_column]
    else:
        feature_columns = [_column(f, header, name, "features") for f in features]
        if label_column in feature_columns:
            raise DataError(
                f"{name}: column {quoted(header[label_column])} is both label and feature"
            )
    if len(feature_columns) > MAX_FEATURES:
        raise DataError(f"{name}: more than {MAX_FEATURES} feature columns")

    X = np.empty((len(body), len(feature_columns)))
    Y = np.empty(len(body))
    first: dict[float, int] = {}  # the line of each label's first use: 0/1 or −1/1
    for r, (line, row) in enumerate(body):
        if len(row) != width:
            raise DataError(f"{name} line {line}: {len(row)} fields, expected {width}")
        for c, column in enumerate(feature_columns):
            X[r, c] = _number(row[column], name, line, header[column])
        target = _number(row[label_column], name, line, header[label_column])
        if target not in (-1.0, 0.0, 1.0):
            raise DataError(
                f"{name} line {line}: label {quoted(row[label_column])} in column "
                f"{quoted(header[label_column])} is not 0 or 1 (nor −1/1)"
            )
        first[target] = first.get(target) or line
        if -1.0 in first and 0.0 in first:
            raise DataError(
                f"{name} line {line}: labels 0 (line {first[0.0]}) and −1 (line "
                f"{first[-1.0]}) in one file: use 0/1, or −1/1"
            )
        Y[r] = 0.0 if target == -1.0 else target  # −1/1 labels (a signed loss's) as 0/1
    return Dataset(name, X, Y, tuple(header[c] for c in feature_columns))


def _float(cell: str) -> float | None:
    try:
        return float(cell)
    except ValueError:
        return None


CELL_QUOTE = 30  # characters of a bad cell an error quotes: the line names a path as well


def _number(cell: str, name: str, line: int, column: str) -> float:
    value = _float(cell)
    # not finite: nan, inf, or a number beyond float range (1e999)
    if value is None or not math.isfinite(value):
        raise DataError(
            f"{name} line {line}: {quoted(cell, CELL_QUOTE)} in column {quoted(column)} "
            f"is not {'a number' if value is None else 'finite'}"
        )
    return value


def _column(key: str, header: list[str], name: str, what: str) -> int:
    """A column by header name or 0-based index."""
    if key in header:
        return header.index(key)
    if key.isdigit() and int(key) < len(header):
        return int(key)
    raise DataError(f"{name}: {what} column {quoted(key)} not found; columns: {listing(header)}")
