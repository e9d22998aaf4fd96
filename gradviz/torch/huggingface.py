"""gradviz in the Hugging Face Trainer: `Trainer(..., callbacks=[gradviz.torch.huggingface.
Watch(every=50, save="run.json", fail_on=("nan",))])` records the model's gradients layer by
layer, writes the run file on the main process when training ends, prints the table and
verdict once, and stops training with `StatusFound` when a `fail_on` status appears.

When: `on_pre_optimizer_step`, the Trainer's only callback between the last accumulated
backward pass and `optimizer.step()`: after accumulation and the all-reduce, and after the
Trainer has clipped the gradients to `max_grad_norm` (1.0 unless set; transformers'
trainer.py clips before it calls the callback). So with clipping on, the numbers read
are the clipped gradients: a line under the verdict says so, names the recorded steps
where clipping scaled them (their total norm is then max_grad_norm), and by how much
where the Trainer logged its unclipped `grad_norm` for that step. `max_grad_norm=0`
reads them unclipped.

The loss curve is the Trainer's own logged loss (`logging_steps`; the mean over the
steps since the last log, and over the processes). Imports `transformers` when this
module is imported: `import gradviz.torch` never does.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import torch
from transformers import TrainerCallback

from gradviz.numbers import fmt
from gradviz.torch.session import DEFAULT_EVERY, Recorder, Session

# A total gradient norm this close to max_grad_norm (clip_grad_norm_ scales by
# max_norm / (norm + 1e-6)) was clipped to it.
CLIPPED_WITHIN = 1e-4


class Watch(TrainerCallback):
    """A Hugging Face Trainer callback: gradviz's per-layer table, statuses and verdict.

    every:   record one optimizer step in `every` (step 0 is recorded).
    save:    the run file written by the main process when training ends (None: none).
    fail_on: statuses that stop training (`StatusFound`, naming the status, layer and
             step) at the recorded step where one appears: "nan", "exploding", "dead",
             "vanishing", ... as `gradviz grads --fail-on` takes them; () for none.
    show:    print the table and verdict at the end (main process).
    """

    def __init__(
        self,
        every: int = DEFAULT_EVERY,
        save: str | Path | None = "run.json",
        fail_on: Iterable[str] | str | None = ("nan",),
        *,
        show: bool = True,
        width: int | None = None,
    ) -> None:
        self.session = Session(every, save, fail_on, show=show, width=width)
        self.max_grad_norm = 0.0
        self._model: torch.nn.Module | None = None
        self.clipped: dict[int, float | None] = {}  # recorded step -> the clipping's factor

    @property
    def recorder(self) -> Recorder | None:
        """The recorder (`history()`, `diagnosis()`, `run()`, `table()`): None before train."""
        return self.session.recorder

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        model = kwargs.get("model")
        if model is None:
            return
        self._model = model
        self.max_grad_norm = float(getattr(args, "max_grad_norm", 0.0) or 0.0)
        self.clipped = {}
        self.session.start(model)

    def on_pre_optimizer_step(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        step = self.session.steps
        if self.max_grad_norm > 0 and step % self.session.every == 0 and self._model is not None:
            total = _total_norm(self._model)
            if total >= self.max_grad_norm * (1 - CLIPPED_WITHIN):
                self.clipped[step] = None
        failure = self.session.step()
        if failure is not None:
            raise failure

    def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
        if not isinstance(logs, dict) or self.session.recorder is None:
            return
        if "loss" in logs:
            self.session.recorder.log(loss=float(logs["loss"]))
        step = state.global_step - 1  # (logged after the step: global_step counts it)
        norm = logs.get("grad_norm")
        if step in self.clipped and isinstance(norm, int | float) and norm > 0:
            self.clipped[step] = self.max_grad_norm / float(norm)

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.session.notes = self._clip_notes()
        self.session.finish(rank_zero=bool(getattr(state, "is_world_process_zero", True)))
        self.session.close()

    def _clip_notes(self) -> list[str]:
        if self.max_grad_norm <= 0:
            return []
        limit = fmt(self.max_grad_norm)
        if not self.clipped:
            return [
                f"gradients read after the Trainer's clipping (max_grad_norm={limit}); no "
                "recorded step was clipped"
            ]
        steps = ", ".join(
            str(step) if factor is None else f"{step} (×{fmt(factor, 3)})"
            for step, factor in sorted(self.clipped.items())
        )
        return [
            f"gradients read after the Trainer's clipping (max_grad_norm={limit}): it scaled "
            f"them at recorded steps {steps}; set max_grad_norm=0 to see them unclipped"
        ]


def _total_norm(model: torch.nn.Module) -> float:
    """‖g‖₂ over every parameter's gradient (what clip_grad_norm_ limits)."""
    grads = [p.grad.detach() for p in model.parameters() if p.grad is not None]
    if not grads:
        return 0.0
    norms = torch._foreach_norm(grads)
    return float(torch.linalg.vector_norm(torch.stack(norms).to(torch.float64)))
