"""The backward pass of a recorded PyTorch graph, step by step, as `trace --animate` and
the trace's live page step through a gradviz graph: the animated SVG and the live page of
a diagram of `gradviz.torch.diagram`, laid out here (the steps, the timeline and the page
are `gradviz.render.step_page`'s, pure and torch-free; `gradviz.output.render(d, "html")`
gives the same page).
"""

from __future__ import annotations

from gradviz.render.animate import Timeline
from gradviz.render.diagram import Diagram
from gradviz.render.step_page import backward_steps, backward_timeline

__all__ = ["animation", "backward_steps", "backward_timeline", "page"]


def animation(diagram: Diagram, *, rankdir: str | None = None, program=None) -> bytes:
    """The backward pass as one animated SVG (`gradviz.render.animate`), laid out once."""
    return _animated(diagram, rankdir, program)[0].encode("utf-8")


def page(diagram: Diagram, *, rankdir: str | None = None, program=None) -> str:
    """The live page: the picture fitted to its column (with zoom), and the backward
    pass stepped through with Previous, Play and Next (`gradviz.render.step_page`)."""
    from gradviz.pages import html_page  # lazy: start-up

    return html_page(diagram, rankdir=rankdir, program=program)


def _animated(diagram: Diagram, rankdir: str | None, program) -> tuple[str, Timeline]:
    from gradviz.pages import stepped_svg  # lazy: start-up

    return stepped_svg(diagram, rankdir=rankdir, program=program)
