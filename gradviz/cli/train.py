"""`gradviz train`: train a small network on the engine and show how it learned."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path

import click

from gradviz.cli import command, flag
from gradviz.cli.options import OutputOption, picture_options, stacked
from gradviz.errors import InputError
from gradviz.files import refuse_clashes
from gradviz.numbers import dumps
from gradviz.spec import ACTIVATION_NAMES, resolve_spec
from gradviz.train import Diverged, check_data, load_data, train

# The options that set a spec key, in `--help`'s order: the key (its flag: `cli.flag`), the
# type and the help.
SPEC_OPTIONS: dict[str, tuple[type, str]] = {
    "layers": (str, "Layer sizes, inputs first: 2,4,1."),
    "activation": (str, f"Hidden activation(s): {', '.join(ACTIVATION_NAMES)} (or a,b,…)."),
    "output_activation": (str, "Activation of the output layer (default sigmoid)."),
    "init": (str, "Weight init: default (U±√(2/n_in)), xavier, he, uniform1, micrograd."),
    "loss": (str, "mse (default), bce, or hinge (a ±1 score, linear output)."),
    "data": (str, "xor, and, or, circle, moons, spiral, or a .csv file."),
    "epochs": (int, "Passes over the data."),
    "learning_rate": (float, "Learning rate."),
    "lr_schedule": (str, "constant (default) or linear (from --lr to --lr-end)."),
    "lr_end": (float, "The learning rate a linear schedule falls towards."),
    "l2": (float, "Add L2·Σp² (every weight and bias) to the loss."),
    "update": (str, 'full (batch), online (SGD, shuffled) or "minibatch N".'),
    "batch_size": (int, 'Same as --update "minibatch N".'),
    "clip_value": (float, "Clip each gradient to [-C, C]."),
    "clip_norm": (float, "Scale gradients down to global norm C."),
    "seed": (int, "Seed of the initial weights and the shuffling."),
    "record_every": (int, "Record gradient statistics every N epochs."),
}
OPTION_NAMES = {key: flag(key) for key in SPEC_OPTIONS}  # for the errors' words


@command(
    "train",
    epilog="Exit status: 0 ok, 1 training diverged (NaN/inf), 2 bad spec, data or option.",
)
@click.argument("spec", required=False)
@stacked([click.option(flag(key), key, type=t, help=h) for key, (t, h) in SPEC_OPTIONS.items()])
@click.option(
    "--save", "save_path", cls=OutputOption, metavar="FILE", help="Write the model as JSON."
)
@click.option("--keep-going", is_flag=True, help="Train on after the loss becomes NaN/inf.")
@picture_options("--report")
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
    # before training, so a bad path costs no training time; first: the worse mistake
    outputs = [
        ("save", save_path),
        ("boundary", boundary_path),
        ("curves", curves_path),
        ("report", report_path),
    ]
    if any(path is not None for _, path in outputs):
        from gradviz.cli import pictures  # lazy: start-up (only the output options need it)

        refuse_clashes(outputs, pictures.spec_inputs(spec, resolved))
        if save_path is not None:
            pictures.check_save_path(save_path)
        pictures.check_outputs(boundary_path, curves_path, report_path, resolved.layers[0])
    show = not quiet and not as_json

    data = load_data(resolved)
    check_data(resolved, data)  # before anything is printed
    progress = nullcontext(None)
    if show:
        from gradviz.cli import console, pictures  # lazy: start-up (not for --quiet, --json)
        from gradviz.render import training as views  # lazy: start-up

        out = console.stdout_console()
        out.print(views.summary_text(resolved, data))
        progress = console.epoch_progress(resolved.epochs)
    try:
        with progress as on_epoch:
            result = train(resolved, data, on_epoch=on_epoch, keep_going=keep_going)
    except Diverged as diverged:
        if as_json:  # scripts get the numbers up to the divergence, then the exit status
            from gradviz import report as reports  # lazy: start-up

            click.echo(dumps(reports.diverged_document(diverged, flag)))
        raise  # nothing is saved: a previous model file stays as it was

    if save_path is not None:
        from gradviz import model as models  # lazy: start-up (the model file)

        models.save(models.from_result(result), Path(save_path))
        if not quiet:
            pictures.note_data_outside(resolved, Path(save_path))
    pictures_asked = boundary_path is not None or curves_path is not None
    if not (show or as_json or pictures_asked or report_path is not None):
        return  # nothing more to show or write: no report to build
    from gradviz import report as reports  # lazy: start-up (the report: not for --quiet)

    report = reports.build_report(result, title=spec or resolved.name)
    written = []
    if pictures_asked:
        written = pictures.write_pictures((boundary_path, curves_path), report)
    if report_path is not None:  # the model as saved, as `inspect -o` shows it
        from gradviz import model as models  # lazy: start-up

        model = models.from_result(result)
        saved = reports.build_report(
            model, result.dataset, title=report.title, evaluation=result.final
        )
        written += pictures.write_report(report_path, saved)
    if as_json:
        click.echo(dumps(reports.train_document(report, save_path)))
        return
    if not show:
        return
    pictures.print_report(out, report, header=False)
    if save_path is not None:
        click.echo(f"saved {save_path}", err=True)
    for path in written:
        click.echo(f"wrote {path}", err=True)


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
