"""The formats table (gradviz.output.FORMATS) and the commands table (gradviz.cli.COMMANDS):
what the command line and the docs fence do follows them, so a row added or changed there
is a format or a command everywhere (issue 32 item 5)."""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from gradviz.cli import COMMANDS, cli
from gradviz.docs import fence
from gradviz.errors import OutputError
from gradviz.output import FORMATS, format_for, formats, suffix_words


def _help(*args: str) -> str:
    result = CliRunner().invoke(cli, [*args, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())  # click wraps the help: compare words


@pytest.mark.parametrize("name", list(FORMATS))
def test_every_suffix_of_a_format_names_it_as_a_file_and_after_f(name: str) -> None:
    for suffix in FORMATS[name].suffixes:
        assert format_for(f"graph{suffix.upper()}") == name
        assert format_for("graph.out", suffix[1:]) == name  # -f mmd, -f gv, -f htm
    assert format_for("graph.out", name) == name


def test_a_suffix_no_row_has_is_refused_naming_every_suffix_there_is() -> None:
    with pytest.raises(OutputError) as error:
        format_for("graph.gif")
    for row in FORMATS.values():
        for suffix in row.suffixes:
            assert suffix in str(error.value.hint)


def test_draws_help_and_f_choices_name_every_format() -> None:
    text = _help("draw")
    assert f"[{'|'.join(FORMATS)}]" in text  # -f's choices
    for row in FORMATS.values():
        assert " ".join(row.help.split()) in text, row.name


def test_the_plot_options_take_the_plot_formats_and_say_so() -> None:
    assert formats("plot") == ["svg", "png", "pdf"]
    words = suffix_words("plot")
    assert words == ".svg, .png or .pdf"
    assert f"to FILE: {words}." in _help("train") and f"to FILE: {words}." in _help("grads")
    runner = CliRunner()
    for option in ("--boundary", "--curves"):
        result = runner.invoke(cli, ["train", "xor", "--epochs", "1", option, "x.mmd"])
        assert result.exit_code == 2
        assert f"{option} x.mmd: a picture is written as {words}" in result.output


def test_traces_frame_formats_are_the_rows_that_frames_take() -> None:
    text = _help("trace")
    frames = [FORMATS[name].suffixes[0][1:] for name in formats("frames")]
    assert frames == ["svg", "mmd"]
    assert f"--format [{'|'.join(frames)}]" in text


def test_every_command_of_the_table_loads_with_its_summary_and_is_listed() -> None:
    listing = CliRunner().invoke(cli, ["--help"]).output
    ctx = click.Context(cli)
    for name, row in COMMANDS.items():
        assert re.search(rf"^  {name} +{re.escape(row.summary)}$", listing, re.M), name
        assert cli.get_command(ctx, name).short_help == row.summary


def test_the_fence_draws_what_the_commands_table_says() -> None:
    assert sorted({*fence.CAPTURES, *fence.TEXT_COMMANDS}) == sorted(COMMANDS)
    assert fence.FORMATS == ("svg", "mermaid", "html", "text")
    for name, row in COMMANDS.items():
        for fmt in row.fence:
            assert fmt in fence.FORMATS
        if not row.text:
            with pytest.raises(fence.FenceError, match=f"format=text: {name} prints nothing"):
                fence._checked([name, "xor"], "text", "")
