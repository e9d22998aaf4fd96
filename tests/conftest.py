"""Test-wide settings.

Under CI (`CI` set, as `.ci/run` is run) hypothesis explores a fixed sequence of examples,
so a red CI always means a change broke something, never that a new random example turned
up; locally it keeps exploring fresh examples (and reports any it finds, with a seed).

Tests marked `slow` (they train networks or render at scale) are left out by `make test`
and run by `make test-all`; under CI nothing may leave them out.
"""

import os
import signal

import pytest
from hypothesis import settings

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


from browser import browser  # noqa: E402, F401  (the shared real-browser fixture)
