"""`gradviz trace` (the backward pass, step by step) and `gradviz check` (gradients
against finite differences): thin layers over `gradviz.tracing` and `gradviz.checking`."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

import click
import numpy as np

from gradviz import checking, tracing
from gradviz.cli import command, flag
from gradviz.cli.console import stdout_console
from gradviz.cli.options import ExpressionCommand, OutputOption, model_options
from gradviz.cli.source import graph_source, model_loss_graph, say
from gradviz.drawn import diagram_from_value, network_diagram, trace_frames
from gradviz.engine import Value, topological_order
from gradviz.errors import GradvizError, InputError, OutputError, WriteError, quoted
from gradviz.files import refuse_clashes, write_atomic
from gradviz.names import node_names, output_name
from gradviz.numbers import dumps, fmt
from gradviz.output import (
    FORMATS,
    animated_trace,
    check_animation,
    check_frames,
    format_for,
    formats,
    render,
    size_warnings,
)
from gradviz.render import trace_view as views
from gradviz.render.diagram import Diagram, preferred_rankdir
from gradviz.render.frames import Frames

# --format of the frames: their files' extension -> the format (svg, mmd -> mermaid).
FRAME_FORMATS = {FORMATS[name].suffixes[0][1:]: name for name in formats("frames")}
FRAME_PREFIX = "step-"


def frame_names(count: int, extension: str) -> list[str]:
    """`step-01.svg` …: zero-padded so they sort in order."""
    width = max(2, len(str(count)))
    return [f"{FRAME_PREFIX}{i:0{width}d}.{extension}" for i in range(1, count + 1)]


def _prepare_folder(folder: Path) -> list[Path]:
    """`folder`, created if needed; the folders it created, deepest first (to remove)."""
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"cannot write frames to {quoted(str(folder))}: it is not a folder")
    created = [p for p in (folder, *folder.parents) if not p.exists()]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OutputError(
            f"cannot create folder {quoted(str(folder))}: {error.strerror or error}"
        ) from None
    return created


STAGE_PREFIX = ".gradviz-frames-"  # the hidden folder in DIR the frames are made in


def _stage(folder: Path) -> Path:
    import tempfile  # lazy: start-up

    try:
        return Path(tempfile.mkdtemp(prefix=STAGE_PREFIX, dir=folder))
    except OSError as error:
        raise OutputError(
            f"cannot write frames to {quoted(str(folder))}: {error.strerror or error}"
        ) from None


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait while the frames move into place, so the folder never
    holds a mix of runs (a signal that came meanwhile is delivered on leaving)."""
    held = {signal.SIGINT, signal.SIGTERM}
    can_hold = hasattr(signal, "pthread_sigmask") and (
        threading.current_thread() is threading.main_thread()
    )
    if can_hold:
        signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        if can_hold:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, held)


def _unwritten(folder: Path, created: list[Path], earlier: list[str]) -> str:
    if created:
        return f"note: no frame written ({str(folder)!r} was not created)"
    kept = (
        f": its {len(earlier)} frames of an earlier run ({earlier[0]} … {earlier[-1]}) kept"
        if len(earlier) > 1
        else f": its frame of an earlier run ({earlier[0]}) kept"
        if earlier
        else ""
    )
    return f"note: no frame written, {str(folder)!r} left as it was{kept}"


def write_frames(
    frames: Frames,
    folder: Path,
    extension: str,
    inputs: list[Path],
    rankdir: str = "LR",
    page: Path | None = None,
    step: int | None = None,
) -> None:
    """One file per frame in `folder` (`step`: that frame only, checked by the caller); says
    what it wrote. All are made in a hidden folder, then moved into `folder` together:
    interrupted or failing before then, `folder` is as it was. Frames of an earlier, longer
    run are left, and said."""
    names = frame_names(len(frames), extension)
    shown: Iterable[Diagram] = frames
    if step is not None:
        shown, names = frames[step - 1 : step], names[step - 1 : step]
    paths = [folder / name for name in names]
    for path in paths:  # each against the inputs and the page (their names differ)
        refuse_clashes([("frames", path), ("output", page)], inputs)
    created = _prepare_folder(folder)
    fmt = FRAME_FORMATS[extension]
    for warning in size_warnings(frames.base, fmt, flag) if frames else []:
        say(f"warning: {warning}")
    pattern = f"{FRAME_PREFIX}*.{extension}"
    earlier = sorted(p.name for p in folder.glob(pattern))
    stage = None  # the hidden folder in DIR (the same file system: renames are atomic)
    try:
        stage = _stage(folder)
        for frame, path in zip(shown, paths, strict=True):
            write_atomic(stage / path.name, render(frame, fmt, rankdir=rankdir))
    except BaseException as error:
        if stage is not None:
            shutil.rmtree(stage, ignore_errors=True)
        for made in created:  # deepest first; only if still empty
            with contextlib.suppress(OSError):
                made.rmdir()
        if isinstance(error, KeyboardInterrupt):  # Ctrl-C, SIGTERM: what is on disk now
            say(_unwritten(folder, created, earlier))
        raise
    with _signals_held():
        try:
            for path in paths:
                os.replace(stage / path.name, path)
        except OSError as error:
            raise WriteError(
                f"cannot move the frames into {quoted(str(folder))}: {error.strerror or error}"
            ) from None
        finally:
            shutil.rmtree(stage, ignore_errors=True)
    if step is not None:
        say(f"wrote {paths[0].name} to {str(folder)!r}")
        return
    stale = sorted({p.name for p in folder.glob(pattern)} - set(names))
    if stale:
        say(
            f"note: {quoted(str(folder))} also holds {', '.join(stale)} from an earlier run "
            "(left as they were)"
        )
    say(f"wrote {len(paths)} frames to {str(folder)!r} ({paths[0].name} … {paths[-1].name})")


MODEL_STEPS_NOTE = 60  # more scalar steps than this: suggest --level
DEFAULT_SAMPLES = 10  # parameters of a model that `check` compares


@command(
    "trace",
    cls=ExpressionCommand,
    epilog="Exit status: 0 ok, 1 runtime failure (e.g. no Graphviz for SVG frames), 2 bad input.",
)
@click.argument("expr", metavar="[EXPR]", required=False)
@click.argument("assignments", nargs=-1, metavar="[NAME=VALUE]...")
@click.option("--forward", "show_forward", is_flag=True, help="Show the forward pass first.")
@click.option(
    "--frames",
    cls=OutputOption,
    type=click.Path(path_type=Path),  # a file: our one-line error, not click's usage
    metavar="DIR",
    help="Also write one diagram per backward step into DIR (step-01.svg, …); at most "
    "100,000 nodes drawn over all frames (frames × nodes).",
)
@click.option(
    "--format",
    "frame_format",
    cls=OutputOption,
    writes="format",
    type=click.Choice(list(FRAME_FORMATS), case_sensitive=False),
    help="Format of the --frames files: SVG (through Graphviz; the default) or Mermaid text.",
)
@click.option(
    "--step",
    type=click.IntRange(min=1),
    metavar="N",
    help="With --frames: write the frame of step N only (step-05.svg: the graph after step N).",
)
@click.option(
    "-o",
    "--output",
    "page",
    cls=OutputOption,
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE.html",
    help="Write a live page opened on step 1 (one file, no network; see `draw -o`) and "
    "print only where; with --animate, FILE.svg: the backward pass as an animated picture.",
)
@click.option(
    "--animate",
    is_flag=True,
    help="With -o FILE.svg: one SVG that steps through the backward pass in a loop (CSS, no "
    "script: it plays in a README's <img>; readers who prefer reduced motion see the last "
    "step); at most 500 steps.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the trace as JSON instead of the terminal view (every step's numbers and "
    "formulas, each leaf's gradient and sentence); --frames and -o still write their files.",
)
@model_options(
    model_help="Trace one example through a saved model (gradviz train --save) instead of EXPR.",
    levels=("scalar", "neuron", "layer"),
    level_help="With --model: a step per scalar node, per neuron, or per layer.",
)
def trace_command(
    expr: str | None,
    assignments: tuple[str, ...],
    show_forward: bool,
    frames: Path | None,
    frame_format: str | None,
    step: int | None,
    page: Path | None,
    animate: bool,
    as_json: bool,
    seed: int,
    model_path: Path | None,
    input_text: str | None,
    target: float | None,
    level: str,
) -> None:
    """Show the backward pass of EXPR one step at a time.

    Nodes come in reverse topological order, so each node's credit dL/dnode is
    complete when its turn comes. For each node: the credit it received (summed
    when it is used more than once), each input's local derivative (formula and
    value), and the credit passed on (dL/da += dL/dnode · local). It ends with every
    leaf's gradient and what it means in plain words.

    EXPR and NAME=VALUE work as for `gradviz draw` (EXPR may be @FILE or a .expr file).

    --frames DIR writes one diagram per step: step k shows the graph after step k,
    with the nodes of earlier steps done (green), the current node and the edges it
    passes credit along emphasised (blue), every node's credit received so far,
    and nodes no credit reaches dimmed. There is one step, and so one frame, per
    node the credit reaches: every node of the graph, except those whose every path
    to the output runs through detach. For `e = a*b; d = e + c; L = d*f` that is 7.

    --model FILE traces one example (--input) through a saved network; --level
    neuron or layer keeps it short (one step for the loss, one per neuron or layer,
    one for the inputs; frames on the collapsed diagram).

    \b
    Examples:
      gradviz trace "e = a*b; d = e + c; L = d*f" a=2 b=-3 c=10 f=-2
      gradviz trace "x*x + x" x=3 --forward
      gradviz trace "e = a*b; d = e + c; L = d*f" a=2 b=-3 c=10 f=-2 --frames docs/trace
      gradviz trace "tanh(w*x + b)" x=0.5 w=-3 b=1 --frames out --format mmd
      gradviz trace "e = a*b; d = e + c; L = d*f" a=2 b=-3 c=10 f=-2 --frames out --step 5
      gradviz trace "e = a*b; d = e + c; L = d*f" a=2 b=-3 c=10 f=-2 -o trace.html
      gradviz trace "e = a*b; d = e + c; L = d*f" a=2 b=-3 c=10 f=-2 -o backward.svg --animate
      gradviz trace --model xor.json --input 0,1 --level neuron
      gradviz trace "x*x + x" x=3 --json
      gradviz trace -- "-x*2" x=1
    """
    source = graph_source(expr, assignments, model_path)
    if frame_format is not None and frames is None:
        raise click.UsageError("--format is the format of the --frames files: give --frames DIR")
    if step is not None and frames is None:
        raise click.UsageError("--step picks the frame of one step: give --frames DIR")
    level = level.lower()
    if animate and page is None:
        raise click.UsageError("--animate writes the -o file: give -o FILE.svg")
    if page is not None and format_for(str(page)) not in formats(
        "animation" if animate else "page"
    ):
        if animate:
            raise OutputError(
                f"trace -o with --animate writes an SVG picture, not {str(page)!r}",
                hint="Name it FILE.svg; without --animate, -o FILE.html writes a live page.",
            )
        raise OutputError(
            f"trace -o writes an HTML page, not {str(page)!r}",
            hint="Name it FILE.html (or FILE.svg with --animate); for a picture of each step "
            "use --frames DIR.",
        )
    extension = (frame_format or "svg").lower()
    scalar = level == "scalar"
    if model_path is None:
        if not scalar:
            raise click.UsageError("--level is for --model (an expression has no neurons)")
        if input_text is not None or target is not None:
            raise click.UsageError("--input and --target are for --model")
        program = source.program(seed)
        value, clusters = program.output, None
    else:
        graph = model_loss_graph(model_path, input_text, target)
        value, clusters = graph.loss, graph.clusters
        if not scalar and page is not None:
            what = "an animation" if animate else "a page"
            raise click.UsageError(f"-o ({what}) draws every scalar: use it without --level")
        if not scalar and show_forward:
            raise click.UsageError("--forward shows scalar nodes: use it without --level")
    # The frames (as changes: they take the graph's memory, not frames × nodes), checked
    # before anything is printed or written.
    drawn = None
    if scalar:
        steps: list = tracing.trace(value)
        if frames is not None or animate:
            drawn = trace_frames(value, steps, clusters)
    else:
        steps = tracing.network_trace(graph, level)
        if frames is not None:
            from gradviz.model import data_set_status  # lazy: start-up

            statuses = data_set_status(graph) if level == "layer" else None
            diagram = network_diagram(graph, level, statuses=statuses)
            drawn = views.network_frames(diagram, steps, level)
    if step is not None and not 1 <= step <= len(drawn):  # (--step needs --frames)
        raise InputError(f"--step {step}: the backward pass has steps 1 to {len(drawn)}")
    if frames is not None:
        check_frames(drawn, FRAME_FORMATS[extension], one=step is not None)
    if animate:
        check_animation(drawn)
    # With -o, the page (or the animation) holds the trace: only where it went is said,
    # as `draw -o` does; --frames alone still prints the trace beside its files.
    console = stdout_console(soft_wrap=True)
    if as_json or page is not None:
        pass
    elif not scalar:
        x = ", ".join(fmt(v) for v in graph.x)
        loss = fmt(graph.loss.data)
        title = f"(one {level} per step; input ({x}), target {fmt(graph.y)}, loss {loss})"
        console.print(views.network_view(steps, title))
    else:
        out = output_name(value)
        if show_forward:
            console.print(views.forward_view(tracing.forward(value)))
            console.print()
        console.print(views.backward_view(steps, out))
        console.print()
        names = node_names(topological_order(value))
        unused = [names[v] for v in tracing.unreached(value, steps)]
        console.print(views.gradients_view(tracing.leaf_gradients(value, steps), out, unused))
    if scalar and model_path is not None and len(steps) > MODEL_STEPS_NOTE:
        say(f"note: {len(steps)} steps; --level neuron or --level layer shows fewer")
    if frames is not None:
        # one direction for all: the last frame's (every grad), a collapsed view's drawing's
        rankdir = preferred_rankdir(drawn[-1] if scalar else drawn.base)
        write_frames(drawn, frames, extension, source.inputs, rankdir, page, step=step)
    if page is not None:
        refuse_clashes([("output", page)], source.inputs)
        if animate:
            write_atomic(page, animated_trace(drawn))  # the direction that fits a column
            say(f"wrote {page} (svg, {len(drawn)} steps animated)")
        else:
            expression = program.source if model_path is None else None
            diagram = diagram_from_value(value, clusters=clusters)
            html = render(diagram, "html", rankdir=None, expression=expression, command="trace")
            write_atomic(page, html)
            say(f"wrote {page} (html)")
    if as_json and scalar:  # last: a document only for a command that did all it was asked
        click.echo(dumps(tracing.document(value, steps)))
    elif as_json:
        click.echo(dumps(tracing.network_document(graph, level, steps)))


def _model_check_graph(
    model_path: Path, input_text: str | None, target: float | None, samples: int, seed: int
) -> tuple[Value, list[Value]]:
    """The loss of a saved model (of --input, else of every example of its data set, as a
    batch) and a seeded random sample of its parameters."""
    from gradviz.model import load_model, network_loss_graph, parse_input  # lazy: start-up

    model = load_model(model_path)
    if input_text is not None:
        graph = network_loss_graph(model, parse_input(input_text, model.spec.layers[0]), target)
        loss, parameters, what = graph.loss, graph.network.parameters(), "one example"
    else:
        if target is not None:
            raise click.UsageError("--target goes with --input")
        data = model.dataset()
        network = model.network()
        inputs = [
            Value(data.X[:, j].astype(np.float64), label=f"x{j}") for j in range(data.n_features)
        ]
        with np.errstate(all="ignore"):
            loss = network.build(inputs, Value(data.Y.astype(np.float64), label="y")).loss
        parameters = network.parameters()
        what = f"each of the {data.size} examples of {data.name}"
    rng = np.random.default_rng(seed)
    count = min(samples, len(parameters))
    chosen = sorted(rng.choice(len(parameters), size=count, replace=False).tolist())
    say(f"note: checking {count} of {len(parameters)} parameters (seed {seed}) on {what}")
    return loss, [parameters[i] for i in chosen]


@command(
    "check",
    cls=ExpressionCommand,
    epilog="Exit status: 0 every leaf passed (or was not comparable), 1 a leaf failed, "
    "2 bad input.",
)
@click.argument("expr", metavar="[EXPR]", required=False)
@click.argument("assignments", nargs=-1, metavar="[NAME=VALUE]...")
@click.option("--wrt", metavar="A,B", help="Check only these leaves (default: every named leaf).")
@click.option(
    "--eps",
    type=float,
    help="Finite-difference step h (default: ∛ε·max(1,|x|) ≈ 6e-6 for float64).",
)
@click.option(
    "--tol",
    type=float,
    default=checking.DEFAULT_TOL,
    show_default=True,
    help="Largest relative error that passes (an absolute error within the rounding "
    "noise and truncation estimate of the finite difference passes too).",
)
@model_options(
    model_help="Check a saved model's parameters (gradviz train --save) instead of EXPR.",
    input_help="With --model: one example only.",
    seed_help="Seed of the default leaf values (EXPR) or of the parameter sample (--model).",
)
@click.option(
    "--samples",
    type=click.IntRange(min=1),
    help=f"With --model: how many parameters to check, picked at random (seeded; "
    f"default {DEFAULT_SAMPLES}).",
)
@click.option(
    "--show",
    is_flag=True,
    help="Also print each leaf's L(x+h), L(x-h), their difference over 2h and the "
    "analytic gradient, with the digits it takes to see them differ, and the absolute "
    "error the table leaves out.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the comparison as JSON instead of the table (every number, --show's too); "
    "the exit status is the same.",
)
def check(
    expr: str | None,
    assignments: tuple[str, ...],
    wrt: str | None,
    eps: float | None,
    tol: float,
    seed: int,
    model_path: Path | None,
    samples: int | None,
    input_text: str | None,
    target: float | None,
    show: bool,
    as_json: bool,
) -> None:
    """Check the gradients of EXPR against finite differences.

    For each leaf: the gradient of the backward pass, the finite-difference
    estimate, their relative error, and pass or fail (the absolute error is in
    --show, so the table fits 80 columns). The estimate
    extrapolates the central differences D(h) = (L(x+h) - L(x-h)) / 2h and D(h/2)
    to (4·D(h/2) - D(h)) / 3, which cancels their h² error (large when |x|, and so
    h, is large); what may remain of it is counted, with the rounding noise.
    Points where the comparison means nothing are reported, not failed: nan or
    inf on the leaf's way to the output (a nan weight, exp overflowing; at x or
    within ±h), an infinite slope (sqrt at 0) or a kink (relu or abs at 0), and a
    leaf whose every path runs through detach. Values
    behind a detach are held fixed while nudging, as the backward pass treats them.
    Exit status 1 if any leaf fails, so it can guard a new op in CI.

    EXPR and NAME=VALUE work as for `gradviz draw`. --model FILE checks a random
    sample of a saved network's parameters (--samples N, seeded by --seed) on every
    example of its data set, or on one (--input).

    \b
    Examples:
      gradviz check "e = a*b; d = e + c; L = d*f" a=2 b=-3 c=10 f=-2
      gradviz check "tanh(w*x + b)" x=0.5 w=-3 b=1 --wrt w,b
      gradviz check "relu(x) * 3" x=0
      gradviz check --model xor.json --samples 5
      gradviz check -- "-x*2" x=1
      gradviz check "x**3" x=2 --show
      gradviz check "tanh(w*x + b)" x=0.5 w=-3 b=1 --json
    """
    source = graph_source(expr, assignments, model_path)
    if model_path is None:
        if input_text is not None or target is not None:
            raise click.UsageError("--input and --target are for --model")
        if samples is not None:
            raise click.UsageError(
                "--samples is for --model (an expression's leaves are all checked; "
                "--wrt picks some)"
            )
        value = source.program(seed).output
        leaves = None if wrt is None else [part.strip() for part in wrt.split(",")]
        if leaves is not None and not all(leaves):
            raise InputError(f"--wrt takes leaf names separated by commas, got {quoted(wrt)}")
    else:
        if wrt is not None:
            raise click.UsageError("--wrt is for EXPR; with --model, use --samples")
        value, leaves = _model_check_graph(
            model_path, input_text, target, samples or DEFAULT_SAMPLES, seed
        )
    rows = checking.gradcheck(value, leaves, eps=eps, tol=tol)
    out = output_name(value)
    if as_json:
        click.echo(dumps(checking.document(rows, out, words=flag)))
    else:
        stdout_console(soft_wrap=True).print(views.check_view(rows, out, show=show, words=flag))
    failed = [row.name for row in rows if row.failed]
    if failed:
        raise GradvizError(
            f"gradient check failed for {', '.join(failed)}: the backward pass disagrees "
            "with finite differences"
        )
