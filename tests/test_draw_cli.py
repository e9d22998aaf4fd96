"""`gradviz draw` through click's CliRunner: output, files, exit statuses, stderr."""

from __future__ import annotations

import errno
import importlib
import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from graphviz_support import needs_system_dot
from mermaid.check import parse_mermaid

import gradviz.files as files
from gradviz.cli import cli, flag
from gradviz.errors import WriteError
from gradviz.numbers import fmt

ROOT = Path(__file__).resolve().parent.parent
HAND = ["draw", "e = a*b; d = e + c; L = d*f", "a=2", "b=-3", "c=10", "f=-2"]
COLOUR = re.compile(r"\x1b\[[0-9;]*(3[0-9]|4[0-9]|9[0-7])m")


def run(*args: str, **env: str):
    return CliRunner().invoke(cli, list(args), env={"GRADVIZ_DOT": None, **env})


def test_bare_expression_shows_something_meaningful_and_says_which_defaults():
    result = run("draw", "(a+b)*c")
    assert result.exit_code == 0, result.output
    note = re.fullmatch(
        r"note: no value given for a, b, c: used a=(\S+), b=(\S+), c=(\S+) \(set them as "
        r"a=VALUE, or change them with --seed N\)\n",
        result.stderr,
    )
    assert note, result.stderr
    a, b, c = (float(x) for x in note.groups())
    lines = result.stdout.splitlines()
    assert lines[0].startswith("L ← *  data ")  # the unnamed output, named as trace names it
    assert "grad = ∂L/∂leaf" in result.stdout
    assert COLOUR.search(result.stdout) is None  # not a terminal: no colour
    table = {line.split()[0]: line.split()[1:] for line in lines[-3:]}
    assert set(table) == {"a", "b", "c"}
    assert float(table["c"][1]) == pytest.approx(a + b, rel=1e-3)  # d/dc (a+b)*c = a+b
    assert float(table["a"][1]) == pytest.approx(c, rel=1e-3)


def test_one_default_leaf_is_it_not_them():
    result = run("draw", "x*x")
    assert result.exit_code == 0, result.output
    assert re.fullmatch(
        r"note: no value given for x: used x=\S+ \(set it as x=VALUE, or change it with "
        r"--seed N\)\n",
        result.stderr,
    ), result.stderr


def test_seed_changes_defaults_reproducibly():
    first, again, other = run("draw", "a*b"), run("draw", "a*b"), run("draw", "a*b", "--seed", "7")
    assert first.stdout == again.stdout and first.stderr == again.stderr
    assert other.stderr != first.stderr


HAND_NUMBERS = [
    ("a", "2", "6"),
    ("b", "-3", "-4"),
    ("c", "10", "-2"),
    ("f", "-2", "4"),
    ("L", "-8", "1"),
]


def test_hand_example_in_the_terminal():
    result = run(*HAND)
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout.splitlines()[0] == "L ← *  data -8  grad 1"
    for name, data, grad in HAND_NUMBERS[:4]:
        assert re.search(rf"^{name} +{data} +{grad}$", result.stdout, re.M)


def test_hand_example_in_every_file_format(tmp_path):
    files = ["g.dot", "g.gv", "g.svg", "g.png", "g.mmd", "g.md", "g.json", "g.txt"]
    result = run(*HAND, *[arg for f in files for arg in ("-o", str(tmp_path / f))])
    assert result.exit_code == 0, result.output
    assert result.stderr.count("wrote ") == len(files)
    read = {f: (tmp_path / f).read_bytes() for f in files}
    for name, data, grad in HAND_NUMBERS:
        record = f"{name} | data {data} | grad {grad}"
        assert f"{{ {record} }}".encode() in read["g.dot"] and read["g.gv"] == read["g.dot"]
        # Mermaid: a number held to its name by a narrow no-break space (never split)
        shown = f"{name} │ data\u202f{data} │ grad\u202f{grad}"
        assert shown.encode() in read["g.mmd"]
        assert re.search(
            rf"\b{name}( ← \*)?  data {data}  grad {grad}$", read["g.txt"].decode(), re.M
        )
    svg_text = {
        t.text for t in ET.fromstring(read["g.svg"]).iter("{http://www.w3.org/2000/svg}text")
    }
    assert {f"data {d}" for _, d, _ in HAND_NUMBERS} <= svg_text
    assert {f"grad {g}" for _, _, g in HAND_NUMBERS} <= svg_text
    assert read["g.png"].startswith(b"\x89PNG")
    assert read["g.md"] == b"```mermaid\n" + read["g.mmd"] + b"```\n"
    nodes = json.loads(read["g.json"])["nodes"]
    by_label = {n["label"]: (n["data"], n["grad"]) for n in nodes if n["kind"] == "value"}
    for name, data, grad in HAND_NUMBERS:
        assert by_label[name] == (float(data), float(grad))
    (parsed,) = parse_mermaid([read["g.mmd"].decode()], titles=False)
    assert parsed["ok"], parsed
    for name, data, grad in HAND_NUMBERS:
        assert f"{name} │ data\u202f{data} │ grad\u202f{grad}" in parsed["nodes"].values()


@pytest.mark.parametrize("program", [pytest.param("system", marks=needs_system_dot), "pure"])
def test_svg_through_both_graphviz_programs(tmp_path, program):
    result = run(*HAND, "-o", str(tmp_path / "g.svg"), GRADVIZ_DOT=program)
    assert result.exit_code == 0, result.output
    svg = ET.parse(tmp_path / "g.svg").getroot()
    shown = {t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")}
    assert {"grad 6", "grad -4", "grad -2", "grad 4", "data -8"} <= shown


@needs_system_dot
def test_pdf_with_system_dot(tmp_path):
    result = run(*HAND, "-o", str(tmp_path / "g.pdf"), GRADVIZ_DOT="system")
    assert result.exit_code == 0 and (tmp_path / "g.pdf").read_bytes().startswith(b"%PDF-")


def test_pdf_without_system_dot_fails_but_other_outputs_are_written(tmp_path):
    result = run(
        *HAND, "-o", str(tmp_path / "g.pdf"), "-o", str(tmp_path / "g.svg"), GRADVIZ_DOT="pure"
    )
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1].startswith("Error: PDF needs Graphviz's own `dot`")
    assert (tmp_path / "g.svg").is_file() and not (tmp_path / "g.pdf").exists()


def test_graphviz_switched_off_says_so(tmp_path):
    result = run(
        *HAND, "-o", str(tmp_path / "g.svg"), "-o", str(tmp_path / "g.json"), GRADVIZ_DOT="none"
    )
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1
    assert errors[0].startswith("Error: GRADVIZ_DOT=none switched Graphviz off, so SVG cannot")
    assert "pip install" not in errors[0]  # it is installed, just switched off
    assert (tmp_path / "g.json").is_file() and not (tmp_path / "g.svg").exists()


@pytest.mark.parametrize(
    ("variable", "value"),
    [("GRADVIZ_DOT", "sytem"), ("GRADVIZ_DOT", "/no/such/dot"), ("GRADVIZ_DOT_TIMEOUT", "soon")],
)
def test_bad_graphviz_settings_are_bad_input_before_anything_is_written(tmp_path, variable, value):
    result = run(
        *HAND, "-o", str(tmp_path / "g.json"), "-o", str(tmp_path / "g.svg"), **{variable: value}
    )
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {variable}={value!r} ")
    assert len(result.stderr.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []
    text_only = run(*HAND, "-f", "json", **{variable: value})  # no picture: not needed
    assert text_only.exit_code == 0


def test_text_formats_to_stdout():
    mermaid = run(*HAND, "-o", "-", "-f", "mermaid")
    assert mermaid.exit_code == 0 and mermaid.stdout.startswith("flowchart LR\n")
    as_json = run(*HAND, "-f", "json")  # -f without -o: stdout
    assert json.loads(as_json.stdout)["nodes"][0]["grad"] == 6.0
    dot = run(*HAND, "-o", "-", "-f", "dot", "--rankdir", "tb", "--precision", "2")
    assert 'rankdir="TB"' in dot.stdout
    text = run(*HAND, "-o", "-")
    assert text.stdout == run(*HAND).stdout


def test_binary_format_to_stdout_is_refused():
    result = run(*HAND, "-o", "-", "-f", "png")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (
        "Error: PNG is binary and cannot be written to stdout\nWrite it to a file: -o graph.png\n"
    )


def test_bad_outputs_are_refused_before_anything_is_written(tmp_path):
    good = tmp_path / "g.svg"
    result = run(*HAND, "-o", str(good), "-o", str(tmp_path / "g.jpeg"))
    assert result.exit_code == 2 and "cannot tell the format" in result.stderr
    assert not good.exists()
    twice = run(*HAND, "-o", str(good), "-o", str(good))
    assert twice.exit_code == 2 and "given twice" in twice.stderr
    stdout_twice = run(*HAND, "-o", "-", "-o", "-")
    assert stdout_twice.exit_code == 2 and stdout_twice.stdout == ""
    assert stdout_twice.stderr == (
        "Error: '-' (stdout) is given twice as an output\nGive each output a file of its own.\n"
    )


def test_expression_files_and_refusing_to_overwrite_them(tmp_path, monkeypatch):
    source = tmp_path / "hand.expr"
    source.write_bytes((ROOT / "samples" / "hand.expr").read_bytes())
    monkeypatch.chdir(tmp_path)
    by_at = run("draw", "@hand.expr")
    by_path = run("draw", "hand.expr")
    assert by_at.exit_code == 0 and by_at.stdout == by_path.stdout
    assert by_at.stdout.splitlines()[0] == "L ← *  data -8  grad 1"
    before = source.read_bytes()
    refused = run("draw", "hand.expr", "-o", "hand.expr", "-f", "json")
    assert refused.exit_code == 2 and "it is an input" in refused.stderr
    assert source.read_bytes() == before
    missing = run("draw", "@nope.expr")
    assert missing.exit_code == 2 and "cannot read 'nope.expr'" in missing.stderr
    for bare in ("@", "@ "):  # not "cannot read '.': Is a directory"
        result = run("draw", bare)
        assert result.exit_code == 2
        assert result.stderr == (
            "Error: '@' needs a file name after it: @FILE, e.g. @samples/hand.expr\n"
        )


def test_unnamed_output_has_one_name_in_every_format():
    # the terminal called it L, the pictures left it blank, JSON said "" (and "L:")
    args = ("draw", "a*b", "a=2", "b=3")
    assert run(*args).stdout.splitlines()[0] == "L ← *  data 6  grad 1"
    assert 'label="{ L | data 6 | grad 1 }"' in run(*args, "-f", "dot").stdout
    assert 'n2["L │ data\u202f6 │ grad\u202f1"]' in run(*args, "-f", "mermaid").stdout
    output = json.loads(run(*args, "-f", "json").stdout)["nodes"][-1]
    assert (output["label"], output["detail"].split(":")[0]) == ("L", "L")


def test_mermaid_over_its_limit_says_so_once():
    chain = "x" + "*x" * 200  # 600 edges
    result = run("draw", chain, "x=1", "-f", "mermaid")
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.count("Mermaid refuses more than 500") == 1
    assert result.stderr.startswith("Error: the graph has 600 edges")
    assert "Write SVG instead (-o graph.svg), or draw a part of the expression." in result.stderr
    near = run("draw", "x" + "*x" * 150, "x=1", "-f", "mermaid")  # 450 edges: a warning
    assert near.exit_code == 0 and near.stderr.startswith("warning: 450 edges: Mermaid refuses")


@pytest.fixture(scope="module")
def xor_model(tmp_path_factory) -> Path:
    model = tmp_path_factory.mktemp("model") / "xor.json"
    assert run("train", "xor", "--epochs", "5", "--quiet", "--save", str(model)).exit_code == 0
    return model


def test_model_without_input_draws_the_first_example_as_trace_does(xor_model):
    result = run("draw", "--model", str(xor_model), "-f", "json")
    assert result.exit_code == 0, result.output
    note = "note: no --input given: using the first example of xor, x = (0, 0), y = 0\n"
    assert result.stderr.startswith(note)
    assert run("trace", "--model", str(xor_model)).stderr.startswith(note)
    drawn = json.loads(result.stdout)
    assert drawn["title"] == "xor: loss of input (0, 0), target 0"
    assert drawn == json.loads(
        run("draw", "--model", str(xor_model), "--input", "0,0", "-f", "json").stdout
    )
    other = run("draw", "--model", str(xor_model), "--target", "1", "-f", "json")
    assert json.loads(other.stdout)["title"] == "xor: loss of input (0, 0), target 1"


def test_size_advice_on_a_collapsed_model_offers_only_coarser_levels(xor_model):
    from gradviz.drawings import model_diagrams
    from gradviz.model import load_model, network_loss_graph
    from gradviz.render.diagram import draw_less

    graph = network_loss_graph(load_model(xor_model), (0.0, 1.0))
    advice = {
        level: draw_less(model_diagrams(graph, level)[False][0])
        for level in ("scalar", "neuron", "layer")
    }
    assert {level: less.words(flag) for level, less in advice.items()} == {
        "scalar": "draw a collapsed view (--level neuron or --level layer)",
        "neuron": "draw a collapsed view (--level layer)",
        "layer": "draw a smaller network",
    }
    assert advice["neuron"].words() == "draw a collapsed view (level='layer')"  # Python's


def test_no_grad_draws_data_only(tmp_path):
    result = run(*HAND, "--no-grad")
    assert result.exit_code == 0 and "grad" not in result.stdout
    assert result.stdout.splitlines()[0] == "L ← *  data -8"


def test_bad_input_exits_2_with_a_caret_and_no_traceback():
    result = run("draw", "a[0] + b")
    assert result.exit_code == 2
    assert "Traceback" not in result.output and "^" in result.stderr
    assert "a[0] + b" in result.stderr  # brackets printed literally
    bad_value = run("draw", "a*b", "a=x")
    assert bad_value.exit_code == 2 and "not a number" in bad_value.stderr
    bad_option = run("draw", "a*b", "--rankdir", "XY")
    assert bad_option.exit_code == 2


def test_colour_only_when_asked_and_never_with_no_color():
    coloured = run("draw", "x*y", "x=1", "y=1e-9", FORCE_COLOR="1")
    assert COLOUR.search(coloured.stdout)
    plain = run("draw", "x*y", "x=1", "y=1e-9", FORCE_COLOR="1", NO_COLOR="1")
    assert COLOUR.search(plain.stdout) is None and "1e-9" in plain.stdout


def test_help_has_an_example():
    result = run("draw", "--help")
    assert result.exit_code == 0
    assert 'gradviz draw "e = a*b; d = e + c; L = d*f" a=2 b=-3 c=10 f=-2' in result.stdout
    assert "@FILE" in result.stdout


def test_rankdir_choices_show_in_the_case_of_their_default():
    help_text = " ".join(run("draw", "--help").stdout.split())
    assert "--rankdir [LR|TB|RL|BT] " in help_text and "(default LR;" in help_text
    for typed in ("bt", "Bt", "BT"):
        result = run(*HAND, "-f", "mermaid", "--rankdir", typed)
        assert result.exit_code == 0 and result.stdout.startswith("flowchart BT\n")
    bad = run(*HAND, "--rankdir", "up")
    assert bad.exit_code == 2
    assert "'up' is not one of 'LR', 'TB', 'RL', 'BT'" in bad.stderr


def test_the_default_values_note_stays_one_short_line():
    many = " + ".join(f"x{i}" for i in range(300))
    result = run("draw", many, "-f", "json")
    assert result.exit_code == 0, result.output
    note = result.stderr.splitlines()[0]
    values = json.loads(result.stdout)["nodes"]
    x9 = next(n["data"] for n in values if n["label"] == "x9")
    assert note.startswith("note: no value given for 300 leaves: used x0=")
    assert f", x9={fmt(x9)}, … and 290 more (set them as x0=VALUE," in note
    assert "x10=" not in note and len(note) < 300
    few = run("draw", "a*b", "-f", "json").stderr
    assert few.startswith("note: no value given for a, b: used a=")


def test_a_failed_write_is_a_runtime_failure_and_other_outputs_are_written(tmp_path, monkeypatch):
    real_fsync, calls = os.fsync, []

    def fsync(fd: int) -> None:  # the disk fills up during the first file only
        calls.append(fd)
        if len(calls) == 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    monkeypatch.setattr(files.os, "fsync", fsync)
    monkeypatch.chdir(tmp_path)
    result = run(*HAND, "-o", "a.json", "-o", "b.dot")
    assert result.exit_code == 1, result.output
    assert "Error: cannot write 'a.json': No space left on device" in result.stderr
    assert "wrote b.dot (dot)" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.dot"]


def test_a_bad_output_path_is_bad_input(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file").write_text("")
    result = run(*HAND, "-o", "file/g.dot")
    assert result.exit_code == 2
    assert "Error: cannot write 'file/g.dot': Not a directory" in result.stderr


def test_stdout_on_a_full_disk_is_a_runtime_failure(monkeypatch):
    class FullDisk:
        def write(self, data) -> int:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def flush(self) -> None:
            pass

    class Stdout:
        buffer = FullDisk()

        def flush(self) -> None:
            pass

    draw_module = importlib.import_module("gradviz.cli.draw")
    monkeypatch.setattr(draw_module.sys, "stdout", Stdout())
    with pytest.raises(WriteError, match="cannot write to stdout: No space left on device"):
        draw_module._write_stdout(b"digraph {}")
