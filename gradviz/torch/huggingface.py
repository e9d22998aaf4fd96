"""gradviz in the Hugging Face Trainer: `Trainer(..., callbacks=[gradviz.torch.huggingface.
Watch(every=50, save="run.json", fail_on=("nan",))])` records the model's gradients layer by
layer, writes the run file on the main process when training ends, prints the table and
verdict once, and stops training with `StatusFound` when a `fail_on` status appears.

When: `on_pre_optimizer_step`, the Trainer's only callback between the last accumulated
backward pass and `optimizer.step()`: after accumulation and the all-reduce, and after the
Trainer has clipped the gradients to `max_grad_norm` (1.0 unless set; transformers'
trainer.py clips before it calls the callback). So the table shows the clipped
gradients; the recorder also reads their norms at the end of the backward pass, before
clipping, so the statuses judge them unclipped and the verdict says by how much
clipping scaled them.

The loss curve is the Trainer's own logged loss (`logging_steps`; the mean over the
steps since the last log, and over the processes). Imports `transformers` when this
module is imported: `import gradviz.torch` never does.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from gradviz.torch.session import DEFAULT_EVERY, Recorder, Session


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

    @property
    def recorder(self) -> Recorder | None:
        """The recorder (`history()`, `diagnosis()`, `run()`, `table()`): None before train."""
        return self.session.recorder

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        model = kwargs.get("model")
        if model is not None:
            self.session.start(model)

    def on_pre_optimizer_step(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        failure = self.session.step()
        if failure is not None:
            raise failure

    def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
        if not isinstance(logs, dict) or self.session.recorder is None:
            return
        if "loss" in logs:
            self.session.recorder.log(loss=float(logs["loss"]))

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.session.finish(rank_zero=bool(getattr(state, "is_world_process_zero", True)))
        self.session.close()
