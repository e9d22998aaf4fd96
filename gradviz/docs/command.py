"""A fence's command line read as click reads it: the same parser as the terminal's
(`gradviz.cli`), so that every spelling of an option (`-oX`, `-o X`, `--output=X`,
`-qo X`) is the option it is there, and nothing the fence checks differs from what runs.

What the fence refuses is found in the commands themselves: every option declared as an
`OutputOption` (a file or folder the command writes, or their format) is the fence's to
choose, never the body's.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click

from gradviz.cli import cli
from gradviz.cli.options import OutputOption
from gradviz.files import write_atomic


class CommandLineError(Exception):
    """A command line the fence will not run (`message` says why, in gradviz's words)."""


@dataclass(frozen=True)
class Parsed:
    """A command line as click's parser read it: each parameter given, with its values
    in the order given (one per occurrence), and the words left over."""

    command: click.Command
    given: dict[str, list[object]]
    params: dict[str, click.Parameter]
    extra: list[str]

    def values(self) -> Iterator[tuple[click.Parameter, str]]:
        """Every value given (an argument's or an option's), as text."""
        for name, values in self.given.items():
            param = self.params[name]
            if isinstance(param, click.Option) and (param.is_flag or param.count):
                continue
            for value in values:
                for item in value if isinstance(value, (list, tuple)) else [value]:
                    if isinstance(item, str):
                        yield param, item


def command(name: str) -> click.Command | None:
    """The click command `gradviz NAME` runs (None: there is none)."""
    return cli.get_command(click.Context(cli, info_name="gradviz"), name)


def describe(found: click.Command) -> dict[str, object]:
    """What reading a command line needs of a command (its parameters' names and kinds,
    which of its options write), as JSON: kept between builds (`Commands`)."""
    rows = []
    for param in found.params:
        row: dict[str, object] = {"name": param.name, "nargs": param.nargs}
        if isinstance(param, click.Option):
            row.update(
                kind="option",
                opts=list(param.opts),
                secondary_opts=list(param.secondary_opts),
                is_flag=bool(param.is_flag),
                count=bool(param.count),
                multiple=bool(param.multiple),
                writes=param.writes if isinstance(param, OutputOption) else None,
            )
        else:
            row["kind"] = "argument"
        rows.append(row)
    help_names = found.context_settings.get("help_option_names")
    return {"name": found.name, "help_option_names": help_names, "params": rows}


def rebuilt(description: dict) -> click.Command:
    """A command that reads a command line as the described one does, and does nothing."""
    params: list[click.Parameter] = []
    for row in description["params"]:
        if row["kind"] == "argument":
            params.append(click.Argument([row["name"]], nargs=row["nargs"], required=False))
            continue
        pairs = zip(row["opts"], row["secondary_opts"], strict=False)
        names = [f"{a}/{b}" for a, b in pairs] + row["opts"][len(row["secondary_opts"]) :]
        settings: dict[str, object] = {"multiple": row["multiple"]}
        if row["is_flag"]:
            settings["is_flag"] = True
        elif row["count"]:
            settings["count"] = True
        else:
            settings["nargs"] = row["nargs"]
        if row["writes"]:
            params.append(OutputOption([row["name"], *names], writes=row["writes"], **settings))
        else:
            params.append(click.Option([row["name"], *names], **settings))
    settings = {}
    if description.get("help_option_names"):
        settings["help_option_names"] = description["help_option_names"]
    return click.Command(description["name"], params=params, context_settings=settings)


class Commands:
    """The commands a fence's command lines are read with: the real ones (importing a
    command's module costs about 1 s: numpy, rich, its renderers), or their descriptions
    kept in `folder` for this `version` of gradviz, so that a warm rebuild, which draws
    nothing, imports none of them."""

    def __init__(self, folder: Path | None = None, version: str = "") -> None:
        self.folder = folder
        self.version = version
        self.found: dict[str, click.Command | None] = {}

    def get(self, name: str) -> click.Command | None:
        if name not in self.found:
            self.found[name] = self._kept(name) or self._real(name)
        return self.found[name]

    def _path(self, name: str) -> Path | None:
        if self.folder is None or not self.version or not name.isidentifier():
            return None
        return self.folder / "commands" / f"{name}-{self.version}.json"

    def _kept(self, name: str) -> click.Command | None:
        path = self._path(name)
        if path is None:
            return None
        try:
            return rebuilt(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _real(self, name: str) -> click.Command | None:
        found = command(name)
        path = self._path(name)
        if found is not None and path is not None:
            with contextlib.suppress(OSError):  # not kept: the next build imports it again
                path.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(path, json.dumps(describe(found), sort_keys=True))
        return found


def parse(words: list[str], commands: Commands | None = None) -> Parsed:
    """`gradviz WORDS` through click's parser, with nothing converted or run. A word click
    refuses (an unknown option, an abbreviation, an option without its value) is a
    CommandLineError with click's message."""
    found = commands.get(words[0]) if commands is not None else command(words[0])
    if found is None:
        raise CommandLineError(f"{words[0]!r} is not a gradviz command")

    parent = click.Context(cli, info_name="gradviz")
    ctx = click.Context(found, info_name=words[0], parent=parent, **found.context_settings)
    parser = found.make_parser(ctx)
    try:
        opts, extra, order = parser.parse_args(list(words[1:]))
    except click.UsageError as error:
        raise CommandLineError(error.format_message()) from None
    params = {param.name: param for param in found.get_params(ctx) if param.name}
    given: dict[str, list[object]] = {}
    counts: dict[str, int] = {}
    for param in order:  # one entry per occurrence, in the order given
        counts[param.name] = counts.get(param.name, 0) + 1
    for name, count in counts.items():
        value = opts.get(name)
        if isinstance(params[name], click.Option) and params[name].multiple:
            given[name] = list(value or [])
        elif isinstance(params[name], click.Argument):
            given[name] = [value]
        else:  # click keeps the last of an option given twice: each occurrence counts
            given[name] = [value] * count
    return Parsed(found, given, params, list(extra))


def outputs(parsed: Parsed) -> list[click.Option]:
    """The options given that name what the command writes (or its format)."""
    return [
        param for name in parsed.given if isinstance(param := parsed.params[name], OutputOption)
    ]


def output_options(name: str) -> list[OutputOption]:
    """Every option of command NAME that names what it writes."""
    found = command(name)
    return [p for p in (found.params if found else []) if isinstance(p, OutputOption)]


def spelling(words: list[str], option: click.Option, skip: str | None = None) -> str:
    """How the body spelled `option` (`-oREADME.md`, `--output=x`, `-o x.svg`), for an
    error message (an occurrence whose value is `skip` passed over); its first name when
    it cannot be told."""
    longs = [o for o in (*option.opts, *option.secondary_opts) if o.startswith("--")]
    shorts = [o[1] for o in option.opts if len(o) == 2 and o[0] == "-" and o[1] != "-"]
    takes_value = not (option.is_flag or option.count)
    for i, word in enumerate(words):
        if word == "--":
            break
        following = f" {words[i + 1]}" if i + 1 < len(words) else ""
        if skip is not None and following == f" {skip}":
            continue
        if word.startswith("--"):
            name = word.split("=", 1)[0]
            if name in longs:
                return word if "=" in word or not takes_value else word + following
        elif word.startswith("-") and len(word) > 1:
            for at, letter in enumerate(word[1:], start=1):
                if letter in shorts:
                    attached = at + 1 < len(word)
                    return word if attached or not takes_value else word + following
    return option.opts[0]
