"""The system Graphviz (`dot`) for the tests that need it: the README calls it optional
(graphviz-pure, installed with gradviz, draws SVG and PNG), so without it those tests skip
with the reason, except under CI (`CI` set, as `.ci/run` runs), where a missing `dot` is a
failure: `.ci/run` installs Debian's graphviz and the system-`dot` path must be tested there.

One guard for every such test: `system_dot()` in a test body or a helper, or the
`needs_system_dot` mark (on a test, or on one `pytest.param` of a parametrized test).
"""

from __future__ import annotations

import os
import shutil

import pytest

WHY = "no system Graphviz `dot` on PATH (apt-get install graphviz; .ci/run installs it)"


def system_dot() -> str:
    """The path of the system `dot`, or skip the test (fail it under CI)."""
    found = shutil.which("dot")
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail(f"the system-Graphviz tests must run in CI: {WHY}", pytrace=False)
    pytest.skip(WHY)


# A mark for a test or a parameter: the test runs only with a system `dot` (under CI, it
# must have one). conftest.py's pytest_runtest_setup calls `system_dot()` for it.
needs_system_dot = pytest.mark.system_dot
