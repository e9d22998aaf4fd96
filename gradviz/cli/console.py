"""The one way every command makes its rich consoles.

Colour only on a terminal without NO_COLOR; there, rich fits the output to its width.
Piped or redirected, tables are laid out PIPED_WIDTH columns wide (or COLUMNS if wider),
so none drops a column, text is never wrapped (a sentence is one line), and lines carry
no trailing spaces (rich pads cells): `gradviz … > file` keeps every number whole,
diffs cleanly, and `grep 'x$'` finds what it should.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING

from rich.console import Console

from gradviz.numbers import fmt

if TYPE_CHECKING:
    from gradviz.train import OnEpoch
PIPED_WIDTH = 240  # the widest table (grads, 19 columns) fits


def stdout_console(soft_wrap: bool = False) -> Console:
    """stdout. `soft_wrap=True`: rich never breaks a line (one line per item)."""
    console = Console(highlight=False, soft_wrap=soft_wrap)
    if not console.is_terminal:
        console = Console(
            file=_StrippedLines(console.file),
            highlight=False,
            soft_wrap=True,
            width=max(console.width, PIPED_WIDTH),
        )
    return console


_TRAILING = re.compile(r"[ \t]+(?=\n)")


class _StrippedLines:
    """A text file that drops the spaces at the end of every line written to it. Spaces at
    the end of one write are held back until the next shows whether a newline follows."""

    def __init__(self, file: IO[str]) -> None:
        self._file = file
        self._held = ""

    def write(self, text: str) -> int:
        text = self._held + text
        kept = text.rstrip(" \t")
        self._held = text[len(kept) :]
        self._file.write(_TRAILING.sub("", kept))
        return len(text)

    def flush(self) -> None:
        self._file.flush()

    def __getattr__(self, name: str) -> object:  # encoding, isatty, fileno: the real file's
        return getattr(self._file, name)


@contextmanager
def epoch_progress(epochs: int) -> Iterator[OnEpoch | None]:
    """While training runs: a progress bar on stderr (on a terminal), and the `on_epoch`
    callback that moves it (None: no bar)."""
    err = Console(stderr=True, highlight=False)
    if not err.is_terminal:
        yield None
        return
    from rich import progress as bar  # lazy: start-up (only while training, on a terminal)

    from gradviz.render.training import percent  # lazy: start-up

    progress = bar.Progress(
        bar.TextColumn("epoch {task.completed:>7.0f}/{task.total:.0f}"),
        bar.BarColumn(),
        bar.TaskProgressColumn(),
        bar.TextColumn("loss {task.fields[loss]}  accuracy {task.fields[accuracy]}"),
        bar.TimeRemainingColumn(),
        console=err,
        transient=True,
    )
    task = progress.add_task("train", total=epochs, loss="—", accuracy="—")
    step = max(1, epochs // 200)

    def on_epoch(epoch: int, loss: float, accuracy: float) -> None:
        if epoch % step == 0 or epoch == epochs:
            progress.update(task, completed=epoch, loss=fmt(loss), accuracy=percent(accuracy))

    with progress:
        yield on_epoch
