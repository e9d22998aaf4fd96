"""Where a fence's files are: a relative path is looked for beside the page first, then in
the site's `base` folder; every file a command reads (the ones the body names, and the
data a spec or a saved model names in turn) must lie inside the docs project once
symlinks are resolved. A docs build runs on machines that hold secrets: a fence must not
make it read `/proc/self/environ` and put it on a page.

Files are hashed for the cache in chunks, their size checked first, so that a huge file
costs neither memory nor time before it is refused.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

# The most a fence's file may hold: gradviz's largest cap (a saved model's).
MAX_FILE_BYTES = 100_000_000
CHUNK_BYTES = 1 << 20
# Suffixes of the files that name more files (a spec's or a model's data).
NAMING_SUFFIXES = (".json", ".toml")
# A word that names a file when it is not found (for "looked beside the page, …").
FILE_SUFFIXES = (".json", ".toml", ".csv", ".expr", ".txt")


class PathError(Exception):
    """A path a fence may not use, or a file it cannot hash (`message` says which)."""


@dataclass(frozen=True)
class Places:
    """Where a fence's relative paths lead: the page's folder (first), then `base`; and
    the folders (`roots`) no file it reads may lie outside."""

    base: Path
    page: Path | None = None
    roots: tuple[Path, ...] = ()
    shown_root: Path | None = None  # folders in messages are shown relative to this

    def allowed(self) -> tuple[Path, ...]:
        return tuple(root.resolve() for root in (self.roots or (self.base,)))

    def name(self, path: Path) -> str:
        """A file as messages and the cache name it: from the project's folder."""
        root = (self.shown_root or self.allowed()[0]).resolve()
        try:
            return str(path.resolve().relative_to(root))
        except (ValueError, OSError, RuntimeError):
            return str(path)

    def show(self, path: Path) -> str:
        """A folder as messages name it (`docs/manual/`)."""
        root = (self.shown_root or self.allowed()[0]).resolve()
        try:
            shown = path.resolve().relative_to(root)
        except ValueError:
            return str(path)
        return f"{shown}/" if str(shown) != "." else "./"


@dataclass
class Found:
    """The files one command line reads, and the folder it runs from."""

    folder: Path
    words: list[str]
    files: list[Path] = field(default_factory=list)  # resolved, each inside the project
    missing: list[str] = field(default_factory=list)  # names that look like files, not found


def _candidates(value: str) -> list[str]:
    """The paths a value may name: itself, or after `@` (an expression file)."""
    if not value or len(value) > 4096 or "\x00" in value:
        return []
    return [value[1:]] if value.startswith("@") and len(value) > 1 else [value]


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:  # a name too long, a loop of links
        return False


def locate(values: Iterable[str], words: list[str], places: Places) -> Found:
    """Each value that names a file, found beside the page first, then in `base`; refused
    (PathError) when it leads outside the docs project. The command runs from the page's
    folder when a file it names is there (the other names rewritten to reach `base`),
    else from `base`."""
    beside: dict[str, Path] = {}
    in_base: dict[str, Path] = {}
    absolute: list[Path] = []
    missing: list[str] = []
    for value in values:
        for name in _candidates(value):
            path = Path(name)
            if path.is_absolute():
                absolute.append(path)
            elif places.page is not None and _exists(places.page / path):
                beside[name] = places.page / path
            elif _exists(places.base / path):
                in_base[name] = places.base / path
            elif "/" in name or name.lower().endswith(FILE_SUFFIXES) or value.startswith("@"):
                missing.append(name)
    named = [(str(path), path) for path in absolute]
    named += [(name, path) for found in (beside, in_base) for name, path in found.items()]
    files = [_inside(path, places, name) for name, path in named]
    if beside and places.page is not None:
        folder = places.page
        words = [_rewritten(word, in_base, places.page) for word in words]
    else:
        folder = places.base
    files += [_inside(p, places, places.name(p)) for p in _named_by(files, places)]
    return Found(folder, words, sorted(set(files)), missing)


def _rewritten(word: str, in_base: dict[str, Path], folder: Path) -> str:
    """A word naming a file found only in `base`, as a path from `folder`."""
    for name, path in in_base.items():
        there = os.path.relpath(path, folder)
        if word in (name, f"@{name}"):
            return word.replace(name, there, 1)
        if word.startswith("--") and word.endswith(f"={name}"):
            return word[: len(word) - len(name)] + there
    return word


def _inside(path: Path, places: Places, name: str) -> Path:
    """`path` resolved (symlinks followed), refused when outside every root (`name`: the
    path as the fence wrote it)."""
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):
        raise PathError(f"{name}: cannot be resolved") from None
    if not any(resolved.is_relative_to(root) for root in places.allowed()):
        raise PathError(
            f"{name}: outside the docs project; a fence reads only files in the project's "
            "folder (where mkdocs.yml or conf.py is) and in its base folder"
        )
    return resolved


def _named_by(files: list[Path], places: Places) -> list[Path]:
    """The files that specs and saved models among `files` name in turn (their data)."""
    naming = [p for p in files if p.suffix.lower() in NAMING_SUFFIXES and p.is_file()]
    if not naming:
        return []
    from gradviz.measure import input_files  # lazy: start-up (numpy: only for specs, models)

    named = []
    for path in naming:
        try:
            size = path.stat().st_size
        except OSError:
            continue
        if size > MAX_FILE_BYTES:
            continue  # refused by its size when hashed
        try:
            found = input_files(str(path))
        except Exception:  # a file gradviz cannot read: its error comes when it runs
            continue
        named += [Path(p) for p in found if Path(p) != path and _exists(Path(p))]
    return named


def digest(path: Path, limit: int = MAX_FILE_BYTES, name: str | None = None) -> str:
    """The SHA-256 of a file, read in chunks: its size is checked before any byte is read,
    and reading stops when `limit` bytes are in (a file that grows, a device). `name`:
    the file as messages name it."""
    hasher = hashlib.sha256()
    shown = name or str(path)
    try:
        with path.open("rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise PathError(f"{shown}: not a regular file")
            if info.st_size > limit:
                raise PathError(
                    f"{shown}: {info.st_size:,} bytes is larger than the {limit:,} a fence reads"
                )
            read = 0
            while chunk := file.read(CHUNK_BYTES):
                read += len(chunk)
                if read > limit:
                    raise PathError(f"{shown}: more than the {limit:,} bytes a fence reads")
                hasher.update(chunk)
    except OSError as problem:
        raise PathError(f"{shown}: cannot read: {problem.strerror or problem}") from None
    return hasher.hexdigest()
