"""Files, read and written safely: a user's file read with a size cap (an endless device
refused before it fills memory), a file written atomically, never over one of the
command's inputs nor twice over one file; the library and the CLI write the same way."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable, Sequence
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


def refuse_clashes(
    outputs: Sequence[tuple[str, str | Path | None]], inputs: Iterable[str | Path | None] = ()
) -> None:
    """Refuse, before any work, an output that names an input of the command (it would be
    overwritten), or two that name one file. `outputs` pairs each path (None: not asked
    for; `-`: stdout) with its option as a keyword (`curves`; the CLI says `--curves`).
    Paths are compared resolved (a symlink, `./p.svg`), and by inode (a hard link)."""
    sources = [Path(path) for path in inputs if path is not None]
    seen: list[tuple[str, Path | None]] = []  # (option, path; None for stdout)
    for option, given in outputs:
        if given is None:
            continue
        path = None if str(given) == "-" else Path(given)
        if path is not None and any(_same_file(path, source) for source in sources):
            raise OutputError(
                f"refusing to write {quoted(str(given))}: it is an input of this command",
                hint=f"Choose another file name for {{{option}}}.",
                options=(option,),
            )
        for other, earlier in seen:
            if (path is None) == (earlier is None) and (
                path is None or _same_file(path, earlier)  # type: ignore[arg-type]
            ):
                shown = "'-' (stdout)" if path is None else quoted(str(given))
                both = "" if other == option else f" ({{{other}}} and {{{option}}})"
                raise OutputError(
                    f"{shown} is given twice as an output{both}",
                    hint="Give each output a file of its own.",
                    options=(other, option),
                )
        seen.append((option, path))


def _same_file(a: Path, b: Path) -> bool:
    """One file under two names: the same path once resolved, or the same inode."""
    try:
        if a.resolve() == b.resolve():
            return True
    except (OSError, RuntimeError):  # a name too long, a symlink loop: compare as given
        if os.path.abspath(a) == os.path.abspath(b):
            return True
    try:
        return a.exists() and b.exists() and a.samefile(b)
    except OSError:
        return False


def write_atomic(path: Path | str, data: bytes | str) -> None:
    """Write a file so that it is either the old one or the complete new one, never half
    (a temporary file in the same folder, flushed, renamed over `path`). A new file gets
    0666 less the umask, an existing one keeps its mode."""
    import tempfile  # lazy: start-up

    path = Path(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    folder = path.parent
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
    if mode is None:  # a new file: 0666 less the umask (read by setting it, put back at once)
        os.umask(umask := os.umask(0o022))
        mode = 0o666 & ~umask
    mode &= 0o7777
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
_PATH_ERRNOS = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT, errno.ENOTDIR}
_PATH_ERRNOS |= {errno.EISDIR, errno.ENAMETOOLONG, errno.ELOOP}


def _write_failure(path: Path, error: OSError, *, where: Path | None = None) -> GradvizError:
    """The error for an OSError writing `path` (or creating a file in folder `where`)."""
    why = error.strerror or str(error)
    if where is not None:  # the folder refused a new file (/proc, say): say which file
        message = (
            f"cannot write {quoted(str(path))}: {quoted(str(where))} takes no new file ({why})"
        )
    else:
        message = f"cannot write {quoted(str(path))}: {why}"
    if error.errno in _PATH_ERRNOS:
        return OutputError(message, hint="Choose another path.")
    return WriteError(message)
