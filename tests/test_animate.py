"""`gradviz trace EXPR -o backward.svg --animate`: one SVG that plays the backward pass with
no script, checked in Chromium by freezing its CSS animations (the Web Animations API's
`currentTime`) at the start, the middle and the end of the loop, and with reduced motion
emulated (then nothing moves and the picture is the last step)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradviz.cli import cli
from gradviz.drawn import trace_frames
from gradviz.expr import parse_program
from gradviz.output import animated_trace
from gradviz.render.animate import HOLD_STEPS, LEAD_STEPS, STEP_SECONDS, animation_diagram
from gradviz.render.colours import DARK, LIGHT
from gradviz.tracing import trace

HAND = "e = a*b; d = e + c; L = d*f"
HAND_ARGS = ("a=2", "b=-3", "c=10", "f=-2")
# The hand derivation's order (reverse topological): L (and its *), f, d (and its +), c,
# e (and its *), b, a; as the README's trace prints it.
HAND_ORDER = ["L", "f", "d", "c", "e", "b", "a"]


def run(*args: str):
    return CliRunner().invoke(cli, list(args), env={"GRADVIZ_DOT": None})


def frames_of(text: str, **values: float):
    out = parse_program(text, values).output
    out.backward()
    return trace_frames(out, trace(out))


@pytest.fixture(scope="module")
def hand_svg(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("animate") / "backward.svg"
    result = run("trace", HAND, *HAND_ARGS, "-o", str(target), "--animate")
    assert result.exit_code == 0, result.output
    assert f"wrote {target} (svg, 7 steps animated)" in result.stderr
    return target


def test_one_small_svg_with_no_script(hand_svg: Path) -> None:
    data = hand_svg.read_bytes()
    assert len(data) <= 50_000, len(data)
    text = data.decode("utf-8")
    root = ET.fromstring(data)  # well-formed XML
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert "<script" not in text and "onload" not in text
    assert "@keyframes" in text and "prefers-reduced-motion:no-preference" in text
    assert "prefers-color-scheme:dark" in text  # dark mode as every SVG


def test_byte_stable() -> None:
    frames = frames_of(HAND, a=2, b=-3, c=10, f=-2)
    assert animated_trace(frames) == animated_trace(frames)


def test_the_steps_come_in_the_trace_order() -> None:
    frames = frames_of(HAND, a=2, b=-3, c=10, f=-2)
    drawn, timeline = animation_diagram(frames)
    named = {n.id: n.label for n in drawn.nodes if n.kind == "value"}
    order = sorted((step, named[i]) for i, step in timeline.current.items() if i in named)
    assert [name for _, name in order] == HAND_ORDER
    # every credit is on its edge in the one layout: 6 inputs of 3 ops
    assert sorted(e.label for e in drawn.edges if e.label) == sorted(
        ["+= -2", "+= 4", "+= -2", "+= -2", "+= 6", "+= -4"]
    )
    # a value used twice shows its credit once it is whole: at the step of its last use
    twice = frames_of("y = x*x; L = y + x", x=3.0)
    _, timeline = animation_diagram(twice)
    x = next(n.id for n in twice[-1].nodes if n.label == "x")
    assert timeline.arrives[x] == len(twice) - 2  # the step of y = x*x, after L's


def test_the_options_go_together() -> None:
    result = run("trace", HAND, *HAND_ARGS, "--animate")
    assert result.exit_code == 2 and "give -o FILE.svg" in result.output
    result = run("trace", HAND, *HAND_ARGS, "-o", "x.html", "--animate")
    assert result.exit_code == 2 and "writes an SVG picture" in result.output
    result = run("trace", HAND, *HAND_ARGS, "-o", "x.svg")
    assert result.exit_code == 2 and "FILE.svg with --animate" in result.output


# -- in Chromium ----------------------------------------------------------------------------

# Freeze every animation at `t` ms (none when motion is reduced); then, for each value
# node by its name, whether it is lit (current step), done, and whether its grad shows.
STATE_JS = """
const t = arguments[0];
const animations = document.getAnimations();
animations.forEach(a => { a.pause(); if (t !== null) a.currentTime = t; });
const nodes = {};
for (const g of document.querySelectorAll('g.node')) {
  const texts = Array.from(g.querySelectorAll('text'));
  const shape = g.querySelector('polygon, ellipse');
  const grad = texts.find(x => x.textContent.startsWith('grad '));
  nodes[g.querySelector('title').textContent] = {
    stroke: getComputedStyle(shape).stroke,
    fill: getComputedStyle(shape).fill,
    grad: grad ? getComputedStyle(grad).opacity === '1' : null,
  };
}
const captions = Array.from(document.querySelectorAll('text'))
  .filter(x => x.textContent.startsWith('Step ') && getComputedStyle(x).opacity === '1')
  .map(x => x.textContent);
return {count: animations.length, nodes: nodes, captions: captions};
"""


def rgb(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def at_step(step: float) -> float:
    """Milliseconds into the loop, half-way through step `step` (0: the lead-in)."""
    return (LEAD_STEPS + step - 1 + 0.5) * STEP_SECONDS * 1000


def emulate(driver, **features: str) -> None:
    driver.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": k.replace("_", "-"), "value": v} for k, v in features.items()]},
    )


def state(browser, svg: Path, t: float | None) -> dict:
    browser.get(svg.as_uri())  # as <img> shows it: the SVG is the document
    return browser.execute_script(STATE_JS, t)


# The hand example's node ids (graph order) by what they show; `*L` is the op making L.
NAMES = {"n0": "a", "n1": "b", "n2": "e", "n3": "c", "n4": "d", "n5": "f", "n6": "L"}
NAMES.update({f"{i}_op": f"*{n}" if n != "d" else "+d" for i, n in NAMES.items()})


def lit(nodes: dict, palette=LIGHT) -> list[str]:
    return sorted(NAMES[i] for i, n in nodes.items() if n["stroke"] == rgb(palette.current))


def done(nodes: dict, palette=LIGHT) -> list[str]:
    return sorted(NAMES[i] for i, n in nodes.items() if n["stroke"] == rgb(palette.done))


def graded(nodes: dict) -> list[str]:
    return sorted(NAMES[i] for i, n in nodes.items() if n["grad"])


def by_name(nodes: dict) -> dict:
    return {NAMES[i]: n for i, n in nodes.items()}


def test_the_loop_steps_through_the_backward_pass(browser, hand_svg: Path) -> None:
    emulate(browser, prefers_reduced_motion="no-preference")
    try:
        start = state(browser, hand_svg, at_step(0))  # the lead-in: no credit yet
        first = state(browser, hand_svg, at_step(1))
        middle = state(browser, hand_svg, at_step(4))
        end = state(browser, hand_svg, at_step(7 + HOLD_STEPS - 0.5))
    finally:
        emulate(browser, prefers_reduced_motion="")
    assert start["count"] > 0
    assert lit(start["nodes"]) == [] and graded(start["nodes"]) == []
    assert start["captions"] == []
    assert by_name(start["nodes"])["a"]["fill"] == rgb(LIGHT.surface)  # no band: no credit
    # step 1: L and its op
    assert lit(first["nodes"]) == ["*L", "L"] and graded(first["nodes"]) == ["L", "d", "f"]
    assert done(first["nodes"]) == []
    assert first["captions"] == ["Step 1/7: L = d·f with dL/dL = 1 passes -2 to d and 4 to f"]
    # step 4: c, after L, f and d
    assert lit(middle["nodes"]) == ["c"]
    assert done(middle["nodes"]) == ["*L", "+d", "L", "d", "f"]
    assert graded(middle["nodes"]) == ["L", "c", "d", "e", "f"]
    assert by_name(middle["nodes"])["a"]["fill"] == rgb(LIGHT.surface)
    # the end of the loop holds the last step: a, every credit in
    assert lit(end["nodes"]) == ["a"]
    assert graded(end["nodes"]) == ["L", "a", "b", "c", "d", "e", "f"]
    assert by_name(end["nodes"])["a"]["fill"] == rgb(LIGHT.bands[5].fill)  # grad 6: 1 - 100
    assert end["captions"] == ["Step 7/7: a is a leaf, dL/da = 6 is its gradient"]


def test_reduced_motion_shows_the_last_step(browser, hand_svg: Path) -> None:
    emulate(browser, prefers_reduced_motion="reduce")
    try:
        still = state(browser, hand_svg, None)
    finally:
        emulate(browser, prefers_reduced_motion="")
    assert still["count"] == 0
    assert lit(still["nodes"]) == ["a"]
    assert done(still["nodes"]) == ["*L", "*e", "+d", "L", "b", "c", "d", "e", "f"]
    assert graded(still["nodes"]) == ["L", "a", "b", "c", "d", "e", "f"]
    assert still["captions"] == ["Step 7/7: a is a leaf, dL/da = 6 is its gradient"]


def test_it_plays_in_dark_mode_too(browser, hand_svg: Path) -> None:
    emulate(browser, prefers_reduced_motion="no-preference", prefers_color_scheme="dark")
    try:
        middle = state(browser, hand_svg, at_step(4))
    finally:
        emulate(browser, prefers_reduced_motion="", prefers_color_scheme="")
    assert lit(middle["nodes"], DARK) == ["c"]
    assert by_name(middle["nodes"])["c"]["fill"] == rgb(DARK.bands[5].fill)  # grad -2: 1 - 100
    assert by_name(middle["nodes"])["a"]["fill"] == rgb(DARK.surface)
