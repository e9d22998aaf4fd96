"""The `gradviz` command line: a thin layer over the library, and the one place where
library errors become exit statuses (0 ok, 1 runtime failure, 2 bad input, as click's)."""

from __future__ import annotations

import contextlib
import errno
import functools
import importlib
import os
import re
import signal
import sys
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

import click

from gradviz.cli.options import TRACEBACK_KEY, traceback_option
from gradviz.errors import QUOTE_LIMIT, GradvizError, quoted
from gradviz.text import printable_lines

_LISTING = "gradviz.listing_commands"  # ctx.meta key: --help is listing the commands
HELP_OPTIONS = {"help_option_names": ["-h", "--help"]}


class Failure(click.ClickException):
    """A library error on its way out: click prints `Error: …` and exits with our code.
    The message may quote a file someone else wrote: no escape sequence reaches the terminal."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(printable_lines(message))
        self.exit_code = exit_code


# A quoted value longer than anything errors.quoted leaves (QUOTE_LIMIT characters and …),
# between word boundaries: `'vvv…' is not one of …`.
_LONG_QUOTE = re.compile(rf"(?<![^\s(:=])'([^'\n]{{{QUOTE_LIMIT + 2},}})'(?=$|[\s),.;:])")
_LONG_LINE = 200
_SHORT_QUOTE = 30  # characters of a value click quotes in a line over _LONG_LINE


def _short_quotes(message: str) -> str:
    """click quotes the value given whole: in an over-long line, cut it as errors.quoted does."""
    return "\n".join(
        _LONG_QUOTE.sub(
            lambda m: f"'{m.group(1)[:_SHORT_QUOTE]}…' ({len(m.group(1)):,} characters)", line
        )
        if len(line) > _LONG_LINE
        else line
        for line in message.split("\n")
    )


def _closed_pipe() -> click.exceptions.Exit:
    """`gradviz … | head`: stdout to /dev/null so that nothing complains while Python
    exits, and 141 (128 + SIGPIPE, as a shell reports a command killed by a closed pipe)."""
    # stdout not a real file (tests): nothing will be flushed to a pipe
    with contextlib.suppress(OSError, ValueError, AttributeError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return click.exceptions.Exit(141)


def _outcome(error: BaseException, command: str | None) -> click.exceptions.Exit | Failure:
    """What an error ends the command with, when no --traceback asks for Python's."""
    if isinstance(error, GradvizError):
        return Failure(error.render(functools.partial(flag, command=command)), error.exit_code)
    if isinstance(error, KeyboardInterrupt):
        # Ctrl-C (SIGTERM: `Terminated`): files being written are left as they were (atomic
        # writes); one line and 130 (128 + SIGINT) or 143, not click's "Aborted!" and 1.
        words, status = _ended(error)
        click.echo(f"\n{words}", err=True)
        return click.exceptions.Exit(status)
    if isinstance(error, RecursionError):
        return Failure(f"input too deeply nested to process ({error})", 2)
    if isinstance(error, OSError) and error.errno == errno.ENAMETOOLONG:
        # met while looking at a path the user gave (Path.is_file() raises it): bad input
        return Failure(f"file name too long: {quoted(str(error.filename))}", 2)
    return Failure(  # a bug: said plainly, the traceback kept for --traceback
        f"internal error: {type(error).__name__}: {error}\n"
        "This is a bug in gradviz; run again with --traceback and report it.",
        1,
    )


class GradvizGroup(click.Group):
    """Turns library errors into one message and a status; imports a command of `COMMANDS`
    when it is first asked for (click's "lazily loading subcommands")."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            row = COMMANDS[cmd_name]
            if ctx.meta.get(_LISTING):  # `gradviz --help`: the summary is all it shows
                return click.Command(cmd_name, short_help=row.summary)
            module = importlib.import_module(f"gradviz.cli.{row.module}")
            self.add_command(getattr(module, row.function), cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        ctx.meta[_LISTING] = True
        try:
            super().format_commands(ctx, formatter)
        finally:
            del ctx.meta[_LISTING]

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        if not any(p.name == "traceback" for p in cmd.params):
            cmd.params.append(traceback_option())
        super().add_command(cmd, name)

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except click.ClickException as error:
            error.message = _short_quotes(error.message)  # click's own messages echo values
            raise
        except (click.exceptions.Exit, click.Abort):
            raise
        except BrokenPipeError:
            raise _closed_pipe() from None
        except SystemExit as error:
            # rich's consoles end a closed pipe with SystemExit(1) (Console.on_broken_pipe)
            if isinstance(error.__context__, BrokenPipeError):
                raise _closed_pipe() from None
            raise
        except (KeyboardInterrupt, Exception) as error:
            if ctx.meta.get(TRACEBACK_KEY):
                raise
            raise _outcome(error, ctx.invoked_subcommand) from None


@click.group(cls=GradvizGroup, context_settings=HELP_OPTIONS)
@click.version_option(package_name="gradviz", prog_name="gradviz")
@click.option(
    "--traceback",
    is_flag=True,
    envvar="GRADVIZ_TRACEBACK",
    help="Show Python's traceback on errors (for debugging gradviz itself).",
)
@click.pass_context
def cli(ctx: click.Context, traceback: bool) -> None:
    """See backpropagation: build a computation graph, run it forward and backward,
    and show every node's value and gradient.

    \b
    Examples:
      gradviz draw "(a+b)*c" a=2 b=-3 c=10
      gradviz draw "e = a*b; d = e + c; L = d*f" -o graph.svg

    Exit status: 0 ok, 1 runtime failure, 2 bad input.
    """
    ctx.meta[TRACEBACK_KEY] = traceback


# The options whose flag is not their keyword with dashes.
FLAGS = {"record_every": "--every", "learning_rate": "--lr", "model_path": "--model"}
# Settings the command line words as a whole, by command (None: every other command).
SETTINGS = {"fmt='svg'": {"trace": "--format svg", None: "-o graph.svg"}}
# What the library's views point at, in the CLI's words (Python's defaults say it in Python).
EVERY_NUMBER = "see --json"  # where a table's columns left out for lack of width are
STATUS_MEANINGS = "gradviz grads --help"  # where each gradient status is explained
QUOTES = "'\""  # around a setting's value in Python (`level='layer'`), not on a command line


def flag(option: str, command: str | None = None) -> str:
    """An option a library text names (`eps`, `keep_going`) as its flag (`--eps`,
    `--keep-going`): the one place library words become command-line words. A setting
    (`level='layer'`, `keep_going=True`, `grad=False`) becomes the flag with its value
    (`--level layer`), the flag alone, or the flag's `--no-` form (`--no-grad`)."""
    if option in SETTINGS:  # as `command` takes it (trace writes SVG frames with --format)
        return SETTINGS[option].get(command, SETTINGS[option][None])
    name, setting, value = option.partition("=")
    if setting and value == "False":
        return "--no-" + name.replace("_", "-")
    words = FLAGS.get(name, "--" + name.replace("_", "-"))
    return words if not setting or value == "True" else f"{words} {value.strip(QUOTES)}"


# gradviz's matrices are small: BLAS threads cost far more CPU than they save on them
# (bench/README.md) and starting them costs numpy's import about 40 ms. Set before numpy
# loads; the user's own setting wins.
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


class Terminated(KeyboardInterrupt):
    """SIGTERM raised as Ctrl-C is, so that it undoes what an interrupted run undoes (the
    layout program killed, temporary files removed): Python's default ends at once."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


def _ended(error: BaseException) -> tuple[str, int]:
    if isinstance(error, Terminated):
        return "Terminated.", 128 + signal.SIGTERM
    return "Interrupted.", 128 + signal.SIGINT


def _handle_sigterm() -> None:
    """SIGTERM raises `Terminated`, unless the parent ignores it (then so do we)."""
    with contextlib.suppress(ValueError, OSError):  # not the main thread, or no such signal
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _terminate)


def main() -> None:
    if "numpy" not in sys.modules:
        for name in BLAS_THREADS:
            os.environ.setdefault(name, "1")
    _handle_sigterm()
    try:
        cli.main(prog_name="gradviz")
    except BrokenPipeError:
        sys.exit(_closed_pipe().exit_code)
    except KeyboardInterrupt as error:
        words, status = _ended(error)
        click.echo(words, err=True)
        sys.exit(status)


class Fence(NamedTuple):
    """What a docs fence (gradviz.docs.fence) shows of a command in one picture format: the
    options it adds ({out}: its folder), the file it then reads (a glob: the last match);
    `bare`: flags the body gives bare (the fence names the file); `animate`: the flag
    that makes it one animated SVG (`-o` into {out})."""

    options: tuple[str, ...]
    reads: str
    bare: tuple[str, ...] = ()
    animate: str = ""


class Command(NamedTuple):
    """A command: `function` of module gradviz.cli.`module`, imported only when it runs or
    shows its help; `summary`, its short_help (whole at 80 columns); what a docs fence
    shows of it, by format (`text`: what it prints)."""

    module: str
    function: str
    summary: str
    fence: Mapping[str, Fence] = MappingProxyType({})
    text: bool = True


def _into(**files: str) -> dict[str, Fence]:
    """Fence captures that write one file into the fence's folder: `-o {out}/fence.svg`."""
    return {fmt: Fence(("-o", f"{{out}}/{name}"), name) for fmt, name in files.items()}


_FRAMES = ("--frames", "{out}/frames")
# The commands, each named once: the lazy loading, the listing, each command's short_help
# (`command`) and what a docs fence draws are read from here.
COMMANDS: dict[str, Command] = {
    "draw": Command(
        "draw",
        "draw",
        "Draw EXPR's graph with every node's data and grad.",
        _into(svg="fence.svg", mermaid="fence.mmd", html="fence.html"),
    ),
    "trace": Command(
        "trace",
        "trace_command",
        "Show the backward pass of EXPR one step at a time.",
        {
            "svg": Fence(_FRAMES, "frames/step-*.svg", animate="--animate"),
            "mermaid": Fence((*_FRAMES, "--format", "mmd"), "frames/step-*.mmd"),
            **_into(html="fence.html"),
        },
    ),
    "check": Command("trace", "check", "Check EXPR's gradients against finite differences."),
    "train": Command(
        "train",
        "train_command",
        "Train a small network and show how it learned.",
        {"svg": Fence(("-q",), "picture.svg", bare=("--boundary", "--curves"))},
        text=False,
    ),
    "inspect": Command(
        "inspect",
        "inspect_command",
        "Look inside a saved model: predictions, gradients.",
        _into(html="report.html"),
    ),
    "grads": Command(
        "grads",
        "grads",
        "Show how the gradient reaches each layer.",
        {"svg": Fence((), "picture.svg", bare=("--plot",))},
    ),
    "compare": Command("grads", "compare", "Two specs or saved models side by side, by layer."),
}


def command(name: str, **settings: Any) -> Callable[[Callable[..., Any]], click.Command]:
    """click.command for the command NAME of `COMMANDS`, its short_help from there."""
    return click.command(
        name, short_help=COMMANDS[name].summary, context_settings=HELP_OPTIONS, **settings
    )
