"""What `gradviz grads`, `compare` and `inspect` measure: a saved model as saved, a
recorded run as recorded, or a spec at its initial weights or after some training, as
per-layer samples on the whole data set (raw gradients before clipping)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from gradviz.data import Dataset
from gradviz.errors import GradvizError, InputError
from gradviz.model import Model, load_model, model_inputs
from gradviz.nn import LayerSample, Network, layer_samples
from gradviz.records import Run
from gradviz.schema import is_run_file, load_run
from gradviz.spec import resolve_spec, spec_from_mapping
from gradviz.stats import Diagnosis, History, diagnose, history, verdict
from gradviz.train import Evaluation, check_width, evaluate, load_data, train

MODEL_SUFFIX = ".json"


@dataclass
class Measurement:
    """One network's per-layer state after `epoch` epochs, its history, why training
    stopped early (or None), `label` (what the user named) and `description`."""

    label: str
    samples: list[LayerSample]
    epoch: int
    snapshots: History | None
    stopped: str | None
    description: str
    network: Network | None = None  # the weights measured, and on what (for `performance`)
    dataset: Dataset | None = None
    final: Evaluation | None = None  # training's own evaluation, when it trained
    run: Run | None = None  # a recorded run (records.Run): statistics only, no samples

    @property
    def recorded(self) -> bool:
        """Statistics recorded elsewhere (a PyTorch run): no network, data or samples."""
        return self.run is not None

    def performance(self) -> Evaluation | None:
        """Loss and accuracy of the weights measured (None without network or data)."""
        if self.final is not None:
            return self.final
        if self.network is None or self.dataset is None:
            return None
        return evaluate(self.network, self.dataset)

    def diagnosis(self) -> Diagnosis:
        if self.run is not None:
            return self.run.diagnosis()
        return diagnose(self.samples, epoch=self.epoch)

    def verdict(self, diagnosis: Diagnosis | None = None) -> list[str]:
        """The verdict; training's own account of a divergence replaces the NaN sentence."""
        lines = verdict(diagnosis or self.diagnosis(), self.snapshots)
        if self.stopped:
            lines = [self.stopped] + [ln for ln in lines if not ln.startswith("NaN/inf first")]
        if self.run is not None:  # the recorder's own: what it read, and did not
            lines += self.run.notes
        return lines


def measure(
    source: str,
    epochs: int | None = None,
    every: int | None = None,
    data: str | None = None,
    options: Mapping[str, object] | None = None,
    option_names: Mapping[str, str] | None = None,
    label: str | None = None,
) -> Measurement:
    """A saved model (`.json`) as saved, or a spec (TOML or built-in name) at its initial
    weights or after `epochs` (recorded every `every`). `data` (a built-in name or a .csv
    path) replaces the data set; `options` are more spec keys (`{"activation": "relu"}`),
    `option_names` what their errors call them."""
    options = dict(options or {})
    names = {"epochs": "epochs", "record_every": "every", "data": "data", **(option_names or {})}
    label = label or source
    if "epochs" in options:
        epochs = options.pop("epochs")  # type: ignore[assignment]
    if source.lower().endswith(MODEL_SUFFIX) and is_run_file(source):  # as recorded
        if options or epochs is not None or every is not None:
            raise InputError(
                f"{label}: a recorded run is measured as recorded: no spec options, "
                "{epochs} or {every}",
                options=["epochs", "every"],
            )
        if data is not None:
            raise InputError(
                f"{label}: a recorded run holds statistics, not a network: {{data}} does not apply",
                options=["data"],
            )
        run = load_run(source)
        return Measurement(label, [], run.last_step, run.history, None, run.description(), run=run)
    if source.lower().endswith(MODEL_SUFFIX):
        if options:
            raise InputError(f"{label}: spec options apply to a spec, not to a saved model")
        if epochs is not None or every is not None:
            raise InputError(
                "{epochs} and {every} apply to a spec, not to a saved model",
                options=["epochs", "every"],
            )
        model = load_model(Path(source))
        dataset = model_data(model, data, names["data"])
        epoch = model.epochs_run
        return Measurement(
            label,
            model.layer_samples(dataset),
            epoch,
            model.snapshots() or None,
            model.stopped,
            f"saved after {epoch} epochs, on {dataset.name}, {dataset.size} examples",
            model.network(),
            dataset,
        )
    overrides = {"epochs": epochs, "record_every": every, "data": _data_option(data), **options}
    spec = resolve_spec(source, overrides, names)
    dataset = load_data(spec)
    where = f"on {dataset.name}, {dataset.size} examples"
    if epochs is None:
        if every is not None:
            raise InputError(
                "{every} needs {epochs} (statistics are recorded while training)",
                options=["every", "epochs"],
            )
        check_width(spec, dataset)
        network = Network.from_spec(spec)
        return Measurement(
            label,
            layer_samples(network, dataset.X, dataset.Y),
            0,
            None,
            None,
            f"at initialisation (seed {spec.seed}), {where}",
            network,
            dataset,
        )
    result = train(spec, dataset, keep_going=True)
    epoch, samples = result.history.snapshots[-1]
    return Measurement(
        label,
        samples,  # type: ignore[arg-type]  (the latest snapshot keeps its raw samples)
        epoch,
        history(result.history.snapshots),
        result.history.stopped,
        f"after {epoch} epochs (lr {spec.learning_rate:g}, {spec.update_text}), {where}",
        result.network,
        dataset,
        result.final,
    )


def input_files(source: str, data: str | None = None) -> list[str | Path]:
    """The files `measure(source, data=data)` reads: no output may overwrite one."""
    files: list[str | Path] = [data] if data else []
    if source.lower().endswith(MODEL_SUFFIX):
        return [*model_inputs(Path(source)), *files]
    if not Path(source).is_file():
        return files  # a built-in network
    try:
        spec = resolve_spec(source, {}, {})
    except GradvizError:  # its error is raised where the command reads it
        return [source, *files]
    if spec.data_path is not None:
        files.append(spec.data_path)
    return [source, *files]


def model_data(model: Model, data: str | None = None, data_name: str = "data") -> Dataset:
    """A saved model's own data set, or `data` (a built-in name or a .csv path);
    `data_name` is what errors call that option (the CLI: `--data`)."""
    if data is None:
        dataset = model.dataset()
    else:
        raw = model.spec.to_dict()
        raw["data"] = _data_option(data)
        other = spec_from_mapping(
            raw, locate=lambda key: data_name if key.startswith("data") else f"spec.{key}"
        )
        dataset = load_data(other)
    if dataset.n_features != model.spec.layers[0]:
        where = data_name if data is not None else f"{model.source or 'model'}: spec.data"
        raise InputError(
            f"{where}: the model takes {model.spec.layers[0]} inputs but {dataset.name} has "
            f"{dataset.n_features} feature column(s)"
        )
    return dataset


def _data_option(data: str | None) -> str | None:
    """A CSV path given on the command line is relative to the current folder."""
    if data is not None and data.lower().endswith(".csv"):
        return str(Path(data).resolve())
    return data
