"""`gradviz inspect`: look inside a saved model or a recorded run."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gradviz.cli import command, flag
from gradviz.cli.options import picture_options
from gradviz.errors import InputError, ModelError
from gradviz.files import refuse_clashes
from gradviz.numbers import dumps
from gradviz.text import printable

if TYPE_CHECKING:
    from gradviz.model import Model
    from gradviz.report import Report


@command("inspect", epilog="Exit status: 0 ok, 2 missing or malformed model file.")
@click.argument("model_path", metavar="MODEL")
@click.option("--data", "data_path", help="Evaluate on this data (.csv or a built-in name).")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@picture_options("-o", "--report")
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
    example's loss graph), and prints only the line that says where (the page holds the
    report the terminal would show).

    \b
    Examples:
      gradviz train samples/xor.toml --save xor.json
      gradviz inspect xor.json
      gradviz inspect xor.json --json
      gradviz inspect xor.json --boundary xor.svg
      gradviz inspect xor.json -o report.html
    """
    # what reading and showing a model needs: not for `gradviz inspect --help`
    from gradviz import measure  # lazy: start-up
    from gradviz import report as reports  # lazy: start-up
    from gradviz import schema as runs  # lazy: start-up
    from gradviz.cli import console, pictures  # lazy: start-up

    outputs = [("boundary", boundary_path), ("curves", curves_path), ("report", report_path)]
    refuse_clashes(outputs, measure.input_files(model_path, data_path))  # its CSV data too
    pictures.check_outputs(boundary_path, curves_path, report_path)
    if model_path.lower().endswith(measure.MODEL_SUFFIX) and runs.is_run_file(model_path):
        report = _recorded_report(model_path, data_path, boundary_path, curves_path)
    else:
        model = _load_for_inspect(model_path)
        pictures.check_boundary(boundary_path, model.spec.layers[0])
        data = measure.model_data(model, data_path, "--data")
        report = reports.build_report(model, data, title=model_path)
    written = pictures.write_pictures((boundary_path, curves_path), report)
    written += pictures.write_report(report_path, report)
    if as_json:
        click.echo(dumps(reports.inspect_document(report)))
        return
    if report_path is None:  # else the page holds the whole report: only where it went is said
        stopped = f" It trained on ({flag('keep_going=True')})."
        pictures.print_report(console.stdout_console(), report, stopped_words=stopped)
    for path in written:
        click.echo(f"wrote {printable(path)}", err=True)


def _recorded_report(
    path: str, data_path: str | None, boundary_path: str | None, curves_path: str | None
) -> Report:
    """The report of a recorded run (a PyTorch loop watched by gradviz.torch.watch): what
    needs its network or its data is refused; the views say what they leave out."""
    from gradviz import report as reports  # lazy: start-up
    from gradviz import schema as runs  # lazy: start-up

    for option, given in (("--data", data_path), ("--boundary", boundary_path)):
        if given is not None:
            raise InputError(
                f"{option}: {printable(path)} is a recorded run: it holds statistics, not the "
                "network or its data"
            )
    report = reports.run_report(runs.load_run(path), title=path)
    if curves_path is not None and not report.loss:
        raise InputError(f"--curves: {printable(path)} has no logged curves to draw")
    return report


def _load_for_inspect(model_path: str) -> Model:
    """A saved model; a spec given by mistake (a .toml file or a built-in name) is
    refused with the commands that take one."""
    from gradviz import measure  # lazy: start-up
    from gradviz import model as models  # lazy: start-up

    shown = shlex.quote(model_path)
    specs = f"For a spec: gradviz grads {shown} (its gradients) or gradviz train {shown}."
    if model_path.lower().endswith(".toml"):
        raise ModelError(
            f"{model_path}: inspect reads a saved model (.json, from gradviz train --save), "
            "not a spec",
            hint=specs,
        )
    try:
        return models.load_model(Path(model_path))
    except ModelError as error:
        if model_path.lower().endswith(measure.MODEL_SUFFIX):
            raise
        raise ModelError(
            error.message,
            hint=f"inspect reads a saved model (.json, from gradviz train --save). {specs}",
        ) from None
