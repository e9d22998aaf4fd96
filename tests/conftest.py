"""Test-wide settings.

Under CI (`CI` set, as `.ci/run` is run) hypothesis explores a fixed sequence of examples,
so a red CI always means a change broke something, never that a new random example turned
up; locally it keeps exploring fresh examples (and reports any it finds, with a seed).
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

from browser import browser  # noqa: E402, F401  (the shared real-browser fixture)
