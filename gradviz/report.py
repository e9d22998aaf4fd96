"""The documents `--json` prints (`*_document` below, written by `numbers.dumps`), built by the
library: the CLI only chooses one to print, so a script or a notebook gets the same
numbers from Python as from the command line."""

from __future__ import annotations

from collections.abc import Sequence

from gradviz.data import Dataset
from gradviz.errors import OptionWords, keyword
from gradviz.measure import Measurement
from gradviz.model import Model
from gradviz.numbers import dumps as dumps  # these documents' writer, under its old name too
from gradviz.stats import Diagnosis, diagnose, failures, history, parameter_grads, verdict
from gradviz.train import Diverged, Evaluation, Result, evaluate

JSON_PREDICTIONS = 1000  # examples listed in a document's "predictions"


def predictions(data: Dataset, outputs: Sequence[float]) -> list[dict]:
    """Input, target and output of the first `JSON_PREDICTIONS` examples."""
    return [
        {"input": data.X[i].tolist(), "target": float(data.Y[i]), "output": outputs[i]}
        for i in range(min(data.size, JSON_PREDICTIONS))
    ]


def train_document(result: Result, saved: str | None = None) -> dict:
    """What `train --json` prints: the spec, the curves, the predictions, the last
    gradient statistics and the verdict; `stopped` says why training stopped early,
    `saved` where the model was saved (None: not saved)."""
    last_epoch, last_samples = result.history.snapshots[-1]
    diagnosis = diagnose(last_samples, epoch=last_epoch)  # type: ignore[arg-type]
    return {
        "spec": result.spec.to_dict(),
        "epochs_run": result.history.epochs_run,
        "final": {"loss": result.final.loss, "accuracy": result.final.accuracy},
        "loss": result.history.loss,
        "accuracy": result.history.accuracy,
        "stopped": result.history.stopped,
        # with clipping, per epoch: updates, how many clipped, mean ‖g‖ before and after
        "clipping": result.history.clipping_series(),
        "predictions": predictions(result.dataset, result.final.outputs),
        "gradients": diagnosis.to_dict(),
        "verdict": verdict(diagnosis, history(result.history.snapshots)),
        "saved": saved,
    }


def diverged_document(error: Diverged, words: OptionWords = keyword) -> dict:
    """What `train --json` prints for a run that stopped at a divergence: the training
    so far, `stopped` the error's own words (the CLI's `words` name `--keep-going`)."""
    return train_document(error.result) | {"stopped": error.render(words).replace("\n", " ")}


def inspect_document(model: Model, data: Dataset, evaluation: Evaluation | None = None) -> dict:
    """What `inspect --json` prints: a saved model measured on `data` (its own data set:
    `model.dataset()`); `evaluation` when it is already at hand."""
    if evaluation is None:
        evaluation = evaluate(model.network(), data)
    diagnosis = diagnose(model.layer_samples(data), epoch=model.epochs_run)
    return {
        "spec": model.spec.to_dict(),
        "epochs_run": model.epochs_run,
        "stopped": model.stopped,
        "clipping": model.history.get("clipping"),
        "final": {"loss": evaluation.loss, "accuracy": evaluation.accuracy},
        "predictions": predictions(data, evaluation.outputs),
        "gradients": diagnosis.to_dict(),
        "verdict": verdict(diagnosis, model.snapshots() or None),
    }


def failed(diagnosis: Diagnosis, subject: Measurement, guarded: Sequence[str]) -> list[str]:
    """The guarded statuses found (`"vanishing in L1, L2"`), in the order guarded: NaN and
    exploding at any recorded epoch, the others in the final state."""
    found = failures(diagnosis, subject.snapshots)
    return [f"{status} in {', '.join(found[status])}" for status in guarded if status in found]


def grads_document(
    subject: Measurement,
    source: str | None = None,
    guarded: Sequence[str] = (),
    params: bool = False,
    diagnosis: Diagnosis | None = None,
) -> dict:
    """What `grads --json` prints for a measurement (`gradviz.measure.measure(source)`):
    the statistics, the verdict, the history, the `guarded` statuses found, and with
    `params` every parameter with its gradient."""
    diagnosis = diagnosis or subject.diagnosis()
    document: dict = {
        "source": subject.label if source is None else source,
        "epoch": subject.epoch,
        "description": subject.description,
        "gradients": diagnosis.to_dict(),
        "verdict": subject.verdict(diagnosis),
        "history": [d.to_dict() for _, d in subject.snapshots or []],
        "failed": failed(diagnosis, subject, guarded),
    }
    if params:
        document["parameters"] = [
            {"name": p.name, "value": p.value, "grad": p.grad}
            for p in parameter_grads(subject.samples)
        ]
    return document


def compare_document(a: Measurement, b: Measurement) -> dict:
    """What `compare --json` prints: each side's loss and accuracy, statistics and verdict."""
    document = {}
    for tag, subject in (("a", a), ("b", b)):
        diagnosis = subject.diagnosis()
        performance = subject.performance()
        document[tag] = {
            "source": subject.label,
            "epoch": subject.epoch,
            "description": subject.description,
            "final": None
            if performance is None
            else {"loss": performance.loss, "accuracy": performance.accuracy},
            "gradients": diagnosis.to_dict(),
            "verdict": subject.verdict(diagnosis),
        }
    return document
