"""`gradviz train` and `gradviz inspect`: train a small network on the engine, look inside
a saved one."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from pathlib import Path

import click
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn
from rich.text import Text

from gradviz.cli import EVERY_NUMBER, STATUS_MEANINGS, flag, pictures
from gradviz.cli.console import stderr_console, stdout_console
from gradviz.errors import InputError, ModelError, OutputError, quoted, shortened
from gradviz.files import write_atomic
from gradviz.measure import model_data
from gradviz.model import Model, from_result, load_model, save
from gradviz.numbers import dumps, fmt
from gradviz.output import refuse_inputs
from gradviz.render.training import (
    clipping_text,
    curve_text,
    final_text,
    gradient_report,
    layers_table,
    percent,
    predictions_table,
    summary_text,
)
from gradviz.report import diverged_document, inspect_document, train_document
from gradviz.run import is_run_file, load_run, run_document
from gradviz.spec import Spec, resolve_spec
from gradviz.text import printable
from gradviz.train import Diverged, check_data, evaluate, load_data, train

# The spec key each option sets, and the option's name for error messages.
OPTION_NAMES = {
    "layers": "--layers",
    "activation": "--activation",
    "output_activation": "--output-activation",
    "init": "--init",
    "loss": "--loss",
    "data": "--data",
    "epochs": "--epochs",
    "learning_rate": "--lr",
    "update": "--update",
    "batch_size": "--batch-size",
    "clip_value": "--clip-value",
    "clip_norm": "--clip-norm",
    "seed": "--seed",
    "record_every": "--every",
    "l2": "--l2",
    "lr_schedule": "--lr-schedule",
    "lr_end": "--lr-end",
}


# -- train --------------------------------------------------------------------------------


def picture_options(command: Callable) -> Callable:
    """--boundary and --curves, the same on `train` and `inspect`."""
    command = click.option(
        "--curves",
        "curves_path",
        metavar="FILE",
        help="Write the loss and accuracy curves to FILE: .svg, .png or .pdf.",
    )(command)
    return click.option(
        "--boundary",
        "boundary_path",
        metavar="FILE",
        help="Write the decision boundary (2-input networks) to FILE: .svg, .png or .pdf.",
    )(command)


@click.command(
    "train",
    short_help="Train a small network and show how it learned.",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Exit status: 0 ok, 1 training diverged (NaN/inf), 2 bad spec, data or option.",
)
@click.argument("spec", required=False)
@click.option("--layers", help="Layer sizes, inputs first: 2,4,1.")
@click.option("--activation", help="Hidden activation(s): sigmoid, tanh, relu, linear (or a,b,…).")
@click.option("--output-activation", help="Activation of the output layer (default sigmoid).")
@click.option("--init", help="Weight init: default (U±√(2/n_in)), xavier, he, uniform1, micrograd.")
@click.option("--loss", help="mse (default), bce, or hinge (a ±1 score, linear output).")
@click.option("--data", help="xor, and, or, circle, moons, spiral, or a .csv file.")
@click.option("--epochs", type=int, help="Passes over the data.")
@click.option("--lr", "learning_rate", type=float, help="Learning rate.")
@click.option("--lr-schedule", help="constant (default) or linear (from --lr to --lr-end).")
@click.option("--lr-end", type=float, help="The learning rate a linear schedule falls towards.")
@click.option("--l2", type=float, help="Add L2·Σp² (every weight and bias) to the loss.")
@click.option("--update", help='full (batch), online (SGD, shuffled) or "minibatch N".')
@click.option("--batch-size", type=int, help='Same as --update "minibatch N".')
@click.option("--clip-value", type=float, help="Clip each gradient to [-C, C].")
@click.option("--clip-norm", type=float, help="Scale gradients down to global norm C.")
@click.option("--seed", type=int, help="Seed of the initial weights and the shuffling.")
@click.option(
    "--every", "record_every", type=int, help="Record gradient statistics every N epochs."
)
@click.option("--save", "save_path", metavar="FILE", help="Write the model as JSON.")
@click.option("--keep-going", is_flag=True, help="Train on after the loss becomes NaN/inf.")
@picture_options
@click.option("--report", "report_path", metavar="FILE", help="Write the report page to FILE.html.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing (errors still go to stderr).")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
def train_command(
    spec: str | None,
    save_path: str | None,
    keep_going: bool,
    boundary_path: str | None,
    curves_path: str | None,
    report_path: str | None,
    quiet: bool,
    as_json: bool,
    **options: object,
) -> None:
    """Train a small network on gradviz's own engine and show how it learned.

    SPEC is a TOML file (see samples/) or a built-in network: xor, xor-relu, circle,
    deep-sigmoid, deep-relu, and, or, moons, spiral. Options override the spec, or
    describe the whole network without one (then --layers and --data are needed).

    At the end: the loss curve, the final accuracy, the predictions, a map of the
    decision boundary (for 2 inputs), and the per-layer gradient table with a verdict
    (vanishing, exploding, dead, …). --boundary and --curves write them as pictures.

    \b
    Examples:
      gradviz train samples/xor.toml
      gradviz train xor --save xor.json
      gradviz train --layers 2,4,1 --activation sigmoid --data xor --lr 1 --epochs 2000
      gradviz train samples/deep-sigmoid.toml --epochs 200 --quiet --json
      gradviz train samples/circle.toml --boundary circle.png --curves curves.svg
      gradviz train samples/xor.toml --report report.html
    """
    data_option = options.get("data")
    if isinstance(data_option, str) and data_option.lower().endswith(".csv"):
        options["data"] = str(Path(data_option).resolve())
    resolved = resolve_spec(spec, options, OPTION_NAMES)
    if save_path is not None:  # before training, so a bad path costs no training time
        _check_save_path(save_path, spec, resolved)
    read = pictures.spec_inputs(spec, resolved)
    pictures.check_picture(boundary_path, "--boundary", read)
    pictures.check_picture(curves_path, "--curves", read)
    pictures.check_boundary(boundary_path, resolved.layers[0])
    pictures.check_report(report_path, "--report", read)
    console = stdout_console()
    show = not quiet and not as_json

    err = stderr_console()
    progress = None
    on_epoch = None
    if show and err.is_terminal:
        progress = Progress(
            TextColumn("epoch {task.completed:>7.0f}/{task.total:.0f}"),
            BarColumn(),
            TaskProgressColumn(),
            TextColumn("loss {task.fields[loss]}  accuracy {task.fields[accuracy]}"),
            TimeRemainingColumn(),
            console=err,
            transient=True,
        )
        task = progress.add_task("train", total=resolved.epochs, loss="—", accuracy="—")
        step = max(1, resolved.epochs // 200)

        def on_epoch(epoch: int, loss: float, accuracy: float) -> None:
            if epoch % step == 0 or epoch == resolved.epochs:
                progress.update(task, completed=epoch, loss=fmt(loss), accuracy=percent(accuracy))

    data = load_data(resolved)
    check_data(resolved, data)  # before anything is printed
    if show:
        console.print(summary_text(resolved, data))
    try:
        if progress is not None:
            with progress:
                result = train(resolved, data, on_epoch=on_epoch, keep_going=keep_going)
        else:
            result = train(resolved, data, on_epoch=on_epoch, keep_going=keep_going)
    except Diverged as diverged:
        if as_json:  # scripts get the numbers up to the divergence, then the exit status
            click.echo(dumps(diverged_document(diverged, flag)))
        raise  # nothing is saved: a previous model file stays as it was

    last_epoch, last_samples = result.history.snapshots[-1]
    if save_path is not None:
        save(from_result(result), Path(save_path))
        if not quiet:
            _note_data_outside(resolved, Path(save_path))
    history = result.history
    written = pictures.write_pictures(
        (boundary_path, curves_path),
        result.network,
        result.dataset,
        result.final.outputs,
        history.loss,
        history.accuracy,
        1,
        f"{spec or resolved.name}",
        history.epochs_run,
    )
    if report_path is not None:  # (from_result summarises every snapshot: only when asked)
        model = from_result(result)
        written += pictures.write_report(
            report_path, model, result.dataset, result.final, spec or model.spec.name
        )

    if as_json:
        click.echo(dumps(train_document(result, save_path)))
        return
    if not show:
        return
    console.print(curve_text(result.history.loss, result.history.accuracy, width=console.width))
    if result.history.clipping:
        console.print(clipping_text(result.history.clipping, resolved, width=console.width))
    if result.history.stopped:
        console.print(Text(f"warning: {result.history.stopped}", style="bold red"))
    console.print(final_text(result.final.loss, result.final.accuracy, result.dataset.size))
    console.print(predictions_table(result.dataset, result.final.outputs, loss=resolved.loss))
    pictures.print_boundary_map(console, result.network, result.dataset, result.final.outputs)
    console.print()
    report = gradient_report(
        last_samples,
        result.history.snapshots,
        last_epoch,
        f"Gradients per layer after epoch {last_epoch} (whole data set, before clipping)",
        EVERY_NUMBER,
    )
    console.print(report)
    if save_path is not None:
        click.echo(f"saved {save_path}", err=True)
    for path in written:
        click.echo(f"wrote {path}", err=True)


def _check_save_path(save_path: str, spec: str | None, resolved: Spec) -> None:
    """Before training, so that a bad path costs no training time."""
    inputs: list[str | Path] = [spec] if spec is not None and Path(spec).is_file() else []
    if resolved.data.path is not None:
        base = Path(resolved.base_dir) if resolved.base_dir else Path()
        inputs.append(base / resolved.data.path)
    refuse_inputs([save_path], inputs)  # first: the worse mistake gets named
    if Path(save_path).is_dir():
        raise OutputError(
            f"--save {quoted(save_path)}: is a folder; give a file name ending in .json"
        )
    if not save_path.lower().endswith(".json"):
        raise OutputError(
            f"--save {shortened(save_path)}: a model is saved as JSON; "
            "give a file name ending in .json"
        )
    folder = Path(save_path).parent
    if not folder.is_dir():
        raise OutputError(
            f"--save {shortened(save_path)}: no folder {quoted(str(folder))} to write it in"
        )


def _note_data_outside(spec: Spec, save_path: Path) -> None:
    """A saved model reads CSV data only inside its own folder: say so when it is not."""
    if spec.data.name != "csv" or spec.data.path is None:
        return
    data = Path(spec.base_dir or "") / spec.data.path
    if not data.resolve().is_relative_to(save_path.parent.resolve()):
        click.echo(
            f"note: the data ({data}) is outside the model's folder; a model only reads data "
            f"beside it: give it to inspect and grads with --data {data}",
            err=True,
        )


def spec_options(words: Sequence[str], text: str) -> dict[str, object]:
    """`--activation relu --lr=0.5` as spec keys and values, read with `train`'s own
    option grammar and types (only the options that set spec keys). For `compare`'s
    "xor --activation relu": the words are split from the user's text as a shell would
    split them, but no shell ever sees them."""
    by_flag: dict[str, click.Option] = {}
    for param in train_command.params:
        if isinstance(param, click.Option) and param.name in OPTION_NAMES:
            by_flag.update(dict.fromkeys(param.opts, param))
    values: dict[str, object] = {}
    i = 0
    while i < len(words):
        flag, equals, value = words[i].partition("=")
        param = by_flag.get(flag)
        if param is None or param.name is None:
            raise InputError(
                f"{text!r}: {flag!r} is not an option of a spec; these are: "
                f"{', '.join(OPTION_NAMES.values())}"
            )
        if not equals:
            if i + 1 >= len(words):
                raise InputError(f"{text!r}: {flag} needs a value")
            i += 1
            value = words[i]
        try:
            converted = param.type.convert(value, param, None)
        except click.BadParameter as error:
            raise InputError(f"{text!r}: {flag} {value!r}: {error.message}") from None
        if param.name == "data" and str(converted).lower().endswith(".csv"):
            converted = str(Path(str(converted)).resolve())
        values[param.name] = converted
        i += 1
    return values


# -- inspect ------------------------------------------------------------------------------


@click.command(
    "inspect",
    short_help="Look inside a saved model: predictions, gradients.",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Exit status: 0 ok, 2 missing or malformed model file.",
)
@click.argument("model_path", metavar="MODEL")
@click.option("--data", "data_path", help="Evaluate on this data (.csv or a built-in name).")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@picture_options
@click.option(
    "-o", "--report", "report_path", metavar="FILE", help="Write the report page to FILE.html."
)
def inspect_command(
    model_path: str,
    data_path: str | None,
    as_json: bool,
    boundary_path: str | None,
    curves_path: str | None,
    report_path: str | None,
) -> None:
    """Look inside a saved model: its network, its predictions on its data, and how
    the gradient reaches each layer (with the history recorded during training).

    For a network with 2 inputs, also a map of what it decides over the input plane.
    --boundary and --curves write the decision boundary and the training curves as
    pictures; -o FILE.html writes all of it as one page, live (an epoch slider, any
    example's loss graph).

    \b
    Examples:
      gradviz train samples/xor.toml --save xor.json
      gradviz inspect xor.json
      gradviz inspect xor.json --json
      gradviz inspect xor.json --boundary xor.svg
      gradviz inspect xor.json -o report.html
    """
    read = [model_path, *([data_path] if data_path else [])]
    pictures.check_picture(boundary_path, "--boundary", read)
    pictures.check_picture(curves_path, "--curves", read)
    pictures.check_report(report_path, "--report", read)
    if model_path.lower().endswith(".json") and is_run_file(model_path):
        _inspect_run(model_path, data_path, as_json, boundary_path, curves_path, report_path)
        return
    model = _load_for_inspect(model_path)
    pictures.check_boundary(boundary_path, model.spec.layers[0])
    data = model_data(model, data_path, "--data")
    network = model.network()
    evaluation = evaluate(network, data)
    loss, accuracy, every = model.curves()
    written = pictures.write_pictures(
        (boundary_path, curves_path),
        network,
        data,
        evaluation.outputs,
        loss,
        accuracy,
        every,
        model_path,
        model.epochs_run,
    )
    written += pictures.write_report(report_path, model, data, evaluation, model_path)
    if as_json:
        click.echo(dumps(inspect_document(model, data, evaluation)))
        return
    console = stdout_console()
    console.print(Text(printable(model_path), style="bold"))
    console.print(summary_text(model.spec, data))
    console.print()
    console.print(layers_table(model))
    console.print()
    console.print(curve_text(loss, accuracy, every, width=console.width))
    if model.clipping():
        console.print(clipping_text(model.clipping(), model.spec, every, width=console.width))
    if model.stopped:
        console.print(
            Text(f"warning: {model.stopped} It trained on (--keep-going).", style="bold red")
        )
    console.print(final_text(evaluation.loss, evaluation.accuracy, data.size))
    console.print(predictions_table(data, evaluation.outputs, loss=model.spec.loss))
    pictures.print_boundary_map(console, network, data, evaluation.outputs)
    console.print()
    report = gradient_report(
        model.layer_samples(data),
        model.snapshots(),
        model.epochs_run,
        "Gradients per layer of the saved weights (whole data set)",
        EVERY_NUMBER,
    )
    console.print(report)
    for path in written:
        click.echo(f"wrote {path}", err=True)


def _inspect_run(
    path: str,
    data_path: str | None,
    as_json: bool,
    boundary_path: str | None,
    curves_path: str | None,
    report_path: str | None,
) -> None:
    """`inspect` of a recorded run (a PyTorch loop watched by gradviz.torch.watch): what
    it recorded; what needs the network or the data is refused, or left out in a line."""
    from gradviz.render.layers import report  # lazy: start-up
    from gradviz.render.run_view import (  # lazy: start-up
        MISSING,
        last_logged,
        run_curves,
        run_layers_table,
        run_summary,
    )
    from gradviz.stats import verdict  # lazy: start-up

    for option, given in (("--data", data_path), ("--boundary", boundary_path)):
        if given is not None:
            raise InputError(
                f"{option}: {printable(path)} is a recorded run: it holds statistics, not the "
                "network or its data"
            )
    run = load_run(path)
    loss, accuracy, every = run.curves()
    written = []
    if curves_path is not None:
        if not loss:
            raise InputError(f"--curves: {printable(path)} has no logged curves to draw")
        written += pictures.write_curves(
            curves_path, loss, accuracy, every, path, run.description()
        )
    if report_path is not None:
        from gradviz.output import run_report_page  # lazy: start-up (matplotlib, Graphviz)

        page = run_report_page(run, path, more=EVERY_NUMBER, statuses=STATUS_MEANINGS)
        write_atomic(Path(report_path), page.encode("utf-8"))
        written.append(report_path)
    if as_json:
        click.echo(dumps(run_document(run, path)))
        return
    console = stdout_console()
    console.print(Text(printable(path), style="bold"))
    console.print(run_summary(run))
    console.print()
    console.print(run_layers_table(run))
    console.print()
    if loss:
        console.print(run_curves(run, console.width))
    console.print(last_logged(run))
    console.print(Text(MISSING, style="dim"))
    console.print()
    diagnosis = run.diagnosis()
    title = f"Gradients per layer at step {run.last_step} (as recorded)"
    console.print(
        report(diagnosis, verdict(diagnosis, run.history), run.history, title, more=EVERY_NUMBER)
    )
    for written_path in written:
        click.echo(f"wrote {written_path}", err=True)


def _load_for_inspect(model_path: str) -> Model:
    """A saved model; a spec given by mistake (a .toml file or a built-in name) is
    refused with the commands that take one."""
    shown = shlex.quote(model_path)
    specs = f"For a spec: gradviz grads {shown} (its gradients) or gradviz train {shown}."
    if model_path.lower().endswith(".toml"):
        raise ModelError(
            f"{model_path}: inspect reads a saved model (.json, from gradviz train --save), "
            "not a spec",
            hint=specs,
        )
    try:
        return load_model(Path(model_path))
    except ModelError as error:
        if model_path.lower().endswith(".json"):
            raise
        raise ModelError(
            error.message,
            hint=f"inspect reads a saved model (.json, from gradviz train --save). {specs}",
        ) from None
