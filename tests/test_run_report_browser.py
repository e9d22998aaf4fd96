"""The report page of a recorded run (records.Run: statistics, no network or data) in a
real browser (Chromium through Selenium, see tests/browser.py): it loads without a console
error, and no visible control throws when used (its "Show graph" button threw a TypeError:
there are no input boxes to read)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from click.testing import CliRunner
from test_html_browser import severe

from gradviz.cli import cli
from gradviz.nn import Network, layer_samples
from gradviz.records import Run, RunLayer
from gradviz.schema import save_run
from gradviz.stats import diagnose

CONTROLS_JS = """
return Array.from(document.querySelectorAll('button, input, select'))
  .filter(e => e.getClientRects().length > 0).map(e => e.id || e.tagName);
"""


def _run_page(folder: Path) -> Path:
    network = Network([2, 3, 1], ["sigmoid", "sigmoid"])
    network.initialise("default", 0)
    X = np.array([[0.0, 1.0], [1.0, 0.0]])
    d = diagnose(layer_samples(network, X, np.array([1.0, 0.0])))
    layers = [RunLayer(s.name, "Linear", (s.n_out, s.n_in), "sigmoid") for s in d.layers]
    run, page = folder / "run.json", folder / "run.html"
    save_run(Run(layers, [(0, d), (10, d)], 20, 10, [0, 10], [0.5, 0.25], [None, 1.0]), run)
    done = CliRunner().invoke(cli, ["inspect", str(run), "-o", str(page)])
    assert done.exit_code == 0, done.output
    return page


def test_every_visible_control_of_a_run_report_works(browser, tmp_path) -> None:
    from selenium.webdriver.common.keys import Keys

    severe(browser)  # an empty log to start
    browser.get(_run_page(tmp_path).as_uri())
    assert severe(browser) == []
    controls = browser.execute_script(CONTROLS_JS)
    assert "show-typed" not in controls  # nothing to show: the run holds no data
    assert controls == ["epoch"]
    slider = browser.find_element("id", "epoch")
    slider.send_keys(Keys.HOME)
    slider.send_keys(Keys.END)
    assert browser.find_element("id", "epoch-text").text.startswith("epoch 10 (2 of 2")
    assert "no data" in browser.find_element("id", "run-lacks").text
    assert severe(browser) == []
