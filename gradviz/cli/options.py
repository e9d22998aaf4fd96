"""What `draw`, `trace` and `check` share: reading an expression that starts with `-`,
and the options that pick one example of a saved model instead of an expression."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from gradviz.errors import quoted

F = TypeVar("F", bound=Callable[..., object])

# For the help texts: how to give an expression such as -x*2, which reads as an option.
DASH_HELP = (
    "An expression that starts with '-' goes after -- (options before it), or the "
    "'-' reads as an option: gradviz {command} -- \"-x*2\" x=1."
)

_LONG_OPTION = re.compile(r"--[A-Za-z][\w-]*(=.*)?")


class ExpressionCommand(click.Command):
    """A command whose first argument is an expression. `-x*2` would be taken for an
    unknown option `-x`: then the error says to put `--` before the expression, as the
    help's epilog does (before the exit statuses the command gives)."""

    def __init__(self, name: str, *, epilog: str, **settings: Any) -> None:
        super().__init__(name, epilog=f"{DASH_HELP.format(command=name)}\n\n{epilog}", **settings)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        given = list(args)  # the parser consumes the list it is given
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as error:
            token = _dash_expression(given, error.option_name)
            if token is None:
                raise
            again = _with_dashes(f"gradviz {ctx.info_name}", given, token)
            raise click.UsageError(
                f"{error.format_message()}\nIf {quoted(token)} is the expression, put -- before it "
                f"(options go before --): {again}",
                ctx,
            ) from None


def _dash_expression(args: list[str], option: str) -> str | None:
    """The argument that click read as the unknown `option`, if it may be an expression
    (`-x*2`, `-x`, `-(a+b)`) rather than a mistyped long option (`--outptu`)."""
    for arg in args:
        if arg == "--":
            return None
        if arg.startswith(option) and not _LONG_OPTION.fullmatch(arg):
            return arg
    return None


def _with_dashes(command: str, args: list[str], token: str) -> str:
    """The command line again with `--` before the expression: options first, then the
    expression and its NAME=VALUE assignments."""
    import shlex  # lazy: start-up (only for this error message)

    after = [a for a in args if a == token or ("=" in a and not a.startswith("-"))]
    before = [a for a in args if a not in after]
    return " ".join([command, *map(shlex.quote, before), "--", *map(shlex.quote, after)])


class OutputOption(click.Option):
    """An option that names what the command writes: a file or folder (`writes="file"`),
    or their format (`writes="format"`). Whoever runs a command line on a user's behalf
    finds them from the command: the docs fence refuses them all (it chooses the output)."""

    def __init__(self, *args: object, writes: str = "file", **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.writes = writes


TRACEBACK_KEY = "gradviz.traceback"  # ctx.meta flag: let errors through with their traceback


def _remember_traceback(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:  # never switch off what `gradviz --traceback` or GRADVIZ_TRACEBACK switched on
        ctx.meta[TRACEBACK_KEY] = True


def traceback_option() -> click.Option:
    """`--traceback` after the command name as well as before it (hidden: listed once)."""
    return click.Option(
        ["--traceback"],
        is_flag=True,
        expose_value=False,
        hidden=True,
        is_eager=True,  # set before other options' callbacks can fail
        callback=_remember_traceback,
    )


SEED_HELP = "Seed of the default values of leaves given no value."


def model_options(
    *,
    model_help: str,
    input_help: str = "The example for --model.",
    levels: Sequence[str] = (),
    level_help: str = "",
    seed_help: str = SEED_HELP,
) -> Callable[[F], F]:
    """--model FILE, --input X0,X1,…, --target Y, --level (when `levels` are given; the
    first is the default) and --seed, as `model_path` (a Path), `input_text`, `target`,
    `level`, `seed`: declared once for every command that takes them."""
    options = [
        click.option(
            "--model",
            "model_path",
            type=click.Path(path_type=Path),  # a folder: our one-line error, not click's usage
            metavar="FILE",
            help=model_help,
        ),
        click.option("--input", "input_text", metavar="X0,X1,…", help=input_help),
        click.option(
            "--target", type=float, help="Its target (default: its label in the model's data set)."
        ),
    ]
    if levels:
        options.append(
            click.option(
                "--level",
                type=click.Choice(list(levels), case_sensitive=False),
                default=levels[0],
                show_default=True,
                help=level_help,
            )
        )
    options.append(
        click.option(
            "--seed",
            type=click.IntRange(min=0),
            default=0,
            show_default=True,
            help=seed_help,
        )
    )

    return stacked(options)


def stacked(options: Sequence[Callable[[F], F]]) -> Callable[[F], F]:
    """The options as one decorator, listed in `--help` in the order given."""

    def decorate(function: F) -> F:
        for option in reversed(options):
            function = option(function)
        return function

    return decorate


def picture_options(*report: str) -> Callable[[F], F]:
    """--boundary, --curves and the report page's option (`report`: its flags), the same on
    `train` and `inspect`, the suffixes they take from the formats table."""
    from gradviz.output import suffix_words  # lazy: start-up (`gradviz --help` needs none)

    plot = suffix_words("plot")
    helps = {
        ("--boundary", "boundary_path"): "Write the decision boundary (2-input networks) to "
        f"FILE: {plot}.",
        ("--curves", "curves_path"): f"Write the loss and accuracy curves to FILE: {plot}.",
        (*report, "report_path"): f"Write the report page to FILE{suffix_words('report')}.",
    }
    return stacked(
        [
            click.option(*names, cls=OutputOption, metavar="FILE", help=text)
            for names, text in helps.items()
        ]
    )
