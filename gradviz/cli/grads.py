"""`gradviz grads` and `gradviz compare`: per-layer gradient tables for a spec or a saved
model, and two of them side by side."""

from __future__ import annotations

import shlex
from pathlib import Path

import click
from rich.text import Text

from gradviz.cli import EVERY_NUMBER, STATUS_MEANINGS, command, flag
from gradviz.cli.console import stdout_console
from gradviz.cli.options import OutputOption
from gradviz.errors import ExpressionError, InputError, quoted
from gradviz.files import refuse_clashes, write_atomic
from gradviz.measure import Measurement, input_files, measure
from gradviz.numbers import dumps
from gradviz.output import format_for, formats, suffix_words
from gradviz.render.layers import compare_report, params_table, report
from gradviz.report import compare_document, grads_document
from gradviz.report import failed as report_failed
from gradviz.stats import parameter_grads, status_help
from gradviz.text import printable

# What --fail-on accepts, and the status each word means.
_GUARDED = ("NaN", "exploding", "vanishing", "weak", "stalled", "saturated", "dead", "zero")
FAIL_ON = {status.lower(): status for status in _GUARDED}
# What measure's errors call grads' and compare's own options.
MEASURE_FLAGS = {key: flag(key) for key in ("epochs", "record_every", "data")}
FAIL_STATUS = 1  # the exit status when --fail-on finds what it guards against

STATUS_HELP = "\b\n" + status_help()  # the one status table, in stats.py


def _fail_on(value: str | None) -> list[str]:
    words = [w.strip().lower() for w in (value or "").split(",") if w.strip()]
    unknown = [w for w in words if w not in FAIL_ON]
    if unknown:
        raise click.BadParameter(
            f"unknown status {quoted(unknown[0], 30)}; choose from {', '.join(FAIL_ON)}",
            param_hint="'--fail-on'",
        )
    return [FAIL_ON[w] for w in words]


def _check_plot(path: str | None, inputs: list[str | Path]) -> None:
    """Before any measuring: a plot path that names an input, or not a picture."""
    if path is None:
        return
    refuse_clashes([("plot", path)], inputs)
    if format_for(path) not in formats("plot"):
        raise click.BadParameter(
            f"{quoted(path)}: a plot is written as {suffix_words('plot')}", param_hint="'--plot'"
        )


@command(
    "grads",
    epilog=STATUS_HELP
    + f"\nExit status: 0 ok, {FAIL_STATUS} a --fail-on status was found (or a runtime "
    "failure), 2 bad spec, model or option.",
)
@click.argument("source", metavar="SPEC_OR_MODEL")
@click.option("--epochs", type=click.IntRange(min=1), help="Train this many epochs first.")
@click.option(
    "--every", type=click.IntRange(min=1), help="Record statistics every N epochs (with --epochs)."
)
@click.option(
    "--data",
    help="Measure on this data set (a built-in name or a .csv file) instead of the spec's or "
    "the model's own.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON.")
@click.option("--params", is_flag=True, help="Also list every parameter with its gradient.")
@click.option(
    "--plot",
    cls=OutputOption,
    metavar="FILE",
    help="Write the plot (log-scale bars per layer with their status; with a history, the "
    f"layers x epochs heat map) to FILE: {suffix_words('plot')}.",
)
@click.option(
    "--fail-on",
    metavar="STATUS,...",
    help=f"Exit with status {FAIL_STATUS} if a layer ends with one of these statuses (NaN "
    f"and exploding: at any recorded epoch): {', '.join(FAIL_ON)}.",
)
def grads(
    source: str,
    epochs: int | None,
    every: int | None,
    data: str | None,
    as_json: bool,
    params: bool,
    plot: str | None,
    fail_on: str | None,
) -> None:
    """Show how the gradient reaches each layer: one row per layer with its gradient
    size, its share of the strongest layer's (rel, with a log-scale bar), the hop
    factor of the backpropagated signal beside the activation's bound (a sigmoid passes
    back at most 0.25 times the next weights' norm), grad:data, update:data, the
    activations' mean, std, slope, saturation and dead units, NaN/inf, and a status;
    then a verdict in words. Gradients are raw (before clipping), of the mean loss over
    the whole data set, computed without changing the network.

    SPEC_OR_MODEL is a spec (a TOML file or a built-in network: xor, deep-sigmoid,
    deep-relu, ...) measured at its initial weights or after --epochs, or a model saved
    by `gradviz train --save` (.json) with the history recorded during training.

    \b
    Examples:
      gradviz grads samples/deep-sigmoid.toml
      gradviz grads deep-relu --epochs 200 --every 10 --plot relu.svg
      gradviz grads xor.json --params
      gradviz grads model.json --fail-on vanishing,exploding,nan
    """
    guarded = _fail_on(fail_on)
    _check_plot(plot, input_files(source, data))
    subject = measure(source, epochs, every, data, option_names=MEASURE_FLAGS)
    if params and subject.recorded:
        raise InputError(
            f"--params: {printable(source)} is a recorded run: it holds each layer's "
            "statistics, not its weights"
        )
    diagnosis = subject.diagnosis()
    if plot is not None:
        from gradviz.render.plots import grads_plot  # lazy: start-up (matplotlib)

        title = f"{subject.label}: rms gradient per layer"
        picture = grads_plot(
            diagnosis,
            subject.snapshots,
            title,
            subject.description,
            format_for(plot),
            STATUS_MEANINGS,
        )
        write_atomic(Path(plot), picture)
    failed = report_failed(diagnosis, subject, guarded)
    if as_json:
        click.echo(dumps(grads_document(subject, source, guarded, params, diagnosis)))
    else:
        console = stdout_console()
        title = f"Gradients per layer: {printable(source)} {subject.description}"
        lines = subject.verdict(diagnosis)
        console.print(report(diagnosis, lines, subject.snapshots, title=title, more=EVERY_NUMBER))
        if params:
            console.print()
            console.print(params_table(parameter_grads(subject.samples)))
    if plot is not None:
        click.echo(f"wrote {printable(plot)}", err=True)
    if failed:
        click.echo(f"failing (--fail-on): {'; '.join(failed)}", err=True)
        raise click.exceptions.Exit(FAIL_STATUS)


def _exists(text: str) -> bool:
    """Whether `text` names a file: a text too long to be a file name (a long option
    string) names none, rather than raising "file name too long"."""
    try:
        return Path(text).exists()
    except OSError:
        return False


def _subject(text: str, epochs: int | None) -> Measurement:
    """What one side of `compare` names: a spec or a saved model, or a spec followed by
    `train`'s spec options (`xor --activation relu`)."""
    from gradviz.cli.train import OPTION_NAMES, spec_options  # lazy: start-up (train's grammar)

    if _exists(text) or not text.strip() or len(text.split()) == 1:
        return measure(text.strip() or text, epochs, None, option_names=MEASURE_FLAGS)
    try:
        words = shlex.split(text)
    except ValueError as error:  # an unclosed quote
        raise InputError(f"{text!r}: {error}") from None
    source, *rest = words
    return measure(
        source,
        epochs,
        None,
        options=spec_options(rest, text),
        option_names=OPTION_NAMES,
        label=text,
    )


def _side(side: str, text: str, epochs: int | None) -> Measurement:
    """One side of `compare`, its errors saying which side they are about (`xor` and
    "xor --lr nan" would both say --lr)."""
    try:
        return _subject(text, epochs)
    except ExpressionError:
        raise
    except InputError as error:
        shown = quoted(text)
        where = f"{side}: " if error.template.startswith(shown) else f"{side} ({shown}): "
        raise type(error)(
            where + error.template, hint=error.hint_template, options=error.options
        ) from None


@command(
    "compare",
    epilog="Statuses as in `gradviz grads --help`.\n\n"
    "Exit status: 0 ok, 1 runtime failure, 2 bad spec, model or option.",
)
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@click.option("--epochs", type=click.IntRange(min=1), help="Train both specs this many epochs.")
@click.option("--json", "as_json", is_flag=True, help="Print both sets of numbers as JSON.")
def compare(a: str, b: str, epochs: int | None, as_json: bool) -> None:
    """Two specs or saved models side by side: each one's loss and accuracy on its data,
    then layer against layer, each layer's rms gradient, its share of its own
    network's strongest layer on a log scale, and its status; then each verdict.

    A spec may be followed by `train`'s spec options, in quotes, to compare it with
    itself changed: "xor --activation relu". On a narrow terminal the bars, then the
    activations, are left out (and named) before any number is cut.

    \b
    Examples:
      gradviz compare samples/deep-sigmoid.toml samples/deep-relu.toml
      gradviz compare deep-sigmoid deep-relu --epochs 100
      gradviz compare xor "xor --activation relu --init he" --epochs 1000
      gradviz compare before.json after.json
    """
    subjects = [_side(side, source, epochs) for side, source in (("A", a), ("B", b))]
    if as_json:
        click.echo(dumps(compare_document(*subjects)))
        return
    diagnoses = [s.diagnosis() for s in subjects]
    verdicts = [s.verdict(d) for s, d in zip(subjects, diagnoses, strict=True)]
    performances = [s.performance() for s in subjects]
    console = stdout_console()
    labels = [f"{printable(s.label)}, {s.description}" for s in subjects]
    scores = [None if p is None else (p.loss, p.accuracy, len(p.outputs)) for p in performances]
    console.print(
        compare_report(
            diagnoses[0], diagnoses[1], *verdicts, *labels, scores=scores, more=EVERY_NUMBER
        )
    )
    console.print(
        Text("rel: log scale, 1e-8 empty, 1 full (each network's own strongest layer)", style="dim")
    )
