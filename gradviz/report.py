"""The training report, built once (`build_report`, or `Report.from_recorded` for a run
recorded elsewhere), and the documents `--json` prints (`*_document` below, written by
`numbers.dumps`). Every view of a run reads a `Report`: the terminal's
(gradviz.render.training), the JSON documents here, the HTML page (gradviz.pages), so a
script or a notebook gets the same numbers from Python as from the command line."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gradviz.boundary import Boundary, boundary
from gradviz.data import Dataset
from gradviz.errors import OptionWords, keyword
from gradviz.measure import Measurement, model_data
from gradviz.model import Model
from gradviz.nn import LOSS_FUNCTIONS, Network, is_correct
from gradviz.records import Run
from gradviz.spec import Spec
from gradviz.stats import Diagnosis, History, diagnose, failures, history, parameter_grads, verdict
from gradviz.train import Diverged, Evaluation, Result, evaluate

JSON_PREDICTIONS = 1000  # examples listed in a document's "predictions"


@dataclass(frozen=True)
class LayerRow:
    """One layer of a saved network as its weights stand: what `inspect` tabulates."""

    name: str
    inputs: int
    outputs: int
    activation: str
    parameters: int
    w_mean: float  # mean |w|
    w_max: float  # max |w|
    b_mean: float  # mean b


@dataclass(frozen=True, kw_only=True)
class Report:
    """One training run, as every view shows it. What needs gradviz's own network and its
    data (`spec`, `network`, `data`, `outputs`, `correct`, `layers`) is None for a run
    recorded elsewhere (statistics and curves only); each view then says what it cannot
    show. `loss`/`accuracy` hold one point every `every` epochs (or recorded steps),
    `clipping` the clipping record on the same points and `clip` its rule (("value" or
    "norm", the bound)). `threshold` and `signed`: how the loss reads an output."""

    title: str
    summary: str | None = None  # a one-line account of a run that has no `spec`
    spec: Spec | None = None
    layer_names: tuple[str, ...]
    epochs_run: int
    stopped: str | None = None  # why training stopped early
    final: Evaluation | None
    loss: tuple[float, ...]
    accuracy: tuple[float, ...]
    every: int
    clipping: tuple[tuple[int, int, float, float], ...] = ()  # see train.History.clipping
    clip: tuple[str, float] | None = None
    clipping_json: dict | None = None  # the record as the JSON documents print it
    diagnosis: Diagnosis
    snapshots: History
    verdict: tuple[str, ...]
    gradients_title: str  # what `diagnosis` measured, for the terminal's heading
    threshold: float = 0.5
    signed: bool = False
    layers: tuple[LayerRow, ...] | None = None
    network: Network | None = None
    data: Dataset | None = None
    outputs: tuple[float, ...] | None = None
    correct: tuple[bool, ...] | None = None  # per example of `data`: the output is right

    @property
    def unit(self) -> str:
        """What the curves and the recorded moments count: "epoch", or "step"."""
        return self.diagnosis.unit

    @classmethod
    def from_recorded(
        cls,
        snapshots: Sequence[tuple[int, Diagnosis]],
        *,
        title: str,
        summary: str,
        loss: Sequence[float] = (),
        accuracy: Sequence[float] = (),
        every: int = 1,
        layer_names: Sequence[str] | None = None,
        notes: Sequence[str] = (),
    ) -> Report:
        """The report of a run recorded elsewhere (the PyTorch bridge): its statistics at
        recorded steps (the last one the state now), `layer_names` as the framework names
        them (default: L1…), `loss[i]`/`accuracy[i]` the means over the `every` steps up
        to step every·(i+1), `notes` (the recorder's) after the verdict. No network, no
        data: the views say what they cannot show."""
        if not snapshots:
            raise ValueError("a recorded run needs at least one recorded step")
        recorded = history(snapshots)
        epoch, diagnosis = recorded[-1]
        accuracy = list(accuracy) or [math.nan] * len(loss)
        # no data to evaluate on: the last recorded point
        final = Evaluation(loss[-1], accuracy[-1], []) if loss else None
        return cls(
            title=title,
            summary=summary,
            layer_names=tuple(layer_names or (layer.name for layer in diagnosis.layers)),
            epochs_run=epoch,
            final=final,
            loss=tuple(loss),
            accuracy=tuple(accuracy),
            every=every,
            diagnosis=diagnosis,
            snapshots=recorded,
            verdict=(*verdict(diagnosis, recorded), *notes),
            gradients_title=f"Gradients per layer at step {epoch} (as recorded)",
        )

    def boundary(self, columns: int = 200, rows: int = 200) -> Boundary | None:
        """The decision boundary over a `columns` x `rows` grid, or None (`boundary_note`)."""
        if self.network is None or self.data is None or self.network.sizes[0] != 2:
            return None
        return boundary(self.network, self.data, columns, rows, outputs=self.outputs)

    @property
    def boundary_note(self) -> str | None:
        """Why there is no decision boundary (None: there is one)."""
        if self.network is None or self.data is None:
            return "no decision boundary: the run holds no data"
        if self.network.sizes[0] != 2:
            return (
                f"The network has {self.network.sizes[0]} inputs: the decision boundary is "
                "drawn for 2-input networks only."
            )
        return None


def build_report(
    source: Model | Result,
    data: Dataset | None = None,
    *,
    title: str | None = None,
    evaluation: Evaluation | None = None,
) -> Report:
    """The report of a trained network: a saved `Model` measured on `data` (default: its
    own data set), or a training `Result` (its data, its last recorded state). `evaluation`
    when it is already at hand; `title` names the run (default: the model file, or the
    spec's name). The one place a run's views get their numbers."""
    if isinstance(source, Result):
        recorded = source.history
        spec, network, data, evaluation = source.spec, source.network, source.dataset, source.final
        snapshots = history(recorded.snapshots)
        last_epoch, diagnosis = snapshots[-1]
        fields: dict = dict(
            title=title or spec.name,
            epochs_run=recorded.epochs_run,
            stopped=recorded.stopped,
            loss=tuple(recorded.loss),
            accuracy=tuple(recorded.accuracy),
            every=1,
            clipping=tuple(recorded.clipping),
            clipping_json=recorded.clipping_series(),
            gradients_title=f"Gradients per layer after epoch {last_epoch} "
            "(whole data set, before clipping)",
        )
    else:
        model, spec = source, source.spec
        data = data if data is not None else model_data(model)
        network = model.network()
        evaluation = evaluation or evaluate(network, data)
        diagnosis = diagnose(model.layer_samples(data), epoch=model.epochs_run)
        snapshots = model.snapshots()
        loss, accuracy, every = model.curves()
        fields = dict(
            title=title or str(model.source or spec.name),
            epochs_run=model.epochs_run,
            stopped=model.stopped,
            loss=tuple(loss),
            accuracy=tuple(accuracy),
            every=every,
            clipping=tuple(model.clipping()),
            clipping_json=model.history.get("clipping"),
            gradients_title="Gradients per layer of the saved weights (whole data set)",
            layers=layer_rows(network, spec),
        )
    loss_function = LOSS_FUNCTIONS[spec.loss]
    outputs = evaluation.outputs
    rules = (("value", spec.clip_value), ("norm", spec.clip_norm))  # (a spec sets one at most)
    clip = next(((rule, bound) for rule, bound in rules if bound is not None), None)
    return Report(
        spec=spec,
        layer_names=tuple(layer.name for layer in network.layers),
        final=evaluation,
        clip=clip,
        diagnosis=diagnosis,
        snapshots=snapshots,
        verdict=tuple(verdict(diagnosis, snapshots or None)),
        threshold=loss_function.threshold,
        signed=loss_function.signed_targets,
        network=network,
        data=data,
        outputs=tuple(outputs),
        correct=tuple(
            is_correct(o, y, loss_function.threshold)
            for o, y in zip(outputs, data.Y.tolist(), strict=True)
        ),
        **fields,
    )


def layer_rows(network: Network, spec: Spec) -> tuple[LayerRow, ...]:
    """Each layer's shape, activation, parameters and the size of its weights."""
    rows = []
    for i, ((W, b), activation) in enumerate(
        zip(network.weights(), spec.activations, strict=True), 1
    ):
        with np.errstate(over="ignore", invalid="ignore"):  # weights of 1e308: a mean of inf
            sizes = [float(v) for v in (np.mean(np.abs(W)), np.max(np.abs(W)), np.mean(b))]
        n_out, n_in = W.shape
        rows.append(LayerRow(f"L{i}", n_in, n_out, activation, W.size + b.size, *sizes))
    return tuple(rows)


def predictions(report: Report) -> list[dict]:
    """Input, target and output of the first `JSON_PREDICTIONS` examples ([] without data)."""
    data, outputs = report.data, report.outputs
    if data is None or outputs is None:
        return []
    return [
        {"input": data.X[i].tolist(), "target": float(data.Y[i]), "output": outputs[i]}
        for i in range(min(data.size, JSON_PREDICTIONS))
    ]


def train_document(report: Report, saved: str | None = None) -> dict:
    """What `train --json` prints: the spec, the curves, the predictions, the last
    gradient statistics and the verdict; `stopped` says why training stopped early,
    `saved` where the model was saved (None: not saved)."""
    return {
        "spec": None if report.spec is None else report.spec.to_dict(),
        "epochs_run": report.epochs_run,
        "final": _performance(report.final),
        "loss": list(report.loss),
        "accuracy": list(report.accuracy),
        "stopped": report.stopped,
        # with clipping, per epoch: updates, how many clipped, mean ‖g‖ before and after
        "clipping": report.clipping_json,
        "predictions": predictions(report),
        "gradients": report.diagnosis.to_dict(),
        "verdict": list(report.verdict),
        "saved": saved,
    }


def diverged_document(error: Diverged, words: OptionWords = keyword) -> dict:
    """What `train --json` prints for a run that stopped at a divergence: the training
    so far, `stopped` the error's own words (the CLI's `words` name `--keep-going`)."""
    stopped = error.render(words).replace("\n", " ")  # the fact and its advice, one line
    return train_document(build_report(error.result)) | {"stopped": stopped}


def run_report(run: Run, title: str) -> Report:
    """The report of a recorded run (`records.Run`, e.g. a PyTorch loop watched by
    `gradviz.torch.watch`): its statistics at recorded steps, its logged curves, and a
    summary naming where it was recorded and its layers as the framework names them."""
    loss, accuracy, every = run.curves()
    logged = any(math.isfinite(a) for a in accuracy)
    layers = [
        f"  {layer.name}: {layer.kind} {'×'.join(map(str, layer.shape[1:]))} → {layer.shape[0]}, "
        f"{layer.activation}"
        + (f" (read after {layer.activation_module})" if layer.activation_module else "")
        for layer in run.layers
    ]
    summary = "\n".join([f"{run.description()}, every {run.every} steps", *layers])
    return Report.from_recorded(
        run.history,
        title=title,
        summary=summary,
        loss=loss,
        accuracy=accuracy if logged else (),
        every=every,
        layer_names=[layer.name for layer in run.layers],
        notes=run.notes,
    )


def inspect_document(report: Report) -> dict:
    """What `inspect --json` prints: a saved model measured on its data (`build_report`)."""
    document = train_document(report)
    keys = ("spec", "epochs_run", "stopped", "clipping", "final", "predictions", "gradients")
    return {key: document[key] for key in (*keys, "verdict")}


def _performance(final: Evaluation | None) -> dict | None:
    return None if final is None else {"loss": final.loss, "accuracy": final.accuracy}


def _subject_document(
    subject: Measurement, diagnosis: Diagnosis, source: str | None = None, **more: object
) -> dict:
    """What `grads --json` and `compare --json` print of one measurement."""
    return {
        "source": subject.label if source is None else source,
        "epoch": subject.epoch,
        "description": subject.description,
        **more,
        "gradients": diagnosis.to_dict(),
        "verdict": subject.verdict(diagnosis),
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
    document = _subject_document(subject, diagnosis, source)
    document["history"] = [d.to_dict() for _, d in subject.snapshots or []]
    document["failed"] = failed(diagnosis, subject, guarded)
    if params:
        document["parameters"] = [
            {"name": p.name, "value": p.value, "grad": p.grad}
            for p in parameter_grads(subject.samples)
        ]
    return document


def compare_document(a: Measurement, b: Measurement) -> dict:
    """What `compare --json` prints: each side's loss and accuracy, statistics and verdict."""
    return {
        tag: _subject_document(
            subject, subject.diagnosis(), final=_performance(subject.performance())
        )
        for tag, subject in (("a", a), ("b", b))
    }
