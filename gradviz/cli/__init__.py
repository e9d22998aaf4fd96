"""The `gradviz` command line: a thin layer over the library.

This package is the one place where library errors become exit statuses:
0 ok, 1 runtime failure, 2 bad input (click's own contract). No traceback is
shown unless `--traceback` is given.
"""

from __future__ import annotations

import errno
import functools
import importlib
import os
import re
import signal
import sys

import click

from gradviz.cli.options import traceback_option
from gradviz.errors import QUOTE_LIMIT, GradvizError, quoted
from gradviz.text import printable_lines

_LISTING = "gradviz.listing_commands"  # ctx.meta key: --help is listing the commands


class Failure(click.ClickException):
    """A library error on its way out: click prints `Error: …` and exits with our code."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(_visible(message))
        self.exit_code = exit_code


def _visible(text: str) -> str:
    """Text for a terminal: a message may quote a spec or model file someone else wrote,
    and an escape sequence in it must not reach the terminal. Lines stay lines."""
    return printable_lines(text)


# A quoted value longer than anything errors.quoted leaves (QUOTE_LIMIT characters and …),
# between word boundaries: `'vvv…' is not one of …`.
_LONG_QUOTE = re.compile(rf"(?<![^\s(:=])'([^'\n]{{{QUOTE_LIMIT + 2},}})'(?=$|[\s),.;:])")
_LONG_LINE = 200
_SHORT_QUOTE = 30  # characters of a value click quotes in a line over _LONG_LINE


def _short_quotes(message: str) -> str:
    """click's messages quote the value given (`'vvv…' is not one of …`) whole: in an
    over-long line, cut it as our own errors do (errors.quoted)."""
    return "\n".join(
        _LONG_QUOTE.sub(
            lambda m: f"'{m.group(1)[:_SHORT_QUOTE]}…' ({len(m.group(1)):,} characters)", line
        )
        if len(line) > _LONG_LINE
        else line
        for line in message.split("\n")
    )


def _closed_pipe() -> click.exceptions.Exit:
    """`gradviz … | head`: the reader left. Point stdout at /dev/null so that nothing
    complains while Python exits, and end quietly with 141 (128 + SIGPIPE, as the shell
    reports a command killed by a closed pipe)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is both
        pass  # stdout is not a real file (tests): nothing will be flushed to a pipe
    return click.exceptions.Exit(141)


class GradvizGroup(click.Group):
    """Runs a command and turns library errors into one clear message and a status.

    Commands named in `COMMANDS` are imported the first time they are asked for (click's
    "lazily loading subcommands"); the command list in `--help` uses their summaries."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, function, summary = COMMANDS[cmd_name]
            if ctx.meta.get(_LISTING):  # `gradviz --help`: the summary is all it shows
                return click.Command(cmd_name, short_help=summary)
            self.add_command(getattr(importlib.import_module(module), function), cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        ctx.meta[_LISTING] = True
        try:
            super().format_commands(ctx, formatter)
        finally:
            del ctx.meta[_LISTING]

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        """Registers `cmd` with a hidden --traceback, so it also works after the name."""
        if not any(p.name == "traceback" for p in cmd.params):
            cmd.params.append(traceback_option())
        super().add_command(cmd, name)

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except GradvizError as error:
            if ctx.meta.get("gradviz.traceback"):
                raise
            words = functools.partial(flag, command=ctx.invoked_subcommand)
            raise Failure(error.render(words), error.exit_code) from None
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
        except KeyboardInterrupt as error:
            # Ctrl-C: files being written are left as they were (atomic writes); say so
            # in one line and exit 130 (128 + SIGINT), not with click's "Aborted!" and 1.
            # SIGTERM the same way (`Terminated`), with 143 (128 + SIGTERM).
            if ctx.meta.get("gradviz.traceback"):
                raise
            click.echo(f"\n{_ended(error)}", err=True)
            raise click.exceptions.Exit(_ended_status(error)) from None
        except RecursionError as error:
            if ctx.meta.get("gradviz.traceback"):
                raise
            raise Failure(f"input too deeply nested to process ({error})", 2) from None
        except Exception as error:  # a bug: say so plainly, keep the traceback for --traceback
            if ctx.meta.get("gradviz.traceback"):
                raise
            if isinstance(error, OSError) and error.errno == errno.ENAMETOOLONG:
                # a name too long for the file system, met while looking at a path the
                # user gave (Path.is_file() raises it): bad input, said in one line
                raise Failure(f"file name too long: {quoted(str(error.filename))}", 2) from None
            raise Failure(
                f"internal error: {type(error).__name__}: {error}\n"
                "This is a bug in gradviz; run again with --traceback and report it.",
                1,
            ) from None


@click.group(cls=GradvizGroup, context_settings={"help_option_names": ["-h", "--help"]})
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
    ctx.meta["gradviz.traceback"] = traceback


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


# gradviz's matrices are small (spec.MAX_WIDTH, MAX_PARAMETERS): BLAS threads cost far more
# CPU than they save on them (the largest network's epoch: 0.5 ms of CPU on one thread,
# 23 ms with OpenBLAS's threads on 2 shared cores, bench/README.md), and starting them
# costs numpy's import about 40 ms. Set before numpy loads; the user's own setting wins.
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


class Terminated(KeyboardInterrupt):
    """SIGTERM (`kill`, a CI runner's timeout, a service stopping), raised where the program
    is as Ctrl-C raises KeyboardInterrupt, so that everything an interrupted run undoes runs
    for it too: the layout program's process group killed (gradviz.layout), temporary files
    and frames removed (gradviz.files, `trace --frames`). Python's default ends the process
    at once, leaving `graphviz-pure` or `dot` running on in a session of its own."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


def _ended(error: BaseException) -> str:
    return "Terminated." if isinstance(error, Terminated) else "Interrupted."


def _ended_status(error: BaseException) -> int:
    return 128 + (signal.SIGTERM if isinstance(error, Terminated) else signal.SIGINT)


def _handle_sigterm() -> None:
    """SIGTERM raises `Terminated`, unless the parent ignores it (then so do we)."""
    try:
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _terminate)
    except (ValueError, OSError):  # not the main thread, or no such signal here
        pass


def main() -> None:
    """Console-script entry point."""
    if "numpy" not in sys.modules:
        for name in BLAS_THREADS:
            os.environ.setdefault(name, "1")
    _handle_sigterm()
    try:
        cli.main(prog_name="gradviz")
    except BrokenPipeError:
        # `gradviz … | head`: the reader left; end quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(141)
    except KeyboardInterrupt as error:
        click.echo(_ended(error), err=True)
        sys.exit(_ended_status(error))


# Each command lives in a module of its own, imported only when that command runs or shows
# its help: `gradviz draw` does not pay for training's imports, nor `gradviz --help` for any.
# Name -> (module, function, summary). The summary is the command's `short_help` (whole at
# 80 columns); tests/test_cli_startup.py checks it, and that the listing is the same as with
# every command loaded.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "draw": (
        "gradviz.cli.draw",
        "draw",
        "Draw EXPR's graph with every node's data and grad.",
    ),
    "trace": (
        "gradviz.cli.trace",
        "trace_command",
        "Show the backward pass of EXPR one step at a time.",
    ),
    "check": (
        "gradviz.cli.trace",
        "check",
        "Check EXPR's gradients against finite differences.",
    ),
    "train": (
        "gradviz.cli.train",
        "train_command",
        "Train a small network and show how it learned.",
    ),
    "inspect": (
        "gradviz.cli.train",
        "inspect_command",
        "Look inside a saved model: predictions, gradients.",
    ),
    "grads": (
        "gradviz.cli.grads",
        "grads",
        "Show how the gradient reaches each layer.",
    ),
    "compare": (
        "gradviz.cli.grads",
        "compare",
        "Two specs or saved models side by side, by layer.",
    ),
}
