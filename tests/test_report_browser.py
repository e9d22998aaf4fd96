"""The report page in a real browser (Chromium through Selenium; must run in CI, see
tests/browser.py): no console error, no network request, the epoch slider and the examples
work from the keyboard, every control is reached by Tab and has a name."""

from __future__ import annotations

from pathlib import Path

from browser import blocked_requests
from test_html_browser import severe
from test_page_plots import axis, plots
from test_report_page import expected_fill, python_example  # (the models: conftest.py)

from gradviz.model import load_model
from gradviz.numbers import fmt

FILLS_JS = """
return Object.fromEntries(Array.from(document.querySelectorAll('#graph g.node')).map(g =>
  [g.querySelector('title').textContent, g.querySelector('polygon, path').getAttribute('fill')]));
"""


MARKS_JS = """
const line = document.querySelector('svg.gvp.curves .now');
const column = document.querySelector('svg.gvp.grads .now');
return [parseFloat(line.getAttribute('x1')),
  [parseFloat(column.getAttribute('x')), parseFloat(column.getAttribute('width'))]];
"""
RASTERS_JS = """
const done = arguments[arguments.length - 1];
Promise.all(Array.from(document.querySelectorAll('svg.gvp image')).map(i => {
  const img = new Image(); img.src = i.getAttribute('href');
  return img.decode().then(() => [img.naturalWidth, img.naturalHeight], () => [0, 0]);
})).then(done);
"""


def test_the_page_loads_clean_and_requests_nothing(browser, xor_report) -> None:
    severe(browser)
    _, page = xor_report
    browser.get(page.as_uri())
    assert severe(browser) == []
    # data: pictures are no requests; nothing else is fetched
    entries = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
    )
    assert [e for e in entries if not e.startswith("data:")] == []
    blocked = blocked_requests(browser)
    assert sorted(blocked) == ["connect-src", "img-src"]
    severe(browser)  # those two violations were ours
    # every picture drew: the three plots inline, each raster of theirs a PNG the browser
    # decodes (under the page's policy), the network inline
    plots = browser.execute_script(
        "return Array.from(document.querySelectorAll('svg.gvp')).map(s => "
        "[s.getBoundingClientRect().width, s.querySelectorAll('image').length])"
    )
    assert len(plots) == 3 and all(w > 300 for w, _ in plots)
    assert [n for _, n in plots] == [0, 2 + 4 + 1, 1]  # bars; map, 4 units, bars; bar
    decoded = browser.execute_async_script(RASTERS_JS)
    assert len(decoded) == 8 and all(w > 0 and h > 0 for w, h in decoded), decoded
    assert severe(browser) == []


def test_the_epoch_slider_works_by_keyboard(browser, deep_report) -> None:
    from selenium.webdriver.common.keys import Keys

    severe(browser)
    model_path, page = deep_report
    snapshots = load_model(model_path).snapshots()
    drawn = plots(page)
    epoch_on_curves, _ = axis(drawn["curves"], "epoch")
    heat_epoch, _ = axis(drawn["grads"], "heat-epoch")
    browser.get(page.as_uri())
    slider = browser.find_element("id", "epoch")
    for k in (3, 2, 1, 0):
        slider.send_keys(Keys.ARROW_LEFT)
        assert slider.get_attribute("value") == str(k)
        epoch, diagnosis = snapshots[k]
        text = browser.find_element("id", "epoch-text").text
        assert text.startswith(f"epoch {epoch} ({k + 1} of 5 recorded)")
        fills = browser.execute_script(FILLS_JS)
        assert [fills[f"L{i + 1}"] for i in range(10)] == [
            expected_fill(layer.rms) for layer in diagnosis.layers
        ]
        # the plots mark that epoch: a line on the curves, the heat map's column outlined
        curve_x, heat = browser.execute_script(MARKS_JS)
        assert abs(epoch_on_curves(curve_x) - epoch) < 0.1
        low, high = (heat_epoch(x) for x in (heat[0], heat[0] + heat[1]))
        assert low < epoch < high and high - low < 25.5  # the column of that epoch alone
    slider.send_keys(Keys.END)
    assert browser.find_element("id", "epoch-text").text.startswith("epoch 100 (5 of 5")
    assert severe(browser) == []


def test_every_control_is_reached_by_tab_and_has_a_name(browser, xor_report) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    model_path, page = xor_report
    browser.get(page.as_uri())
    controls = browser.find_elements(By.CSS_SELECTOR, "input, button")
    wanted = {c.get_attribute("id") or c.get_attribute("aria-label") for c in controls}
    browser.find_element(By.TAG_NAME, "body").click()
    reached, names = set(), {}
    active = browser.switch_to.active_element
    for _ in range(40):
        active.send_keys(Keys.TAB)
        active = browser.switch_to.active_element
        ident = active.get_attribute("id") or active.get_attribute("aria-label")
        reached.add(ident)
        names[ident] = active.accessible_name
        if ident == "show-typed":
            break
    assert wanted <= reached
    assert all(names[i].strip() for i in wanted)
    assert names["epoch"] == "Epoch" and names["in-y"] == "target y"
    # an example's button by keyboard shows its graph, numbers as the Python engine's
    data = load_model(model_path).dataset()
    browser.find_element(By.CSS_SELECTOR, '#examples button[data-i="3"]').send_keys(Keys.ENTER)
    expected = python_example(model_path, data.X[3].tolist(), float(data.Y[3]))
    rows = browser.find_elements(By.CSS_SELECTOR, "#graph-table tbody tr")
    shown = [[td.text for td in row.find_elements(By.TAG_NAME, "td")][5:7] for row in rows]
    assert shown == [[fmt(d), fmt(g)] for d, g in expected]
    # and a typed input, submitted with Enter
    box = browser.find_element(By.ID, "in-0")
    box.clear()
    box.send_keys("0.25", Keys.ENTER)
    text = browser.find_element(By.ID, "example-text").text
    assert text.startswith(f"input (0.25, {fmt(float(data.X[3, 1]))}), target")


def test_screenshot_of_the_xor_report(browser, xor_report, tmp_path: Path) -> None:
    """The page lays out at a docs width without anything wider than the window."""
    _, page = xor_report
    browser.set_window_size(1200, 900)
    browser.get(page.as_uri())
    overflow = browser.execute_script(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    browser.set_window_size(1600, 1200)
    assert overflow <= 0


def test_a_click_in_the_data_picture_shows_that_inputs_graph(browser, xor_report) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    severe(browser)
    model_path, page = xor_report
    browser.get(page.as_uri())
    scatter = browser.find_element("id", "scatter")
    # xor's points span [0, 1] on both axes, drawn 14 px inside a 260 px square: the
    # middle of the picture is the input (0.5, 0.5), give or take a pixel (1/232)
    ActionChains(browser).move_to_element(scatter).click().perform()
    x = [float(browser.find_element("id", f"in-{j}").get_attribute("value")) for j in (0, 1)]
    assert all(abs(v - 0.5) <= 1 / 232 for v in x)
    y = float(browser.find_element("id", "in-y").get_attribute("value"))
    text = browser.find_element("id", "example-text").text
    assert text.startswith(f"input ({fmt(x[0])}, {fmt(x[1])}), target {fmt(y)}: loss ")
    expected = python_example(model_path, x, y)
    assert text.split(": loss ")[1].startswith(fmt(expected[-1][0]) + " (")
    assert severe(browser) == []
