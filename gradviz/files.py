"""Files, read and written safely: reading a user's file with a size cap, so that a huge
file (or a device that never ends) is refused before it fills memory (every problem one
error of the caller's class: a missing spec is a SpecError, a missing model a ModelError),
and writing one atomically (the old file or the whole new one, never half), never over
one of the command's own inputs (`refuse_inputs`). At the bottom
layer, so that the library (model.save) and the CLI's outputs write the same way."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from gradviz.errors import GradvizError, OutputError, WriteError, quoted, shortened


def read_capped(path: Path, limit: int, error: type[GradvizError], what: str) -> bytes:
    """The bytes of `path` (`what` names it in messages: "model file"), at most `limit`:
    a bigger file is refused by its size before it is read, and a file that says it is
    small but goes on (a pipe, a device, a file still growing) when `limit` bytes are in."""
    name = shortened(str(path))  # a name the user gave: cut in messages, as quotes are
    try:
        with path.open("rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size > limit:
                raise error(
                    f"{name}: {size:,} bytes is larger than the {limit:,} allowed for a {what}"
                )
            data = file.read(limit + 1)
    except FileNotFoundError:
        raise error(f"{name}: no such {what}") from None
    except IsADirectoryError:
        raise error(f"{name}: is a folder, not a {what}") from None
    except OSError as problem:
        raise error(f"{name}: cannot read: {problem.strerror or problem}") from None
    if len(data) > limit:
        raise error(f"{name}: more than the {limit:,} bytes allowed for a {what}")
    return data


def write_atomic(path: Path | str, data: bytes | str) -> None:
    """Write a file so that it is either the old one or the complete new one, never half.

    The data go to a temporary file in the same folder (same file system, so the
    rename is atomic), flushed to disk, then renamed over `path`. New files get the
    usual permissions (0666 less the umask); an existing file keeps its mode.

    A path the user cannot write to (no such folder, a folder, no permission, a
    read-only file system) is an OutputError (exit 2: choose another path); a write
    that fails on a usable path (disk full, I/O error) is a WriteError (exit 1).
    """
    import tempfile  # lazy: start-up

    path = Path(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    folder = path.parent if str(path.parent) else Path(".")
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as error:
        raise _write_failure(path, error) from None
    if mode is not None and stat.S_ISDIR(mode):
        raise OutputError(f"cannot write {quoted(str(path))}: it is a folder")
    if not folder.is_dir():
        raise OutputError(
            f"cannot write {quoted(str(path))}: folder {quoted(str(folder))} does not exist",
            hint="Create the folder first, or choose another path.",
        )
    mode = (mode & 0o7777) if mode is not None else 0o666 & ~_umask()
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as error:
        raise _write_failure(path, error, where=folder) from None
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException as error:  # includes KeyboardInterrupt: never leave a partial file
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError):
            raise _write_failure(path, error) from None
        raise


# The user's choice of path is at fault (exit 2: choose another); any other OSError is the
# machine failing on a usable path (disk full, quota, I/O error: exit 1).
_PATH_ERRNOS = frozenset(
    {
        errno.EACCES,
        errno.EPERM,
        errno.EROFS,
        errno.ENOENT,
        errno.ENOTDIR,
        errno.EISDIR,
        errno.ENAMETOOLONG,
        errno.ELOOP,
    }
)


def _write_failure(path: Path, error: OSError, *, where: Path | None = None) -> GradvizError:
    """The error to raise for an OSError while writing `path` (or creating a file in
    `where`, the folder)."""
    why = error.strerror or str(error)
    target = f"to {quoted(str(where))}" if where is not None else quoted(str(path))
    if error.errno in _PATH_ERRNOS:
        return OutputError(f"cannot write {target}: {why}", hint="Choose another path.")
    return WriteError(f"cannot write {target}: {why}")


def _umask() -> int:
    # The only portable way to read the umask is to set it; put it straight back.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def refuse_inputs(outputs: Iterable[str], inputs: Iterable[str | Path]) -> None:
    """Refuse an output path that names one of the inputs (it would be overwritten)."""
    sources = []
    for path in inputs:
        try:
            sources.append(Path(path).resolve())
        except OSError:
            continue
    for output in outputs:
        if output == "-":
            continue
        target = Path(output).resolve()
        for source in sources:
            if target == source or (
                target.exists() and source.exists() and target.samefile(source)
            ):
                raise OutputError(
                    f"refusing to write {quoted(output)}: it is an input of this command",
                    hint="Choose another output file name.",
                )
