"""Test-wide settings.

Under CI (`CI` set, as `.ci/run` is run) hypothesis explores a fixed sequence of examples,
so a red CI always means a change broke something, never that a new random example turned
up; locally it keeps exploring fresh examples (and reports any it finds, with a seed).

Tests marked `slow` (they train networks or render at scale) are left out by `make test`
and run by `make test-all`; under CI nothing may leave them out.
"""

import os
import signal
from pathlib import Path

# numpy's BLAS on one thread, as gradviz's CLI runs it (gradviz.cli.BLAS_THREADS), set before
# anything loads numpy: batched training's small products gain nothing from OpenBLAS's
# threads, whose spinning after each product starved the browser tests' Chromium under load
# (script timeouts on the deep networks' pictures)
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# Started in the background (`make test &`, some CI runners), a process inherits SIGINT
# ignored, and so would every gradviz the tests start: the Ctrl-C tests could not interrupt
# them. Handling it here (as Python does by default) lets each child start with the default.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config: pytest.Config) -> None:
    """Under CI a `-m` that names `slow` would let the slow tests pass unrun: refuse it."""
    if os.environ.get("CI") and "slow" in (config.option.markexpr or ""):
        raise pytest.UsageError(
            f'CI runs every test, the slow ones too: -m "{config.option.markexpr}" would leave '
            "some out (run `make test-all`)"
        )


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """pytest-xdist writes its status line whenever it is asked to show it off a terminal,
    and under -q that line is always "bringing up nodes...": `make test` printed it twice.
    Each line is written once."""
    reporter = session.config.pluginmanager.getplugin("terminaldistreporter")
    if reporter is None:
        return
    shown: set[str] = set()
    show = reporter.ensure_show_status

    def once() -> None:
        line = reporter.getstatus()
        if line not in shown:
            shown.add(line)
            show()

    reporter.ensure_show_status = once


# Files that share a worker's costly state run on one worker (under --dist loadfile, as the
# Makefile runs the suite): plot_cases' pictures (matplotlib, seconds) and the trained
# reports of the fixtures below, each made once a worker that uses them.
SAME_WORKER = {
    "tests/test_browser_plots.py": "tests/test_plots.py",
    "tests/test_report_browser.py": "tests/test_report_page.py",
    "tests/test_docs_pictures.py": "tests/test_report_page.py",
    "tests/test_page_plots.py": "tests/test_report_page.py",
}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """--dist loadfile, with the files of SAME_WORKER grouped under one name."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SharedState(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return SAME_WORKER.get(scope, scope)

    return SharedState(config, log)


from browser import browser  # noqa: E402, F401  (the shared real-browser fixture)
from graphviz_support import system_dot  # noqa: E402


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test (or a parameter of one) marked `needs_system_dot` skips without the system
    Graphviz, and fails under CI (tests/graphviz_support.py: the one guard)."""
    if item.get_closest_marker("system_dot") is not None:
        system_dot()


# The trained models the report page's tests read, made once per worker for both files
# that use them (test_report_page.py, test_report_browser.py): a fixture of conftest.py is
# one fixture, where one imported into a second module would be trained again there.


def _invoke(*args: str):
    from click.testing import CliRunner

    from gradviz.cli import cli

    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="session")
def xor_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A small xor model (gradients recorded every 25 epochs) and its report."""
    folder = tmp_path_factory.mktemp("report")
    model, page = folder / "xor.json", folder / "xor.html"
    done = _invoke("train", "xor", "--epochs", "300", "--every", "25", "-q", "--save", str(model))
    assert done.exit_code == 0, done.output
    done = _invoke("inspect", str(model), "-o", str(page))
    assert done.exit_code == 0, done.output
    return model, page


@pytest.fixture(scope="session")
def deep_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """deep-sigmoid for 100 epochs: its gradients fall by decades after epoch 0."""
    folder = tmp_path_factory.mktemp("deep")
    model, page = folder / "deep.json", folder / "deep.html"
    args = ["train", "deep-sigmoid", "--epochs", "100", "--every", "25", "-q"]
    done = _invoke(*args, "--save", str(model), "--report", str(folder / "trained.html"))
    assert done.exit_code == 0, done.output
    done = _invoke("inspect", str(model), "-o", str(page))
    assert done.exit_code == 0, done.output
    return model, page
