"""The live page in a real browser (Chromium through Selenium; must run in CI, see
tests/browser.py): keyboard on the sliders and buttons, the numbers against the Python
engine, the steps against `gradviz trace`, no console error, no network request, every
control reachable by Tab and labelled."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser import blocked_requests, open_page, wait_until
from click.testing import CliRunner
from test_html_page import HAND, HAND_VALUES, TWICE, page_for, python_numbers, trace_blocks

from gradviz.cli import cli

SHOWN_JS = """
return Array.from(document.querySelectorAll('#graph g.node')).map(g => ({
  id: g.querySelector('title').textContent,
  texts: Array.from(g.querySelectorAll('text')).map(t => t.textContent)}));
"""


def shown(driver) -> dict[str, tuple[str, str]]:
    numbers = {}
    for node in driver.execute_script(SHOWN_JS):
        texts = [t.replace("\u2007", "").strip() for t in node["texts"]]
        data = [t[5:] for t in texts if t.startswith("data ")]
        grad = [t[5:] for t in texts if t.startswith("grad ")]
        if data:
            numbers[node["id"]] = (data[0], grad[0])
    return numbers


def severe(driver) -> list[dict]:
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def leaf_range(driver, name: str):
    from selenium.webdriver.common.by import By

    label = driver.find_element(By.XPATH, f"//div[@class='leaf']/label[text()='{name}']")
    return driver.find_element(By.ID, label.get_attribute("for"))


def test_arrow_keys_move_an_input_and_every_number_follows(browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.keys import Keys

    severe(browser)  # start with an empty log
    open_page(browser, page_for(HAND, HAND_VALUES), tmp_path)
    assert shown(browser) == python_numbers(HAND, HAND_VALUES)
    slider = leaf_range(browser, "a")
    for _ in range(3):
        slider.send_keys(Keys.ARROW_RIGHT)
    a = float(slider.get_attribute("value"))
    assert a == pytest.approx(2.3)
    assert shown(browser) == python_numbers(HAND, {**HAND_VALUES, "a": a})
    nudge = browser.find_element("id", "nudge").text
    assert nudge.startswith(f"a: 2 → {a:g}")
    # The address follows a dragged slider at most 5 times a second.
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 2).until(
        lambda d: d.current_url.endswith("#a=2.3&b=-3&c=10&f=-2&step=0")
    )
    assert severe(browser) == []


def test_stepping_with_the_keyboard_says_what_gradviz_trace_says(browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.keys import Keys

    severe(browser)
    out = tmp_path / "trace.html"
    args = ["trace", TWICE, "x=3", "-o", str(out)]
    assert CliRunner().invoke(cli, args).exit_code == 0
    browser.get(out.as_uri())
    expected = trace_blocks(TWICE, {"x": 3.0})
    text = browser.find_element("id", "step-text")
    seen = [text.text]  # the trace page opens on step 1
    nxt = browser.find_element("id", "next")
    for _ in expected[1:]:
        nxt.send_keys(Keys.ENTER)
        seen.append(text.text)
    assert seen == expected
    hand = page_for(HAND, HAND_VALUES)
    open_page(browser, hand, tmp_path)
    nxt = browser.find_element("id", "next")
    seen = []
    for _ in range(7):
        nxt.send_keys(Keys.ENTER)
        seen.append(browser.find_element("id", "step-text").text)
    assert seen == trace_blocks(HAND, HAND_VALUES)
    assert severe(browser) == []


def test_the_page_requests_nothing_and_its_policy_blocks_requests(browser, tmp_path: Path) -> None:
    open_page(browser, page_for(HAND, HAND_VALUES), tmp_path)
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    blocked = blocked_requests(browser)
    assert sorted(blocked) == ["connect-src", "img-src"]
    severe(browser)  # those two violations were ours


def test_every_control_is_reached_by_tab_and_has_a_name(browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    open_page(browser, page_for(HAND, HAND_VALUES), tmp_path)
    # one step in, so that ◀ Previous is enabled (a disabled button is no Tab stop; the
    # click on the body below once landed on Next by chance, where the page was shorter)
    browser.find_element(By.ID, "next").click()
    controls = browser.find_elements(By.CSS_SELECTOR, "input, button")
    wanted = {c.get_attribute("id") for c in controls}
    browser.find_element(By.TAG_NAME, "h1").click()
    reached, names, order = set(), {}, []
    active = browser.switch_to.active_element
    for _ in range(60):  # once round the page's Tab stops (back at the first), at most 60
        active.send_keys(Keys.TAB)
        active = browser.switch_to.active_element
        ident = active.get_attribute("id") or active.get_attribute("aria-label")
        if order and ident == order[0]:
            break
        order.append(ident)
        reached.add(ident)
        names[ident] = active.accessible_name
    assert wanted <= reached
    assert all(names[i].strip() for i in wanted)
    # The graph is one Tab stop; arrow keys walk its nodes and edges, focus shows details.
    stops = [i for i in reached if i and re.fullmatch(r"(node|edge)\d+", i)]
    assert len(stops) == 1
    node = browser.find_element(By.ID, stops[0])
    node.send_keys(Keys.HOME)  # focus stays on the first node
    details = set()
    for _ in browser.find_elements(By.CSS_SELECTOR, "#graph g.node, #graph g.edge"):
        details.add(browser.find_element(By.ID, "detail").text)
        browser.switch_to.active_element.send_keys(Keys.ARROW_RIGHT)
    assert len(details) == 19  # 7 values, 3 ops, 6 edges into ops, 3 out of them
    assert "∂(d·f)/∂d = f = -2.0" in "\n".join(details)


def test_the_notebook_frame_runs_the_page(browser, tmp_path: Path) -> None:
    import gradviz

    severe(browser)
    frame = gradviz.explore(HAND, **HAND_VALUES)._repr_html_()
    open_page(browser, f"<!doctype html><html><body>{frame}</body></html>", tmp_path)
    browser.switch_to.frame(0)
    try:
        assert shown(browser) == python_numbers(HAND, HAND_VALUES)
        slider = leaf_range(browser, "f")
        from selenium.webdriver.common.keys import Keys

        slider.send_keys(Keys.ARROW_LEFT)
        f = float(slider.get_attribute("value"))
        assert shown(browser) == python_numbers(HAND, {**HAND_VALUES, "f": f})
    finally:
        browser.switch_to.default_content()
    assert severe(browser) == []


# Resolves after `ms` milliseconds of the page's own clock (its timers run on it).
PAGE_WAIT_JS = "const done = arguments[arguments.length - 1]; setTimeout(done, arguments[0]);"


def test_copy_and_play_work_from_the_keyboard(browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.keys import Keys

    severe(browser)
    open_page(browser, page_for(HAND, HAND_VALUES), tmp_path)
    leaf_range(browser, "c").send_keys(Keys.ARROW_LEFT)
    command = browser.find_element("id", "command").text
    assert command == "gradviz draw 'e = a*b; d = e + c; L = d*f' a=2 b=-3 c=9.9 f=-2"
    browser.find_element("id", "copy").send_keys(Keys.ENTER)
    # Headless Chromium may refuse the clipboard; then the line is selected for Ctrl+C.
    status = wait_until(browser, lambda d: d.find_element("id", "copy-status").text)
    assert status in ("copied", "selected: press Ctrl+C to copy")
    if status != "copied":
        assert browser.execute_script("return String(window.getSelection())") == command
    play = browser.find_element("id", "play")
    play.send_keys(Keys.ENTER)
    assert play.text == "Pause"

    def moved_on(driver) -> str | None:  # a step every 1.2 s: however busy the machine
        text = driver.find_element("id", "step-count").text
        return text if re.fullmatch(r"step [2-7] of 7", text) else None

    wait_until(browser, moved_on)
    play.send_keys(Keys.ENTER)  # pause
    assert play.text == "Play"
    count = browser.find_element("id", "step-count").text
    browser.execute_async_script(PAGE_WAIT_JS, 1500)  # longer than a step, on the page's clock
    assert browser.find_element("id", "step-count").text == count
    assert severe(browser) == []


def test_what_gradviz_draw_returns_shows_the_live_page_in_a_notebook(
    browser, tmp_path: Path
) -> None:
    """`gradviz.draw(value)` is still a Digraph (`.source`, `.render()`), but a notebook
    shows it as the live page: the same sandboxed frame `explore` gives, with the value's
    numbers, and its inputs move."""
    import gradviz
    from gradviz.expr import parse_program

    root = parse_program(HAND, HAND_VALUES).output
    root.backward()
    drawn = gradviz.draw(root)
    assert drawn.source.startswith("digraph gradviz")
    frame = drawn._repr_mimebundle_()["text/html"]
    assert frame.startswith("<iframe srcdoc=") and 'sandbox="allow-scripts"' in frame
    severe(browser)
    open_page(browser, f"<!doctype html><html><body>{frame}</body></html>", tmp_path)
    browser.switch_to.frame(0)
    try:
        assert shown(browser) == python_numbers(HAND, HAND_VALUES)
        from selenium.webdriver.common.keys import Keys

        slider = leaf_range(browser, "a")
        slider.send_keys(Keys.ARROW_RIGHT)
        a = float(slider.get_attribute("value"))
        assert shown(browser) == python_numbers(HAND, {**HAND_VALUES, "a": a})
    finally:
        browser.switch_to.default_content()
    assert severe(browser) == []
