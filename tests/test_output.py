"""Formats, the Graphviz program (system `dot` and graphviz-pure), and atomic writes."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from graphviz_support import needs_system_dot, system_dot

import gradviz.layout as layout
from gradviz import Value
from gradviz.cli import flag
from gradviz.drawn import diagram_from_value
from gradviz.errors import GradvizError, InputError, OutputError, RenderError, Worded, WriteError
from gradviz.files import refuse_clashes, write_atomic
from gradviz.layout import DotProgram, dot_programs, find_dot, run_dot
from gradviz.output import format_for, render, size_warnings
from gradviz.render.dot import layout_cost, to_dot


def hand_diagram():
    a, b, c, f = (Value(x, label=n) for x, n in ((2.0, "a"), (-3.0, "b"), (10.0, "c"), (-2.0, "f")))
    L = (a * b + c) * f
    L.label = "L"
    L.backward()
    return diagram_from_value(L)


# -- formats ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        ("g.dot", "dot"),
        ("g.gv", "dot"),
        ("G.SVG", "svg"),
        ("dir.x/g.png", "png"),
        ("g.pdf", "pdf"),
        ("g.mmd", "mermaid"),
        ("g.md", "markdown"),
        ("g.json", "json"),
        ("g.txt", "text"),
        ("-", "text"),
    ],
)
def test_format_from_extension(path, fmt):
    assert format_for(path) == fmt


def test_format_option_overrides_extension():
    assert format_for("graph.txt", "mermaid") == "mermaid"
    assert format_for("graph", "MD") == "markdown"
    assert format_for("-", "json") == "json"


@pytest.mark.parametrize("path", ["graph", "graph.jpeg", "graph.svg.bak"])
def test_unknown_extension_is_bad_input(path):
    with pytest.raises(OutputError, match="cannot tell the format") as error:
        format_for(path)
    assert error.value.exit_code == 2
    assert "-f" in error.value.render()


def test_unknown_format_option():
    with pytest.raises(OutputError, match="unknown format 'gif'"):
        format_for("g.svg", "gif")


# -- the Graphviz program ---------------------------------------------------------


def test_programs_by_environment(monkeypatch):
    monkeypatch.setenv("GRADVIZ_DOT", "pure")
    (pure,) = dot_programs()
    assert pure.kind == "pure" and Path(pure.path).name == "graphviz-pure"
    assert pure.formats == ("svg", "png")
    monkeypatch.setenv("GRADVIZ_DOT", "none")
    assert dot_programs() == []
    monkeypatch.setenv("GRADVIZ_DOT", pure.path)
    assert dot_programs() == [DotProgram(pure.path, "pure")]
    for bad in ("/no/such/dot", "sytem"):  # the user's setting: bad input, exit 2
        monkeypatch.setenv("GRADVIZ_DOT", bad)
        with pytest.raises(InputError) as error:
            dot_programs()
        assert error.value.render() == (
            f"GRADVIZ_DOT={bad!r} is neither auto, system, pure, none nor a program that can be run"
        )


@needs_system_dot
def test_system_dot_is_preferred(monkeypatch):
    monkeypatch.delenv("GRADVIZ_DOT", raising=False)
    programs = dot_programs()
    assert [p.kind for p in programs] == ["system", "pure"]
    assert find_dot("svg").kind == "system"
    monkeypatch.setenv("GRADVIZ_DOT", "system")
    assert find_dot("pdf").path == system_dot()


def test_pure_is_found_next_to_the_interpreter_without_path(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("GRADVIZ_DOT", raising=False)
    assert [p.kind for p in dot_programs()] == ["pure"]  # no `dot`, but the venv's pure


def test_pdf_without_system_dot_says_what_to_do(monkeypatch):
    monkeypatch.setenv("GRADVIZ_DOT", "pure")
    with pytest.raises(RenderError) as error:
        find_dot("pdf")
    message = error.value.render()
    assert "\n" not in message and error.value.exit_code == 1
    assert "install Graphviz" in message and "SVG, PNG" in message


def test_graphviz_switched_off_says_so(monkeypatch):
    monkeypatch.setenv("GRADVIZ_DOT", "none")
    with pytest.raises(RenderError) as error:
        render(hand_diagram(), "svg")
    message = error.value.render()
    assert message.startswith("GRADVIZ_DOT=none switched Graphviz off, so SVG cannot be written")
    assert "install" not in message and "\n" not in message


def test_a_chosen_program_that_is_missing_is_named(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("GRADVIZ_DOT", "system")
    with pytest.raises(RenderError, match="GRADVIZ_DOT=system but no `dot` is on PATH"):
        find_dot("svg")


def test_no_program_at_all_says_what_to_do_and_text_formats_still_work(monkeypatch):
    monkeypatch.delenv("GRADVIZ_DOT", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(layout, "_pure_program", lambda: None)
    diagram = hand_diagram()
    for fmt in ("svg", "png", "pdf"):
        with pytest.raises(RenderError) as error:
            render(diagram, fmt)
        message = error.value.render()
        assert "no Graphviz program found" in message and "\n" not in message
        assert "pip install graphviz-pure" in message and ".mmd" in message
    for fmt in ("dot", "mermaid", "markdown", "json", "text"):
        shown = render(diagram, fmt).replace("\u202f".encode(), b" ")  # Mermaid's no-break space
        assert b"grad 6" in shown or b'"grad": 6.0' in shown


@pytest.mark.parametrize("choice", [pytest.param("system", marks=needs_system_dot), "pure"])
def test_both_programs_render_svg_and_png(monkeypatch, choice):
    monkeypatch.setenv("GRADVIZ_DOT", choice)
    diagram = hand_diagram()
    svg = ET.fromstring(render(diagram, "svg"))
    shown = {t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")}
    assert {"data 2", "grad 6", "data -3", "grad -4", "data 10", "grad -2", "grad 4"} <= shown
    assert {"data -8", "grad 1"} <= shown
    assert render(diagram, "png").startswith(b"\x89PNG\r\n\x1a\n")


@needs_system_dot
def test_pdf_with_system_dot(monkeypatch):
    monkeypatch.setenv("GRADVIZ_DOT", "system")
    assert render(hand_diagram(), "pdf").startswith(b"%PDF-")


def test_png_size_is_capped(monkeypatch):
    monkeypatch.delenv("GRADVIZ_DOT_TIMEOUT", raising=False)
    seen = []

    def fake_run(argv, data, timeout):  # an argv list: no shell
        seen.append(argv)
        assert timeout == layout.DOT_TIMEOUT == 60
        return subprocess.CompletedProcess(argv, 0, b"\x89PNG", b"")

    monkeypatch.setattr(layout, "_run_in_own_group", fake_run)
    run_dot("digraph {}", "png", program=DotProgram("/bin/dot", "system"))
    # twice the CSS pixel (192 dpi), at most 3840 px across: 20 inches
    assert seen == [["/bin/dot", "-Tpng", "-Gdpi=192", "-Gsize=20,20"]]


def _op_symbol(png: bytes, plain: str, dpi: int) -> tuple[int, float]:
    """The op's symbol in a PNG of one op node: its size (px) and its strokes' thickness
    (px: its dark pixels over twice its size, as a `+` of two bars), found where the
    layout (`-Tplain`, inches from the bottom left) puts the op's circle."""
    import io

    import numpy as np
    from PIL import Image

    lines = plain.splitlines()
    width_in = float(lines[0].split()[2])
    _, _, x, y, node_width = next(
        line.split()[:5] for line in lines if line.startswith("node") and "_op" in line
    )
    grey = np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=float)
    height, width = grey.shape
    pad = (width - width_in * dpi) / 2  # Graphviz's margin (4 points) on each side
    cx, cy = pad + float(x) * dpi, height - pad - float(y) * dpi
    r = 0.6 * float(node_width) * dpi / 2  # inside the circle, off its outline
    ink = grey[int(cy - r) : int(cy + r), int(cx - r) : int(cx + r)] < 128
    rows, columns = np.nonzero(ink)
    size = max(np.ptp(rows), np.ptp(columns)) + 1
    return int(size), float(ink.sum()) / (2 * size)


@pytest.mark.parametrize("choice", ["pure", pytest.param("system", marks=needs_system_dot)])
def test_a_png_is_twice_the_pixels_in_a_sans_and_its_plus_is_bold(monkeypatch, choice):
    # -o x.png was 1x pixels, graphviz-pure drew "DejaVu Sans" in a serif, and the 10-point
    # `+` was 2 px thin at 2x
    import io

    from PIL import Image

    from gradviz.layout import PNG_DPI, PNG_SCALE, png_fonts

    monkeypatch.setenv("GRADVIZ_DOT", choice)
    program = find_dot("png")
    assert program.kind == choice
    value = Value(1.0, label="a") + Value(2.0, label="b")
    value.backward()
    diagram = diagram_from_value(value)
    font, op_font = png_fonts(program, "DejaVu Sans")
    if choice == "pure":  # the sans graphviz-pure draws PNGs in (its DejaVu Sans is a serif)
        assert (font, op_font[0]) == ("Helvetica", "Helvetica-Bold")
    png = render(diagram, "png", legend=False)
    text = to_dot(diagram, legend=False, font=font, op_font=op_font)
    assert f'fontname="{font}"' in text and f'fontname="{op_font[0]}"' in text
    plain = run_dot(text, "plain", program=program).decode()
    dpi = PNG_DPI * PNG_SCALE
    width_in, height_in = (float(v) for v in plain.splitlines()[0].split()[2:4])
    margins = 2 * 4 / 72  # inches
    shown = Image.open(io.BytesIO(png)).size
    assert abs(shown[0] - (width_in + margins) * dpi) <= 2, (shown, width_in)
    assert abs(shown[1] - (height_in + margins) * dpi) <= 2, (shown, height_in)
    size, thickness = _op_symbol(png, plain, dpi)
    assert size >= 16 and thickness >= 2.8, (size, thickness)  # a 10-point regular `+`: 13, 1.8


def fake_program(tmp_path: Path, script: str) -> DotProgram:
    path = tmp_path / "fake-dot"
    path.write_text("#!/bin/sh\n" + script + "\n")
    path.chmod(0o755)
    return DotProgram(str(path), "system")


def test_a_failing_program_gives_its_last_message(tmp_path):
    program = fake_program(
        tmp_path, "echo 'Warning: x' >&2; echo 'Error: syntax error in line 1' >&2; exit 1"
    )
    with pytest.raises(
        RenderError, match="fake-dot failed to write SVG: Error: syntax error in line 1"
    ):
        run_dot("digraph {", "svg", program=program)


def test_a_slow_program_times_out(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADVIZ_DOT_TIMEOUT", "0.2")
    program = fake_program(tmp_path, "exec sleep 5")
    with pytest.raises(RenderError, match=r"longer than 0\.2 s"):
        run_dot("digraph {}", "svg", program=program)


@pytest.mark.parametrize("value", ["soon", "0", "-1", "nan", "inf"])
def test_bad_timeout_setting_is_bad_input(monkeypatch, value):
    monkeypatch.setenv("GRADVIZ_DOT_TIMEOUT", value)
    with pytest.raises(InputError) as error:
        run_dot("digraph {}", "svg")
    assert error.value.exit_code == 2
    assert error.value.render() == (
        f"GRADVIZ_DOT_TIMEOUT={value!r} is not a number of seconds (> 0, < 1e6)"
    )


def test_long_chains_get_a_fast_layout_and_a_warning():
    x = Value(1.0, label="x")
    out = x
    for _ in range(200):  # x reused at every rank: ~40000 virtual nodes for dot
        out = out * x
    diagram = diagram_from_value(out)
    assert layout_cost(diagram) > 20_000 and len(diagram.nodes) == 401
    assert 'mclimit="0.01"' in to_dot(diagram)
    assert "reused far down long chains" in size_warnings(diagram, "png")[0]
    assert "mclimit" not in to_dot(hand_diagram()) and layout_cost(hand_diagram()) == 16


def chain(n: int) -> Value:
    x = Value(1.0, label="x")
    out = x
    for _ in range(n):
        out = out * x
    out.backward()
    return out


@needs_system_dot
def test_heavy_layouts_prefer_graphviz_pure_for_svg_and_png(monkeypatch):
    monkeypatch.delenv("GRADVIZ_DOT", raising=False)
    assert [p.kind for p in dot_programs(heavy=True)] == ["pure", "system"]
    assert find_dot("svg", heavy=True).kind == find_dot("png", heavy=True).kind == "pure"
    assert find_dot("pdf", heavy=True).kind == "system"  # only dot writes PDF
    seen = []

    def fake_run(argv, data, timeout):
        seen.append(Path(argv[0]).name)
        return subprocess.CompletedProcess(argv, 0, b"<svg/>", b"")

    monkeypatch.setattr(layout, "_run_in_own_group", fake_run)
    heavy = diagram_from_value(chain(150))  # layout cost ~22,800
    assert (
        layout_cost(heavy) > layout.PREFER_PURE_COST > layout_cost(diagram_from_value(chain(100)))
    )
    for fmt in ("svg", "png", "pdf"):
        render(heavy, fmt)
        render(hand_diagram(), fmt)
    assert seen == ["graphviz-pure", "dot", "graphviz-pure", "dot", "dot", "dot"]
    monkeypatch.setenv("GRADVIZ_DOT", "system")  # a choice is respected
    assert [p.kind for p in dot_programs(heavy=True)] == ["system"]


def test_size_advice_fits_what_is_drawn():
    """An expression has no collapsed view to offer; a network (layers as clusters) has."""
    out = chain(200)
    expression = size_warnings(diagram_from_value(out), "svg")[0]
    assert "to go faster, draw a part of the expression, or write .dot or .json" in expression
    assert "collapsed" not in expression and "neuron" not in expression
    network = size_warnings(diagram_from_value(out, clusters={out: "L1"}), "svg", flag)[0]
    assert "draw a collapsed view (--level neuron or --level layer)" in network
    mermaid = size_warnings(diagram_from_value(chain(150)), "mermaid")[0]
    assert mermaid.endswith("write SVG instead, or draw a part of the expression")
    neurons = replace(diagram_from_value(chain(150)), level="neuron")
    assert size_warnings(neurons, "mermaid", flag)[0].endswith("view (--level layer)")
    assert size_warnings(neurons, "mermaid")[0].endswith("view (level='layer')")  # Python's


def test_a_timeout_says_what_to_try(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADVIZ_DOT_TIMEOUT", "0.2")
    program = fake_program(tmp_path, "exec sleep 5")
    with pytest.raises(RenderError) as error:
        run_dot(
            "digraph {}", "svg", program=program, smaller=Worded("draw a part of the expression")
        )
    assert error.value.render() == (
        "fake-dot took longer than 0.2 s to draw the graph\n"
        "Draw a part of the expression, write .dot or .json instead (no layout needed), or set "
        "GRADVIZ_DOT_TIMEOUT=SECONDS to wait longer; graphviz-pure is much faster on such "
        "graphs: GRADVIZ_DOT=pure."
    )


def test_big_graph_warnings():
    x = Value(1.0, label="x")
    out = x
    for _ in range(600):  # 1201 nodes, 1200 edges
        out = out * x
    diagram = diagram_from_value(out)
    assert any("Graphviz may take a while" in w for w in size_warnings(diagram, "svg"))
    # above Mermaid's limit rendering fails and says so: a warning would say it twice
    assert size_warnings(diagram, "mermaid") == []
    near = diagram_from_value(chain(150))  # 450 edges
    assert any("Mermaid refuses more than 500" in w for w in size_warnings(near, "mermaid"))
    assert size_warnings(diagram, "json") == []
    assert size_warnings(hand_diagram(), "svg") == []


# -- atomic writes ------------------------------------------------------------------


def test_write_atomic_writes_text_and_bytes(tmp_path):
    write_atomic(tmp_path / "a.txt", "héllo\n")
    write_atomic(tmp_path / "b.bin", b"\x00\x01")
    assert (tmp_path / "a.txt").read_bytes() == "héllo\n".encode()
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.bin"]


def test_new_files_respect_the_umask_and_old_files_keep_their_mode(tmp_path):
    old = os.umask(0o027)
    try:
        write_atomic(tmp_path / "new.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640
    kept = tmp_path / "kept.txt"
    kept.write_text("old")
    kept.chmod(0o604)
    write_atomic(kept, "new")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o604 and kept.read_text() == "new"


@pytest.mark.parametrize("failure", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_a_failed_write_leaves_the_old_file_byte_identical(tmp_path, monkeypatch, failure):
    target = tmp_path / "graph.svg"
    target.write_bytes(b"<svg>old</svg>")

    class Failing:
        def __init__(self, file):
            self.file = file

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.file.close()

        def write(self, data):
            self.file.write(data[:3])  # half-way
            raise failure

    real_fdopen = os.fdopen
    monkeypatch.setattr(layout.os, "fdopen", lambda fd, mode: Failing(real_fdopen(fd, mode)))
    with pytest.raises(WriteError if isinstance(failure, OSError) else KeyboardInterrupt):
        write_atomic(target, b"<svg>new and longer</svg>")
    assert target.read_bytes() == b"<svg>old</svg>"
    assert [p.name for p in tmp_path.iterdir()] == ["graph.svg"]  # no temporary left


def test_a_failed_rename_leaves_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "g.json"
    target.write_text("{}")

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(layout.os, "replace", refuse)
    with pytest.raises(OutputError, match="Permission denied"):
        write_atomic(target, "[1]")
    assert target.read_text() == "{}" and len(list(tmp_path.iterdir())) == 1


def test_write_into_missing_folder_or_onto_a_folder(tmp_path):
    with pytest.raises(OutputError, match="does not exist"):
        write_atomic(tmp_path / "missing" / "g.svg", "x")
    with pytest.raises(OutputError, match="it is a folder"):
        write_atomic(tmp_path, "x")


# A path the user chose badly is bad input (exit 2); the machine failing to write to a
# usable path is a runtime failure (exit 1). (errno, where it happens, error class)
WRITE_FAILURES = [
    (errno.EACCES, "mkstemp", OutputError),  # a folder we may not write in
    (errno.EROFS, "mkstemp", OutputError),  # a read-only file system
    (errno.EPERM, "replace", OutputError),  # a sticky folder, someone else's file
    (errno.ENOSPC, "mkstemp", WriteError),  # no inode left
    (errno.ENOSPC, "fsync", WriteError),  # disk full
    (errno.EDQUOT, "fsync", WriteError),  # quota
    (errno.EIO, "fsync", WriteError),
    (errno.EXDEV, "replace", WriteError),
]


@pytest.mark.parametrize(("code", "where", "expected"), WRITE_FAILURES)
def test_write_failures_are_bad_input_or_runtime_failures(
    tmp_path, monkeypatch, code, where, expected
):
    def fail(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    module = tempfile if where == "mkstemp" else layout.os
    monkeypatch.setattr(module, where, fail)
    target = tmp_path / "g.json"
    target.write_text("{}")
    with pytest.raises(GradvizError) as error:
        write_atomic(target, "[1]")
    assert type(error.value) is expected
    assert error.value.exit_code == (2 if expected is OutputError else 1)
    assert os.strerror(code) in error.value.render()
    assert target.read_text() == "{}" and [p.name for p in tmp_path.iterdir()] == ["g.json"]


def test_a_name_too_long_is_bad_input(tmp_path):
    with pytest.raises(OutputError, match="File name too long"):
        write_atomic(tmp_path / ("a" * 300 + ".svg"), "x")


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_unwritable_folder(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(OutputError, match="cannot write"):
            write_atomic(folder / "g.svg", "x")
    finally:
        folder.chmod(0o700)


def test_output_equal_to_an_input_is_refused(tmp_path, monkeypatch):
    source = tmp_path / "model.expr"
    source.write_text("a*b")
    monkeypatch.chdir(tmp_path)
    for name in ("model.expr", str(source), "./sub/../model.expr"):
        with pytest.raises(OutputError, match="it is an input") as error:
            refuse_clashes([("output", name)], [source])
        assert error.value.exit_code == 2
        assert error.value.render(flag).endswith("Choose another file name for --output.")
    link = tmp_path / "link.expr"
    link.symlink_to(source)
    with pytest.raises(OutputError):
        refuse_clashes([("curves", "link.expr")], [source])
    refuse_clashes([("output", "-"), ("output", "other.svg"), ("curves", None)], [source])


def test_two_outputs_naming_one_file_are_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.svg").write_text("old")
    (tmp_path / "link.svg").symlink_to(tmp_path / "p.svg")
    os.link(tmp_path / "p.svg", tmp_path / "hard.svg")
    for other in ("p.svg", "./p.svg", str(tmp_path / "p.svg"), "link.svg", "hard.svg"):
        with pytest.raises(OutputError, match="is given twice as an output") as error:
            refuse_clashes([("boundary", "p.svg"), ("report", None), ("curves", other)])
        assert "(--boundary and --curves)" in error.value.render(flag)
    with pytest.raises(OutputError, match=r"'-' \(stdout\) is given twice as an output$"):
        refuse_clashes([("output", "-"), ("output", "a.dot"), ("output", "-")])
    refuse_clashes([("boundary", "p.svg"), ("curves", "q.svg"), ("output", "-")])
