"""The backward pass of a recorded PyTorch graph step by step: the order (each node after
every node it feeds), the captions with the gradients, the frontier, the animated SVG and
the live page (in Chromium: Next moves the step)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest
from browser import open_page
from torch_support import require_torch

torch = require_torch()

import gradviz.torch as gt  # noqa: E402
from gradviz.numbers import fmt  # noqa: E402
from gradviz.output import render  # noqa: E402
from gradviz.render.step_page import backward_sentences  # noqa: E402
from gradviz.torch.examples import MODELS  # noqa: E402
from gradviz.torch.graph import FRONTIER  # noqa: E402
from gradviz.torch.steps import animation, backward_steps, backward_timeline, page  # noqa: E402
from tools.samples import docs_program  # noqa: E402


def _recorded(name: str, **options):
    net, loss_of = MODELS[name]()
    with gt.record(net) as rec:
        loss_of().backward()
    return rec.diagram(**options)


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("level", ["module", "op"])
def test_each_step_comes_after_every_node_it_feeds(name: str, level: str) -> None:
    d = _recorded(name, level=level)
    steps = backward_steps(d)
    when = {node_id: k for k, lit in enumerate(steps) for node_id in lit}
    assert set(when) == {n.id for n in d.nodes}  # every node lit once
    for e in d.edges:
        if when[e.source] != when[e.target]:
            assert when[e.source] > when[e.target], (e.source, e.target)
    assert d.node(steps[0][0]).role == "output"


def test_the_captions_say_each_gradient_and_mark_the_frontier() -> None:
    d = _recorded("deep")
    _, timeline = backward_timeline(d)
    steps = backward_steps(d)
    sentences = backward_sentences(d)
    for caption, sentence, lit in zip(timeline.captions, sentences, steps, strict=True):
        assert sentence.startswith(caption.removesuffix(" ▶ the frontier").split(",")[0])
        node = d.node(lit[0])
        said = (
            f"grad {fmt(node.grad)}" if node.grad is not None else f"grad rms {fmt(node.grad_rms)}"
        )
        assert said in caption and said in sentence
        assert ("the frontier" in caption) == (FRONTIER in node.extra_lines)
        assert ("the frontier" in sentence) == (FRONTIER in node.extra_lines)
        feeds = [e.source for e in d.edges if e.target in lit and e.source not in lit]
        if feeds:  # whom it passes its gradient to, named
            assert "passes it back to" in sentence
    assert sum("the frontier" in c for c in timeline.captions) == 1


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("level", ["module", "op"])
def test_the_animation_and_the_page(name: str, level: str) -> None:
    d = _recorded(name, level=level)
    svg = animation(d, program=docs_program()).decode()
    assert ET.fromstring(svg).tag.endswith("svg") and "@keyframes" in svg
    html = page(d, program=docs_program())
    data = json.loads(re.search(r'id="gv-steps">(.*?)</script>', html).group(1))
    assert data["steps"] == len(backward_steps(d))
    assert "script-src 'sha256-" in html and "unsafe-inline" not in html
    # the html format of gradviz's renderers gives the same page for a recorded graph
    assert render(d, "html", rankdir=None, program=docs_program()).decode() == html


@pytest.mark.slow
def test_next_steps_the_page_in_chromium(browser, tmp_path) -> None:
    d = _recorded("transformer")
    sentences = backward_sentences(d)
    open_page(browser, page(d, program=docs_program()), tmp_path)
    text = browser.find_element("id", "step-text")
    assert text.text == sentences[0]
    for k in range(1, 4):
        browser.find_element("id", "next").click()
        assert text.text == sentences[k]
    # the picture at its natural width fits the column (text not shrunk): at most 800 px
    width = browser.execute_script(
        "return document.querySelector('#graph svg').viewBox.baseVal.width"
    )
    assert width * 4 / 3 <= 800
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors
