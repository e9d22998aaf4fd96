"""What every training-framework callback does (`gradviz.torch.lightning.Watch`,
`gradviz.torch.huggingface.Watch`), apart from the framework's hooks: one recorder that
records when the callback says (`watch(..., manual=True)`), the loss of each optimizer
step, the `fail_on` check at each recorded step, and at the end the run file (rank 0) and
the table and verdict printed once.

The callbacks name the moment; this module never imports a framework, only torch.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

import torch
from rich.console import Console

from gradviz.errors import InputError, OutputError, StatusFound, quoted
from gradviz.stats import STATUSES, Diagnosis
from gradviz.torch.recorder import DEFAULT_EVERY, Recorder, watch

# What `fail_on` accepts (the words of `gradviz grads --fail-on`), and the status each means.
FAIL_ON = {status.lower(): status for status in STATUSES if status != "ok"}


def fail_on_statuses(words: Iterable[str] | str | None) -> tuple[str, ...]:
    """The statuses named by `fail_on` (`("nan", "exploding")`), or an InputError naming
    the first word that is not one."""
    if words is None:
        return ()
    if isinstance(words, str):
        words = (words,)
    found = []
    for word in words:
        key = word.strip().lower() if isinstance(word, str) else None
        if key not in FAIL_ON:
            raise InputError(
                f"watch: fail_on: {word!r} is not a status; choose from {', '.join(FAIL_ON)}"
            )
        found.append(FAIL_ON[key])
    return tuple(found)


def first_failure(diagnosis: Diagnosis, guarded: tuple[str, ...]) -> tuple[str, str, str] | None:
    """(status, layer, why) of the first layer, in the table's order, whose status is one
    of `guarded`."""
    for layer in diagnosis.layers:
        if layer.status in guarded:
            return layer.status, layer.name, layer.reason
    return None


class Session:
    """One training run watched from a callback: `start(model)` once the model is set up,
    `loss(value)` for each batch's loss, `step()` at each optimizer step (once the
    gradients are final), `finish()` at the end of training."""

    def __init__(
        self,
        every: int = DEFAULT_EVERY,
        save: str | Path | None = "run.json",
        fail_on: Iterable[str] | str | None = ("nan",),
        show: bool = True,
        file: TextIO | None = None,
        width: int | None = None,
    ) -> None:
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise InputError(f"watch: every must be a whole number ≥ 1, got {every!r}")
        if save is not None and not isinstance(save, str | Path):
            raise InputError(f"watch: save must be a path or None, got {type(save).__name__}")
        self.every = every
        self.save = None if save is None else _writable(Path(save))
        self.fail_on = fail_on_statuses(fail_on)
        self.show = show
        self.file = file
        self.width = width
        self.recorder: Recorder | None = None
        self.steps = 0  # optimizer steps seen
        self.notes: list[str] = []  # lines printed under the verdict (how it was read)
        self._losses: list[torch.Tensor | float] = []
        self._finished = False
        self._checked = 0  # recorded steps fail_on has looked at

    def start(self, model: torch.nn.Module) -> Recorder:
        if self.recorder is not None:  # (a second fit with the same callback: a new run)
            self.recorder.close()
        self.recorder = watch(model, every=self.every, manual=True)
        self.steps = 0
        self._losses = []
        self._finished = False
        self._checked = 0
        return self.recorder

    def loss(self, value: object) -> None:
        """A batch's loss (a tensor kept on its device, or a number); those of one
        optimizer step's batches are added up at `log_step` (Lightning divides each
        micro-batch's loss by the number accumulated, so their sum is the step's mean)."""
        if isinstance(value, torch.Tensor):
            self._losses.append(value.detach())
        elif isinstance(value, int | float):
            self._losses.append(float(value))

    def log_step(self) -> None:
        """The losses given since the last optimizer step, as the curve's point."""
        if self.recorder is None or not self._losses:
            return
        total = self._losses[0]
        for value in self._losses[1:]:
            total = total + value
        self._losses = []
        self.recorder.log(loss=total)

    def step(self) -> StatusFound | None:
        """Record (every `every`-th optimizer step, and the first step whose gradients hold
        a NaN/inf whatever the cadence) and check `fail_on` on each step recorded; the
        failure found, with the run saved and the table printed, or None."""
        if self.recorder is None:
            return None
        self.recorder.step()
        self.steps += 1
        if not self.fail_on:
            return None
        history = self.recorder.history()  # (nothing to convert unless a step was recorded)
        if len(history) == self._checked:
            return None
        self._checked = len(history)
        step, diagnosis = history[-1]
        found = first_failure(diagnosis, self.fail_on)
        if found is None:
            return None
        status, layer, why = found
        where = f"; the run is in {self.save}" if self.save is not None else ""
        because = f" ({why})" if why else ""
        error = StatusFound(
            f"gradviz stopped training: layer {layer} is {status} at step {step}{because}, "
            f"a status named by fail_on{where}",
            status=status,
            layer=layer,
            step=step,
        )
        self.finish()
        return error

    def finish(self, rank_zero: bool | None = None) -> None:
        """Write the run file (rank 0 writes) and print the table and verdict, once."""
        if self.recorder is None or self._finished:
            return
        self._finished = True
        if not self.recorder.history():
            return
        if self.save is not None:
            self.recorder.save(self.save)
        if rank_zero is None:
            rank_zero = _rank() == 0
        if self.show and rank_zero:
            console = Console(file=self.file or sys.stdout, width=self.width)
            console.print(self.recorder.report())
            for note in self.notes:  # (as the verdict's bullets: wrapped, indented)
                lines = textwrap.wrap(note, max(20, console.width - 2))
                text = "\n  ".join(lines)
                console.print(f"• {text}", markup=False, highlight=False, soft_wrap=True)

    def close(self) -> None:
        if self.recorder is not None:
            self.recorder.close()


def _writable(path: Path) -> Path:
    """`path`, or the OutputError its writing would raise at the end of training (a folder,
    or in a folder that does not exist), said before training starts."""
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise OutputError(f"watch: cannot write save={quoted(str(path))}: it is a folder")
    if not folder.is_dir():
        raise OutputError(
            f"watch: cannot write save={quoted(str(path))}: folder {quoted(str(folder))} "
            "does not exist",
            hint="Create the folder first, or choose another path.",
        )
    return path


def _rank() -> int:
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    return 0
