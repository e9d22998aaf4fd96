"""A page that steps through a backward pass drawn as one animated SVG
(`gradviz.render.animate`): the picture fitted to its column (zoom: fit, 100 %, 200 %),
Previous, Play and Next, and the step's caption in words.

The animation already says what each step shows (CSS keyframes on one loop); the page's
script only pauses it and seeks it to the middle of a step (a negative animation delay),
so the page and the animated SVG cannot disagree. Pure: the animated SVG and its
`Timeline` in, one self-contained HTML string out (its script and styles allowed by
their hashes, nothing fetched). A reader who prefers reduced motion sees the last step.
"""

from __future__ import annotations

import html

from gradviz.render.animate import LEAD_STEPS, STEP_SECONDS, Timeline
from gradviz.render.html import (
    HEAD,
    asset_text,
    csp_hash,
    inline_svg,
    json_for_script,
    style_sources,
)

BODY = """<body>
<h1>{heading}</h1>
<div class="buttons"><button type="button" id="prev">◀ Previous</button>
<button type="button" id="play">Play</button>
<button type="button" id="next">Next ▶</button>
<span id="step-count" aria-live="polite"></span>
<span>zoom</span><button type="button" data-zoom="fit">fit</button>
<button type="button" data-zoom="1">100 %</button>
<button type="button" data-zoom="2">200 %</button></div>
<pre id="step-text" aria-live="polite"></pre>
<figure id="graph" class="fit" aria-label="the computation graph">{svg}</figure>
<script type="application/json" id="gv-steps">{data}</script>
<script>{script}</script>
</body>
</html>
"""


def step_page(svg: str, timeline: Timeline, *, title: str, start: int = 0) -> str:
    """The page for the animated `svg` of `timeline`, opening on step `start` (from 0)."""
    css, script = asset_text("steps.css"), asset_text("steps.js")
    data = {
        "steps": timeline.steps,
        "lead": LEAD_STEPS,
        "seconds": STEP_SECONDS,
        "captions": list(timeline.captions),
        "start": max(0, min(start, timeline.steps - 1)),
    }
    csp = (
        f"default-src 'none'; script-src '{csp_hash(script)}'; "
        f"style-src {style_sources(css, svg)}; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )
    head = HEAD.format(csp=csp, title=html.escape(title), css=css)
    return head + BODY.format(
        heading=html.escape(title),
        svg=inline_svg(svg),
        data=json_for_script(data),
        script=script,
    )
