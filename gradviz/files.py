"""Reading a user's file with a size cap, so that a huge file (or a device that never
ends) is refused before it fills memory. Every problem is one error of the caller's
class (a missing spec is a SpecError, a missing model a ModelError)."""

from __future__ import annotations

import os
from pathlib import Path

from gradviz.errors import GradvizError, shortened


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
