"""The fence renderer (gradviz.docs.fence), without any docs tool: a command line in, the
picture `gradviz` itself writes out (inline, scaled, ids namespaced), Mermaid, the live
page in a sandboxed frame, errors with gradviz's words, and the cache.

The docs sites that use it (MkDocs, Sphinx) are built in tests/test_docs_sites.py."""

from __future__ import annotations

import contextlib
import hashlib
import html
import json
import os
import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from gradviz.cli import cli
from gradviz.docs import fence
from gradviz.docs.fence import Cache, FenceError, fence_options, render_fence
from gradviz.docs.paths import Places
from gradviz.render.html import csp_hash as html_csp_hash

HAND = 'draw "e = a*b; d = e + c; L = d*f" a=2 b=-3 c=10 f=-2'
TRACE = 'trace "e = a*b; d = e + c; L = d*f" a=2 b=-3 c=10 f=-2'
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(autouse=True)
def _same_layout_program(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fence lays out with graphviz-pure when GRADVIZ_DOT is unset; the CLI runs the
    tests compare with do the same."""
    monkeypatch.setenv("GRADVIZ_DOT", "pure")


def _cli(*args: str, folder: Path) -> None:
    done = CliRunner().invoke(cli, [*args], catch_exceptions=False)
    assert done.exit_code == 0, done.output


def _svg(fragment: str) -> ET.Element:
    match = re.search(r"<svg\b.*</svg>", fragment, re.DOTALL)
    assert match, fragment[:200]
    return ET.fromstring(match.group(0))


def _node_texts(svg: ET.Element) -> dict[str, list[str]]:
    """Each Graphviz node's texts, by its first (the name: `a`, `*`)."""
    found = {}
    for group in svg.iter(f"{SVG}g"):
        if group.get("class") == "node":
            texts = [t.text or "" for t in group.iter(f"{SVG}text")]
            if texts:
                found.setdefault(texts[0], texts[1:])
    return found


def test_a_draw_fence_is_the_picture_draw_writes(tmp_path: Path) -> None:
    picture = tmp_path / "hand.svg"
    _cli(*fence.command_words(HAND), "-o", str(picture), folder=tmp_path)
    written = ET.parse(picture).getroot()
    inline = _svg(render_fence(HAND, base=tmp_path))
    assert inline.get("viewBox") == written.get("viewBox")
    assert inline.get("width") is None and inline.get("height") is None
    style = inline.get("style")
    width_px = float(written.get("width").removesuffix("pt")) * 4 / 3
    assert "width:100%" in style and "height:auto" in style
    assert f"max-width:{width_px:.0f}px" in style
    assert _node_texts(inline) == _node_texts(written)
    # L = (a*b + c)*f, by hand: dL/da = b*f = 6, dL/db = a*f = -4, dL/dc = f = -2, dL/df = 4
    grads = {name: texts[-1] for name, texts in _node_texts(inline).items() if len(texts) == 2}
    assert {n: grads[n] for n in "abcf"} == {
        "a": "grad 6",
        "b": "grad -4",
        "c": "grad -2",
        "f": "grad 4",
    }


def _ids_and_references(fragment: str) -> tuple[list[str], list[str]]:
    ids = re.findall(r'\bid="([^"]+)"', fragment)
    references = re.findall(r'(?:href="#|url\(#)([^")]+)', fragment)
    return ids, references


@pytest.mark.parametrize("body", [HAND, "grads deep-sigmoid --plot"], ids=["graphviz", "plot"])
def test_two_fences_on_one_page_share_no_id_and_keep_their_references(
    body: str, tmp_path: Path
) -> None:
    first = render_fence(body, base=tmp_path, prefix="gv1-")
    second = render_fence(body, base=tmp_path, prefix="gv2-")
    ids_1, refs_1 = _ids_and_references(first)
    ids_2, refs_2 = _ids_and_references(second)
    assert ids_1 and len(set(ids_1)) == len(ids_1)
    assert not set(ids_1) & set(ids_2)
    assert all(i.startswith("gv1-") for i in ids_1)
    # every reference (a plot's clip paths and markers) still finds its own diagram's id
    assert set(refs_1) <= set(ids_1) and set(refs_2) <= set(ids_2)
    if body.startswith("grads"):
        assert refs_1, "a matplotlib plot refers to its clip paths and markers"


def _all_texts(svg: ET.Element) -> list[str]:
    return [t.text or "" for t in svg.iter(f"{SVG}text")]


def test_a_trace_fence_shows_the_frame_of_its_step(tmp_path: Path) -> None:
    _cli(*fence.command_words(TRACE), "--frames", str(tmp_path / "all"), folder=tmp_path)
    frame_5 = ET.parse(tmp_path / "all" / "step-05.svg").getroot()
    last = ET.parse(sorted((tmp_path / "all").glob("step-*.svg"))[-1]).getroot()
    assert "Step 5/7" in " ".join(_all_texts(frame_5))
    stepped = _svg(render_fence(f"{TRACE} --step 5", base=tmp_path))
    assert _all_texts(stepped) == _all_texts(frame_5)
    assert _all_texts(_svg(render_fence(TRACE, base=tmp_path))) == _all_texts(last)
    assert _all_texts(frame_5) != _all_texts(last)


def test_trace_step_writes_that_frame_only(tmp_path: Path) -> None:
    _cli(*fence.command_words(TRACE), "--frames", str(tmp_path / "all"), folder=tmp_path)
    _cli(
        *fence.command_words(TRACE),
        "--frames",
        str(tmp_path / "one"),
        "--step",
        "5",
        folder=tmp_path,
    )
    assert [p.name for p in (tmp_path / "one").iterdir()] == ["step-05.svg"]
    assert (tmp_path / "one" / "step-05.svg").read_bytes() == (
        tmp_path / "all" / "step-05.svg"
    ).read_bytes()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--step", "8"], "--step 8: the backward pass has steps 1 to 7"),
        (["--step", "0"], "0 is not in the range x>=1"),
    ],
)
def test_trace_step_out_of_range_is_bad_input(extra: list[str], message: str, tmp_path) -> None:
    args = [*fence.command_words(TRACE), "--frames", str(tmp_path / "f"), *extra]
    done = CliRunner().invoke(cli, args)
    assert done.exit_code == 2 and message in done.output
    assert not list((tmp_path / "f").glob("*.svg"))


def test_trace_step_needs_frames() -> None:
    done = CliRunner().invoke(cli, [*fence.command_words(TRACE), "--step", "2"])
    assert done.exit_code == 2 and "--step picks the frame of one step" in done.output


def test_mermaid_is_left_to_the_site_s_own_mermaid(tmp_path: Path) -> None:
    body = 'draw "tanh(w*x + b)" x=0.5 w=-3 b=1'
    _cli(*fence.command_words(body), "-o", str(tmp_path / "n.mmd"), folder=tmp_path)
    fragment = render_fence(body, {"format": "mermaid"}, base=tmp_path)
    match = re.fullmatch(r'<pre class="mermaid">(.*)</pre>', fragment, re.DOTALL)
    assert match and "<script" not in fragment and "http" not in fragment
    assert html.unescape(match.group(1)) == (tmp_path / "n.mmd").read_text("utf-8").strip()


def test_the_live_page_is_in_a_sandboxed_frame(tmp_path: Path) -> None:
    _cli(*fence.command_words(HAND), "-o", str(tmp_path / "p.html"), folder=tmp_path)
    fragment = render_fence(HAND, {"format": "html", "height": "640"}, base=tmp_path)
    frame = re.fullmatch(r"<iframe ([^>]*)></iframe><script>.*</script>", fragment, re.DOTALL)
    assert frame
    attributes = dict(re.findall(r'([\w-]+)="([^"]*)"', frame.group(1)))
    assert attributes["sandbox"] == "allow-scripts"  # no allow-same-origin: its own origin
    assert "height:640px" in attributes["style"]
    assert "data-gradviz-fit" not in frame.group(1)  # the height given stays
    page = html.unescape(attributes["srcdoc"])
    written = (tmp_path / "p.html").read_text("utf-8")
    # the page as written, with the script that tells its height (allowed by its hash)
    teller = f"<script>{fence._HEIGHT_TELLER}</script>"
    assert teller in page
    policy = re.search(r"script-src ([^;]*)", page).group(1).split()
    assert policy[:-1] == re.search(r"script-src ([^;]*)", written).group(1).split()
    assert policy[-1] == "'" + html_csp_hash(fence._HEIGHT_TELLER) + "'"
    assert re.sub(r" 'sha256-[^']*'(?=;)", "", page.replace(teller, ""), count=1) == written


@pytest.mark.parametrize(
    ("root", "classes"),
    [
        ('<svg width="75pt" height="30pt" viewBox="0 0 75 30">', "gradviz"),
        ('<svg class="gradviz" width="75pt" height="30pt" viewBox="0 0 75 30">', "gradviz"),
        ('<svg class="themed" width="75pt" height="30pt" viewBox="0 0 75 30">', "gradviz themed"),
    ],
)
def test_an_inline_svg_keeps_its_viewbox_and_one_class_attribute(root: str, classes: str) -> None:
    svg = ET.fromstring(fence.inline_svg(f'<?xml version="1.0"?>\n{root}<g id="a"/></svg>'))
    assert svg.get("class") == classes and svg.get("viewBox") == "0 0 75 30"
    assert svg.get("width") is None and "max-width:100px" in svg.get("style")


@pytest.mark.slow
def test_a_train_fence_draws_the_boundary_train_writes(tmp_path: Path) -> None:
    args = ["train", "xor", "--epochs", "200", "--seed", "3"]
    _cli(*args, "-q", "--boundary", str(tmp_path / "b.svg"), folder=tmp_path)
    fragment = render_fence(" ".join([*args, "--boundary"]), base=tmp_path, prefix="")
    written = (tmp_path / "b.svg").read_text("utf-8")
    # matplotlib draws its texts as paths: the picture is the file's, byte for byte, once
    # it sits inline (the root element scaled to the column)
    assert fragment == f'<div class="gradviz-diagram">{fence.inline_svg(written)}</div>'
    assert _svg(fragment).get("viewBox") == ET.fromstring(written.split("?>", 1)[1]).get("viewBox")


def test_text_is_what_the_terminal_shows(tmp_path: Path) -> None:
    fragment = render_fence(HAND, {"format": "text"}, base=tmp_path)
    shown = html.unescape(re.sub(r"</?(pre|code)[^>]*>", "", fragment))
    assert "a        2                6" in shown and "\x1b" not in shown


def test_relative_paths_start_at_the_base_folder(tmp_path: Path) -> None:
    (tmp_path / "hand.expr").write_text("e = a*b; d = e + c; L = d*f\n", "utf-8")
    inline = _svg(render_fence("draw @hand.expr a=2 b=-3 c=10 f=-2", base=tmp_path))
    assert _node_texts(inline)["a"] == ["data 2", "grad 6"]


@pytest.mark.parametrize(
    ("body", "options", "message"),
    [
        ('draw "a*" a=2', {}, "syntax error"),
        (f"{HAND} -o x.svg", {}, "-o x.svg: the fence writes the output itself"),
        (f"{HAND} --output=x.svg", {}, "the fence writes the output itself"),
        (f"{TRACE} --frames out", {}, "the fence writes the output itself"),
        ("grads deep-sigmoid --plot p.svg", {}, "write --plot alone"),
        ("grads deep-sigmoid", {}, "grads draws its picture with --plot, given once"),
        ("train xor --boundary --curves", {}, "with --boundary or --curves, given once"),
        ("train xor --epochs 5 --boundary --save m.json", {}, "--save m.json: the fence"),
        ("rm -rf /", {}, "'rm' is not a gradviz command"),
        ('draw "a*b', {}, "cannot split the command line"),
        ("", {}, "the fence is empty"),
        (HAND, {"format": "png"}, "format='png': choose one of svg, mermaid, html, text"),
        (HAND, {"colour": "red"}, "unknown fence option 'colour'"),
        (HAND, {"format": "html", "height": "tall"}, "height='tall'"),
        ("grads deep-sigmoid --plot", {"format": "mermaid"}, "grads draws no mermaid"),
        ("draw --model missing.json", {}, "missing.json"),
        ('trace "a*b" a=1 b=2 --step 9', {}, "--step 9: the backward pass has steps 1 to 3"),
    ],
)
def test_a_fence_that_cannot_be_drawn_says_why(
    body: str, options: dict, message: str, tmp_path: Path
) -> None:
    cache = Cache(tmp_path / "cache")
    with pytest.raises(FenceError) as error:
        render_fence(body, options, base=tmp_path, cache=cache)
    assert message in error.value.message
    assert "Traceback" not in error.value.message
    assert not list((tmp_path / "cache").glob("*.html")), "an error was cached"


def test_the_body_never_reaches_a_shell(tmp_path: Path) -> None:
    for body in ('draw "$(touch pwned)" x=1', "draw x=1; touch pwned", "draw `touch pwned`"):
        with pytest.raises(FenceError):
            render_fence(body, base=tmp_path)
    assert not (tmp_path / "pwned").exists()


def test_a_terminal_line_pastes_as_it_is(tmp_path: Path) -> None:
    pasted = '$ gradviz draw "e = a*b; d = e + c; L = d*f" \\\n    a=2 b=-3 c=10 f=-2'
    assert fence.command_words(pasted) == fence.command_words(HAND)


def test_the_cache_gives_the_fragment_back_without_drawing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = Cache(tmp_path / "cache")
    first = render_fence(HAND, base=tmp_path, cache=cache, prefix="gv1-")
    assert (cache.hits, cache.misses) == (0, 1)
    assert len(list((tmp_path / "cache").glob("*.html"))) == 1

    def no_drawing(*args: object) -> None:
        raise AssertionError("drawn again")

    monkeypatch.setattr(fence, "run_command", no_drawing)
    again = render_fence(HAND, base=tmp_path, cache=Cache(tmp_path / "cache"), prefix="gv1-")
    assert again == first
    # ids are namespaced as the fragment is served: the cache holds one copy for any page
    other = render_fence(HAND, base=tmp_path, cache=Cache(tmp_path / "cache"), prefix="gv7-")
    assert other == first.replace('id="gv1-', 'id="gv7-')


def _key(cache: Cache, words: list[str], options: dict, base: Path) -> str:
    places = Places(base=base)
    found = fence.located(words, fence_options(options).format, places)
    return cache.key(found, fence_options(options), places)


def test_the_cache_key_follows_the_command_the_options_the_files_and_gradviz(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = Cache(tmp_path / "cache")
    (tmp_path / "hand.expr").write_text("L = a*b\n", "utf-8")
    words = ["draw", "@hand.expr", "a=2", "b=3"]
    key = _key(cache, words, {}, tmp_path)
    assert _key(cache, words, {}, tmp_path) == key
    assert _key(cache, [*words[:-1], "b=4"], {}, tmp_path) != key
    assert _key(cache, words, {"format": "mermaid"}, tmp_path) != key
    (tmp_path / "hand.expr").write_text("L = a*b + 1\n", "utf-8")  # the file changed
    changed = _key(cache, words, {}, tmp_path)
    assert changed != key
    monkeypatch.setattr(fence, "gradviz_fingerprint", lambda: "another gradviz")
    assert _key(cache, words, {}, tmp_path) != changed


def test_the_default_cache_is_outside_the_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GRADVIZ_FENCE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert fence.default_cache_dir() == tmp_path / "xdg" / "gradviz" / "fence"
    monkeypatch.setenv("GRADVIZ_FENCE_CACHE", str(tmp_path / "mine"))
    assert fence.default_cache_dir() == tmp_path / "mine"


def test_the_error_box_names_the_place_and_escapes_the_text() -> None:
    box = fence.error_box("syntax error <here>", "docs/page.md:12", 'draw "a*"')
    assert 'role="alert"' in box and "docs/page.md:12" in box
    assert "&lt;here&gt;" in box and "<here>" not in box


# -- what a fence may write: nothing of the body's choosing ---------------------------------

FENCE_COMMANDS = sorted({*fence.CAPTURES, *fence.TEXT_COMMANDS})
# A command line each command accepts, before the output option under test; its format.
BASE_LINES = {
    "draw": ('draw "a*b" a=1 b=2', "svg"),
    "trace": ('trace "a*b" a=1 b=2', "svg"),
    "check": ('check "a*b" a=1 b=2', "text"),
    "grads": ("grads deep-sigmoid --plot", "svg"),
    "compare": ("compare xor deep-sigmoid", "text"),
    "train": ("train xor --epochs 5 --boundary", "svg"),
    "inspect": ("inspect model.json", "html"),
}


def _spellings(option, value: str) -> list[str]:
    """Every way click takes OPTION with VALUE: `-o V`, `-oV`, `--output V`, `--output=V`."""
    found = []
    for name in option.opts:
        found.append(f"{name} {value}")
        found.append(f"{name}={value}" if name.startswith("--") else f"{name}{value}")
    return found


def _output_cases() -> list[tuple[str, str]]:
    """Each command's each output option (found from the commands) in each spelling."""
    from gradviz.docs.command import output_options

    cases = []
    for name in FENCE_COMMANDS:
        line, fmt = BASE_LINES[name]
        for option in output_options(name):
            value = "svg" if option.writes == "format" else "written.svg"
            cases += [(f"{line} {spelled}", fmt) for spelled in _spellings(option, value)]
    return cases


def test_every_command_of_the_fence_has_a_line_to_attack() -> None:
    assert set(BASE_LINES) == set(FENCE_COMMANDS)
    # the options that write, found from the commands: the ones issue 33 named among them
    from gradviz.docs.command import output_options

    found = {(name, o.opts[0]) for name in FENCE_COMMANDS for o in output_options(name)}
    for expected in [("draw", "-o"), ("grads", "--plot"), ("inspect", "--boundary")]:
        assert expected in found
    assert {("inspect", "--curves"), ("trace", "--frames"), ("train", "--save")} <= found


@pytest.mark.parametrize(("body", "fmt"), _output_cases())
def test_no_spelling_of_an_output_option_gets_through(
    body: str, fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_run(*args: object) -> None:
        raise AssertionError("the command ran")

    monkeypatch.setattr(fence, "run_command", no_run)
    (tmp_path / "model.json").write_text("{}", "utf-8")
    with pytest.raises(FenceError) as error:
        render_fence(body, {"format": fmt}, base=tmp_path)
    assert "the fence writes the" in error.value.message
    assert not (tmp_path / "written.svg").exists()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (f"{HAND} -odocs/index.md", "-odocs/index.md: the fence writes the output itself"),
        (f"{HAND} -oREADME.md", "-oREADME.md: the fence writes the output itself"),
        (f"{HAND} --out x.svg", "No such option '--out'"),  # click takes no abbreviation
        (f"{HAND} --outp=x.svg", "No such option '--outp'"),
        ('trace "a*b" a=1 b=2 --forward --frames=out', "--frames=out: the fence writes"),
        ("train xor --boundary -q --save=m.json", "--save=m.json: the fence writes"),
        ("grads deep-sigmoid --plot --plot=p.svg", "write --plot alone"),
        ("grads deep-sigmoid --plot /any/path", "unexpected extra argument: /any/path"),
        ("grads deep-sigmoid --data --plot", "given once with no file name"),
    ],
)
def test_an_output_in_any_spelling_is_refused_before_anything_runs(
    body: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FenceError) as error:
        render_fence(body, base=tmp_path)
    assert message in error.value.message
    assert list(tmp_path.iterdir()) == []


def test_an_expression_after_double_dash_is_not_an_option(tmp_path: Path) -> None:
    """`--` ends the options as click reads them: `-o` after it is the expression's."""
    with pytest.raises(FenceError) as error:
        render_fence('draw -- "a*b" a=1 -o x.svg', base=tmp_path)
    assert "expected NAME=VALUE, got '-o'" in error.value.message
    assert list(tmp_path.iterdir()) == []


def test_every_option_whose_help_says_it_writes_is_an_output_option() -> None:
    """The fence's refusals come from the commands: an option that writes a file and is
    not declared an OutputOption would slip by, so its help text gives it away here."""
    from gradviz.cli.options import OutputOption
    from gradviz.docs.command import command

    writes = re.compile(r"(Also )?[Ww]rite\b")  # "Write the plot … to FILE", "Also write …"
    for name in FENCE_COMMANDS:
        for param in command(name).params:
            if isinstance(param, click.Option) and param.help:
                says = bool(writes.match(param.help))
                declared = isinstance(param, OutputOption) and param.writes == "file"
                assert says == declared, (name, param.opts, param.help)


# -- what a fence may read: files of the docs project only -----------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A docs project: docs/ with a page's folder, base build/ holding a sample."""
    root = tmp_path / "project"
    (root / "docs" / "guide").mkdir(parents=True)
    (root / "build").mkdir()
    (root / "build" / "hand.expr").write_text("e = a*b; d = e + c; L = d*f\n", "utf-8")
    return root


def _render(body: str, project: Path, options: dict | None = None, **kw) -> str:
    return render_fence(
        body,
        options or {},
        base=project / "build",
        page=project / "docs" / "guide",
        roots=(project, project / "build"),
        **kw,
    )


@pytest.mark.parametrize(
    "body",
    [
        "draw @/proc/self/environ",
        "draw @/etc/shadow",
        "draw @/etc/passwd",
        "grads /etc/passwd",
        "inspect /etc/passwd",
        "draw --model /etc/passwd",
        "grads xor --data /etc/passwd.csv",
        "draw @../../../../../../../../etc/passwd",
        "draw @link",  # a symlink inside base, to a file outside
        "grads outside.toml",  # a spec inside, naming data outside
    ],
)
def test_a_fence_reads_nothing_outside_the_docs_project(body: str, project: Path) -> None:
    (project / "build" / "link").symlink_to("/etc/passwd")
    (project / "build" / "outside.toml").write_text(
        'layers = [2, 2, 1]\ndata = "../../secret.csv"\n', "utf-8"
    )
    (project.parent / "secret.csv").write_text("x1,x2,y\n0,0,SECRET\n", "utf-8")
    (project.parent / "passwd.csv").write_text("x1,x2,y\n0,0,SECRET\n", "utf-8")
    with pytest.raises(FenceError) as error:
        _render(body, project, {"format": "text"})
    assert "outside the docs project" in error.value.message
    assert "root:" not in error.value.message and "SECRET" not in error.value.message


def test_an_error_quotes_no_line_or_value_of_a_file_read(project: Path) -> None:
    (project / "build" / "env.expr").write_text("TOKEN=ghp_abcdef123456 = x\n", "utf-8")
    with pytest.raises(FenceError) as error:
        _render("draw @env.expr", project, {"format": "text"})
    assert "chained assignment" in error.value.message  # gradviz's words stay
    assert "ghp_abcdef" not in error.value.message and "TOKEN" not in error.value.message
    (project / "build" / "points.csv").write_text("x1,x2,y\n0,0,0\n0,1,SECRETVALUE\n", "utf-8")
    with pytest.raises(FenceError) as error:
        _render("grads xor --epochs 2 --data points.csv", project, {"format": "text"})
    assert "SECRETVALUE" not in error.value.message and "is not a number" in error.value.message
    # an inline expression is on the page already: its error keeps its caret
    with pytest.raises(FenceError) as error:
        _render('draw "a*"', project)
    assert "a*" in error.value.message


def test_a_relative_path_is_looked_for_beside_the_page_then_in_base(project: Path) -> None:
    inline = _svg(_render("draw @hand.expr a=2 b=-3 c=10 f=-2", project))
    assert _node_texts(inline)["a"] == ["data 2", "grad 6"]  # from base
    (project / "docs" / "guide" / "hand.expr").write_text("L = a*b\n", "utf-8")
    beside = _svg(_render("draw @hand.expr a=2 b=-3", project))
    assert _node_texts(beside)["a"] == ["data 2", "grad -3"]  # the page's own, first
    with pytest.raises(FenceError) as error:
        _render("draw @nowhere.expr", project)
    assert (
        "looked for nowhere.expr beside the page, in docs/guide/ and in base build/"
        in error.value.message
    )


def test_a_file_beside_the_page_and_one_in_base_in_one_command(project: Path) -> None:
    """The command runs from the page's folder; base's file is reached from there."""
    (project / "build" / "points.csv").write_text("x1,x2,y\n0,0,0\n0,1,1\n1,0,1\n1,1,0\n")
    (project / "docs" / "guide" / "net.toml").write_text(
        'layers = [2, 2, 1]\ndata = "xor"\nepochs = 3\n', "utf-8"
    )
    text = _render("grads net.toml --epochs 2 --data points.csv", project, {"format": "text"})
    assert "points.csv" in html.unescape(text)


# -- the cache: every file read in the key, read in chunks ----------------------------------


def test_the_key_holds_the_data_a_spec_names(project: Path) -> None:
    """`train spec.toml --boundary`: a changed CSV draws again (issue 33, item 4)."""
    build = project / "build"
    (build / "points.csv").write_text("x1,x2,y\n0,0,0\n0,1,1\n1,0,1\n1,1,0\n", "utf-8")
    (build / "spec.toml").write_text('layers = [2, 3, 1]\ndata = "points.csv"\n', "utf-8")
    cache = Cache(project / "cache")
    words = ["train", "spec.toml", "--boundary"]
    key = _key(cache, words, {}, build)
    (build / "points.csv").write_text("x1,x2,y\n0,0,1\n0,1,0\n1,0,0\n1,1,1\n", "utf-8")
    assert _key(cache, words, {}, build) != key


def test_the_key_holds_the_data_a_model_names(tmp_path: Path) -> None:
    (tmp_path / "points.csv").write_text("x1,x2,y\n0,0,0\n0,1,1\n1,0,1\n1,1,0\n", "utf-8")
    args = ["train", "--layers", "2,2,1", "--data", "points.csv", "--epochs", "2"]
    with contextlib.chdir(tmp_path):
        _cli(*args, "-q", "--save", "m.json", folder=tmp_path)
    cache = Cache(tmp_path / "cache")
    words = ["draw", "--model", "m.json", "--input", "0,1"]
    key = _key(cache, words, {}, tmp_path)
    (tmp_path / "points.csv").write_text("x1,x2,y\n0,0,1\n0,1,0\n1,0,0\n1,1,1\n", "utf-8")
    assert _key(cache, words, {}, tmp_path) != key


def test_a_file_over_the_cap_is_refused_by_its_size_unread(tmp_path: Path) -> None:
    huge = tmp_path / "huge.json"
    with huge.open("wb") as file:
        file.truncate(3 * 10**9)  # 3 GB, sparse: reading it would take 3 GB and seconds
    with pytest.raises(FenceError) as error:
        render_fence("inspect huge.json", {"format": "text"}, base=tmp_path)
    assert f"{3 * 10**9:,} bytes is larger than the 100,000,000 a fence reads" in (
        error.value.message
    )


def test_a_file_is_hashed_in_chunks(tmp_path: Path) -> None:
    import tracemalloc

    from gradviz.docs.paths import CHUNK_BYTES, digest

    big = tmp_path / "big.csv"
    with big.open("wb") as file:
        file.truncate(60 * 10**6)
    tracemalloc.start()
    try:
        found = digest(big)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found == hashlib.sha256(big.read_bytes()).hexdigest()
    assert peak < 4 * CHUNK_BYTES, f"{peak:,} bytes held while hashing 60 MB"


# -- reading command lines on a warm build: no command module imported ---------------------


@pytest.mark.parametrize("name", FENCE_COMMANDS)
def test_a_kept_description_reads_a_command_line_as_the_command_does(name: str) -> None:
    from gradviz.docs import command as command_line

    real = command_line.command(name)
    kept = command_line.rebuilt(json.loads(json.dumps(command_line.describe(real))))
    line, _ = BASE_LINES[name]
    lines = [shlex.split(line)[1:]]
    lines += [shlex.split(body)[1:] for body, _ in _output_cases() if body.startswith(name)]
    lines += [["-h"], ["--traceback", *shlex.split(line)[1:]], ["--", "-x*2", "x=1"]]
    for words in lines:
        seen = []
        for found in (real, kept):
            try:
                parsed = command_line.parse([name, *words], _Only(found))
            except command_line.CommandLineError as error:
                seen.append(("error", str(error)))
                continue
            outputs = sorted(o.name for o in command_line.outputs(parsed))
            seen.append((parsed.given, outputs, parsed.extra))
        assert seen[0] == seen[1], (name, words)


class _Only:
    """Commands that hold one command (for comparing a real one with its description)."""

    def __init__(self, found) -> None:
        self.found = found

    def get(self, name: str):
        return self.found


def test_a_warm_fence_imports_no_command_module(tmp_path: Path) -> None:
    """A warm rebuild draws nothing: importing the commands (numpy, rich, the renderers:
    about 1.5 s, bench/fence.py) would be all it costs."""
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from gradviz.docs.fence import Cache, render_fence\n"
        f"cache = Cache(Path({str(tmp_path / 'cache')!r}))\n"
        f"render_fence({TRACE + ' --step 2'!r}, base={str(tmp_path)!r}, cache=cache)\n"
        "print(cache.hits, sorted(m for m in sys.modules if m.startswith('gradviz.cli.')),"
        " 'numpy' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(fence.__file__).parents[2])}
    runs = [
        subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        ).stdout.split()
        for _ in range(2)
    ]
    drawn, warm = " ".join(runs[0]), " ".join(runs[1])
    assert runs[0][0] == "0" and "gradviz.cli.trace" in drawn  # the first draws
    assert runs[1][0] == "1", warm  # the second is served from the cache
    assert "gradviz.cli.trace" not in warm and runs[1][-1] == "False", warm
