"""gradviz in Lightning: `Trainer(callbacks=[gradviz.torch.lightning.Watch(every=50,
save="run.json", fail_on=("nan",))])` records the LightningModule's gradients layer by
layer, writes the run file on rank 0 when `fit` ends, prints the table and verdict once,
and stops training with `StatusFound` when a `fail_on` status appears.

When: Lightning runs `optimizer.step(closure)`, and the closure runs `training_step`,
`backward` and then `on_before_optimizer_step`, before `configure_gradient_clipping`
(lightning/pytorch/plugins/precision/precision.py, `_after_closure`). So that hook is
where the gradients are final: after the last accumulated batch and after DDP's
all-reduce (which ends inside `backward`), and before `gradient_clip_val` clips them:
the numbers read are the unclipped gradients. (An optimizer step pre-hook would fire
before the closure, and read the previous step's gradients.)

Imports `lightning` (or, without it, `pytorch_lightning`) when this module is imported:
`import gradviz.torch` never does.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

try:
    from lightning.pytorch import Callback
except ImportError:  # the older package name of the same framework
    from pytorch_lightning import Callback  # type: ignore[no-redef]

from gradviz.torch.session import DEFAULT_EVERY, Recorder, Session

CLIP_NOTE = (
    "gradients read before Lightning's clipping (gradient_clip_val={value}): the table "
    "shows them unclipped"
)


class Watch(Callback):
    """A Lightning callback: gradviz's per-layer table, statuses and verdict for `fit`.

    every:   record one optimizer step in `every` (step 0 is recorded).
    save:    the run file written on rank 0 at the end of `fit` (None: none), for
             `gradviz grads` and `gradviz inspect`.
    fail_on: statuses that stop training (`StatusFound`, naming the status, layer and
             step) at the recorded step where one appears: "nan", "exploding", "dead",
             "vanishing", ... as `gradviz grads --fail-on` takes them; () for none.
    show:    print the table and verdict at the end (rank 0).
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
        super().__init__()
        self.session = Session(every, save, fail_on, show=show, width=width)
        self._stepped = False  # an optimizer step ran in the current batch

    @property
    def recorder(self) -> Recorder | None:
        """The recorder (`history()`, `diagnosis()`, `run()`, `table()`): None before fit."""
        return self.session.recorder

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        # after the sanity check's validation batches: their forward passes are not training
        self.session.start(pl_module)
        clip = getattr(trainer, "gradient_clip_val", None)
        self.session.notes = [CLIP_NOTE.format(value=clip)] if clip else []

    def on_before_optimizer_step(self, trainer: Any, pl_module: Any, optimizer: Any) -> None:
        self._stepped = True
        failure = self.session.step()
        if failure is not None:
            raise failure

    def on_train_batch_end(
        self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        loss = outputs.get("loss") if isinstance(outputs, dict) else outputs
        if loss is not None:
            self.session.loss(loss)
        if self._stepped:  # the last accumulated batch of a step: its loss is the sum
            self.session.log_step()
            self._stepped = False

    def on_fit_end(self, trainer: Any, pl_module: Any) -> None:
        self.session.finish(rank_zero=trainer.is_global_zero)

    def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
        self.session.close()

    def teardown(self, trainer: Any, pl_module: Any, stage: str) -> None:
        if stage == "fit":
            self.session.close()
