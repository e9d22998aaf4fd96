"""One self-contained HTML page per graph: the SVG drawing made live.

Sliders per input, the nudge readout, node details and the backward pass step by step (as
`gradviz trace` prints it); a small JavaScript engine (assets/engine.js, its ops generated
from JS_OPS) recomputes every number, run against the Python engine by
tests/test_html_parity.py. Nothing is fetched: scripts and styles are inline, allowed by
their hashes in a Content-Security-Policy that forbids everything else. User text reaches
the page escaped: as HTML text, inside Graphviz's SVG (XML-escaped by Graphviz), or as
JSON with `<`, `>`, `&` and U+2028/9 written as escapes, so no name can close a tag.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import math
import re
import sys
from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from rich.console import Console

from gradviz.errors import OptionWords, keyword
from gradviz.numbers import DEFAULT_PRECISION
from gradviz.ops import BINARY_OPS, NEG, UNARY_OPS, Op, javascript, javascript_chain, power_op
from gradviz.render import colours
from gradviz.render.colours import BAD_BAND, BAD_BORDER, BAD_MARK, BANDS, STATE_LOOK
from gradviz.render.diagram import Diagram

if TYPE_CHECKING:
    from gradviz.records import Step

# Above this many values a page is the static picture with a note: sliders over a
# graph nobody can read would only make the page slow.
LIVE_LIMIT = 300
# A page fits its picture to its width, never cutting it: at an 800 px window the graph
# has about 750 px, and Graphviz's 11 pt node text (14.7 px) stays at 10 px or more when
# the picture is at most this wide. Wider left to right, a page draws top to bottom.
FIT_WIDTH_PX = 1100


# Data and grad texts are laid out this many characters wide, so most new numbers fit
# their box after a slider moves (figure spaces: as wide as a digit).
NUMBER_WIDTH = 6

POWER_KEY = "powN"


def table_ops() -> dict[str, Op]:
    """The op table's entries by their key on the page (every power_op(n) is one entry,
    `powN`; tests/test_html_parity.py finds every Op)."""
    ops = {op.name: op for op in (*BINARY_OPS.values(), NEG, *UNARY_OPS.values())}
    ops[POWER_KEY] = power_op(3.0)
    return ops


# The op table in JavaScript: forward value and local derivatives of each op as
# expressions in `a`, `b` (inputs), `out` (the op's value) and `n` (a constant exponent),
# the row's own expressions (`ops.javascript(op)`), which call assets/engine.js's helpers:
# the same IEEE operations as gradviz.ops's, in the same order.
JS_OPS: dict[str, tuple[str, tuple[str, ...]]] = {
    key: forms for key, op in table_ops().items() if (forms := javascript(op)) is not None
}


def op_key(op: Op) -> str:
    """The JS_OPS entry of an op: its name, or `powN` for a constant power."""
    return POWER_KEY if op.name not in JS_OPS and op.symbol.startswith("**") else op.name


def power_exponent(op: Op) -> float:
    return float(op.name[len("pow") :])


@cache
def ops_script() -> str:
    """`var GV_OPS = {...}`: the op table's arity and credit rule with JS_OPS's maths."""
    entries = []
    for key, op in table_ops().items():
        forward, locals_ = JS_OPS[key]
        # the chain rule's products, where the row writes them (log: g / a, `Op.chain`)
        chain = javascript_chain(op)
        credit = (
            ""
            if chain is None
            else f",\n    c: function (g, out, a, b, n) {{ return [{', '.join(chain)}]; }}"
        )
        entries.append(
            f"  {json.dumps(key)}: {{arity: {op.arity}, passes: {str(op.passes_credit).lower()},\n"
            f"    f: function (a, b, n) {{ return {forward}; }},\n"
            f"    d: function (out, a, b, n) {{ return [{', '.join(locals_)}]; }}{credit}}}"
        )
    return "var GV_OPS = {\n" + ",\n".join(entries) + "\n};\n"


def asset_text(name: str) -> str:
    return resources.files("gradviz.render").joinpath("assets", name).read_text("utf-8")


@cache
def engine_script() -> str:
    """The engine as one script: GV_OPS, then assets/engine.js (defines `GV`)."""
    return asset_text("engine.js").replace(
        "var OPS = GV_OPS;", ops_script() + "  var OPS = GV_OPS;"
    )


# -- what the page knows about the graph -----------------------------------------------


NO_GRAD = "grad=False"  # the option that draws data alone (`diagram_from_value(..., grad=False)`)


def live_reason(diagram: Diagram, words: OptionWords = keyword) -> str | None:
    """Why this diagram gets a static page (None: it can be live), naming the option
    that left the gradients out as `words` does (`grad=False`; the CLI: `--no-grad`)."""
    values = list(diagram.value_ids)
    if not values or len(values) != sum(n.kind == "value" for n in diagram.nodes):
        return "only a graph drawn from an expression is live"
    if not diagram.has_grad:
        return f"drawn without gradients ({words(NO_GRAD)}), so not live"
    if len(values) > LIVE_LIMIT:
        return f"{len(values)} values: live pages stop at {LIVE_LIMIT}"
    if any(v.data.__class__ is not float for v in values):
        return "a batch of samples is not live"
    return None


def _trace_texts(out: str, steps: Sequence[Step]) -> list[str]:
    """`gradviz trace`'s backward pass, one text block per step, as it prints it."""
    from gradviz.render.trace_view import backward_view  # lazy: start-up

    console = Console(file=io.StringIO(), width=100_000, color_system=None, soft_wrap=True)
    console.print(backward_view(steps, out))
    text = console.file.getvalue()
    blocks = re.split(r"\n\n(?=Step \d)", text.rstrip("\n"))
    return [block.rstrip("\n") for block in blocks[1:]]


def graph_data(
    graph: dict[str, Any],
    *,
    precision: int = DEFAULT_PRECISION,
    steps: Sequence[Step] | None = None,
) -> dict[str, Any]:
    """The graph as the page's script reads it: `graph`'s nodes (`gradviz.drawn.page_graph`),
    what the texts say around the numbers, and with the trace's `steps` the backward pass."""
    nodes = graph["nodes"]
    leaves = [i for i, node in enumerate(nodes) if node["k"] is None and "constant" not in node]
    out = graph["out"]
    return {
        "nodes": nodes,
        "leaves": leaves,
        "out": out,
        "precision": precision,
        "tracePrecision": DEFAULT_PRECISION,  # the trace prints numbers its own way
        "bands": [{"fill": b.fill, "ink": b.ink} for b in BANDS],
        "bad": {"fill": BAD_BAND.fill, "ink": BAD_BAND.ink},
        "edges": list(colours.BAND_EDGES),
        "badBorder": BAD_BORDER,
        "mark": BAD_MARK,
        "states": {k: list(v) for k, v in STATE_LOOK.items()},
        "trace": None if steps is None else _trace_texts(graph["trace_out"], steps),
        "intro": (
            f"Press Next to walk the backward pass: from {out} back to the inputs, each node "
            f"passes its credit d{out}/dnode times the local derivative to each input."
        ),
        "nudgeIntro": (
            f"Move an input: the change of {out} is measured, and compared with "
            f"gradient × change, the linear estimate."
        ),
    }


def page_diagram(diagram: Diagram) -> Diagram:
    """The diagram as the page draws it: no SVG tooltips (the page shows details itself)."""
    return replace(diagram, nodes=tuple(replace(n, detail="") for n in diagram.nodes))


# -- the page ------------------------------------------------------------------------------


_SCRIPT_SAFE = str.maketrans({c: f"\\u{ord(c):04x}" for c in "&<>\u2028\u2029"})


def json_for_script(value: object) -> str:
    """JSON that can sit inside <script>: no `<`, `>`, `&` or line separator in it raw."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.translate(_SCRIPT_SAFE)


def csp_hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def style_sources(css: str, *svgs: str) -> str:
    """The policy's style sources: the page's own style and each inline SVG's (its
    dark-mode style sheet, `gradviz.render.themes`), by their hashes."""
    from gradviz.render.themes import style_blocks  # lazy: start-up

    blocks = [css] + [block for svg in svgs for block in style_blocks(svg)]
    return " ".join(f"'{csp_hash(block)}'" for block in dict.fromkeys(blocks))


_SVG_PROLOGUE = re.compile(r"\A.*?(?=<svg\b)", re.S)
_SVG_COMMENT = re.compile(r"<!--.*?-->", re.S)


def inline_svg(svg: str) -> str:
    """Graphviz's SVG as an element of the page: no XML prologue, doctype or comments."""
    return _SVG_COMMENT.sub("", _SVG_PROLOGUE.sub("", svg, count=1)).strip()


def reading_order(data: dict[str, Any], expression: str) -> list[int]:
    """The inputs in the order the expression names them (graph order breaks ties, and
    places names it does not find), so the sliders read like the text."""

    def first_use(i: int) -> int:
        name = data["nodes"][i]["name"]
        found = re.search(rf"(?<![\w.]){re.escape(name)}(?![\w.])", expression)
        return found.start() if found else len(expression)

    return sorted(data["leaves"], key=first_use)


def _leaf_rows(data: dict[str, Any]) -> str:
    rows = []
    for i in data["leaves"]:
        node = data["nodes"][i]
        x = float(node["v"])  # "nan", "inf", "-inf" too
        low, high, step = slider_range(x)
        name = html.escape(node["name"])
        value = _js_number(x) if math.isfinite(x) else ""  # a number box cannot hold nan
        rows.append(
            f'<div class="leaf" id="leaf-{i}">'
            f'<label for="range-{i}">{name}</label>'
            f'<input type="range" id="range-{i}" min="{_js_number(low)}" max="{_js_number(high)}" '
            f'step="{_js_number(step)}" value="{value or _js_number(low / 2 + high / 2)}" '
            f'aria-label="{name} (slider)">'
            f'<input type="number" id="box-{i}" step="any" value="{value}" '
            f'aria-label="{name} (value)">'
            f'<span class="leaf-grad"></span></div>'
        )
    return "\n".join(rows)


def _js_number(x: float) -> str:
    """A number as JavaScript's String(x) writes it for the values sliders hold."""
    return repr(int(x)) if x.is_integer() and abs(x) < 1e16 else repr(x)


def slider_range(x: float) -> tuple[float, float, float]:
    """A slider around x: ±max(4, 2|x|), in about forty steps of a round size each way;
    near the float maximum (1e308) its ends stop at ±the maximum instead of overflowing."""
    if not math.isfinite(x):
        x = 0.0
    half = min(max(4.0, 2 * abs(x)), sys.float_info.max)  # 2|x| is inf past 9e307
    step = 10.0 ** math.floor(math.log10(half / 40))
    half = min(math.ceil(half / step) * step, sys.float_info.max)
    return max(x - half, -sys.float_info.max), min(x + half, sys.float_info.max), step


# The head of every page gradviz writes (this one and the report): its own policy, its
# own style, nothing from outside.
HEAD = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="gradviz">
<title>{title}</title>
<style>{css}</style>
</head>
"""


@cache
def page_css() -> str:
    return asset_text("page.css")


def to_html(
    diagram: Diagram,
    svg: str,
    *,
    expression: str | None = None,
    command: str = "draw",
    step: int = 0,
    precision: int = DEFAULT_PRECISION,
    note: str | None = None,
    graph: dict[str, Any] | None = None,
    steps: Sequence[Step] = (),
) -> str:
    """The page for `diagram`, drawn by `svg` (Graphviz's SVG of `page_diagram(diagram)`
    laid out with padded numbers). Live when `live_reason` finds nothing against it and
    the expression is known (the caller gives it as one line: `gradviz.pages.one_line`),
    its Values' `graph` (`gradviz.drawn.page_graph`) given, its backward pass walked
    through the trace's `steps`; `step` 1 opens on the first."""
    reason = note or live_reason(diagram)
    if reason is None and expression is None:
        expression = ""
    title = expression.strip().replace("\n", " ") if expression else (diagram.title or "graph")
    short = title if len(title) <= 80 else title[:77] + "…"
    css = page_css()
    if reason is not None:
        body_scripts = ""
        controls = (
            f'<p class="note">{html.escape(reason)}: this page is the picture (hover a node for '
            "its numbers).</p>"
        )
        script_src = "'none'"
        sub = "gradviz: the graph with every node's data and gradient"
    else:
        if graph is None:
            raise ValueError("a live page needs its graph: gradviz.drawn.page_graph(diagram)")
        data = graph_data(graph, precision=precision, steps=steps)
        data.update(expression=expression, command=command)
        data["leaves"] = reading_order(data, expression)
        if step:
            data["startStep"] = step
        code = engine_script() + asset_text("page.js")
        body_scripts = (
            f'<script type="application/json" id="gv-data">{json_for_script(data)}</script>\n'
            f"<script>{code}</script>"
        )
        script_src = f"'{csp_hash(code)}'"
        panels = asset_text("controls.html").rstrip("\n")
        controls = panels.format(leaves=_leaf_rows(data), nudge=html.escape(data["nudgeIntro"]))
        sub = (
            "Move an input to recompute every data and gradient; step through the backward pass "
            "below."
        )
    csp = (
        f"default-src 'none'; script-src {script_src}; style-src {style_sources(css, svg)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    # The page's markup: assets/graph.html; a live page's panels: assets/controls.html.
    return (HEAD + asset_text("graph.html")).format(
        csp=csp,
        title=html.escape(f"gradviz: {short}"),
        css=css,
        heading=html.escape(short),
        sub=html.escape(sub),
        svg=inline_svg(svg),
        kind="live" if reason is None else "static",
        controls=controls,
        scripts=body_scripts,
    )
