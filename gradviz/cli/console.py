"""The one way every command makes its rich consoles.

Colour only on a terminal without NO_COLOR (rich checks both). On a terminal, rich fits
the output to its width. Piped or redirected, there is no width to fit: lines are made
wide enough that no table drops a column and no line wraps, so `gradviz … > file`
keeps every number (PIPED_WIDTH columns at least, or COLUMNS if wider).
"""

from __future__ import annotations

from rich.console import Console

PIPED_WIDTH = 240  # the widest table (grads, 19 columns) fits


def stdout_console(soft_wrap: bool = False) -> Console:
    """stdout. `soft_wrap=True`: rich never breaks a line (one line per item)."""
    console = Console(highlight=False, soft_wrap=soft_wrap)
    if not console.is_terminal:
        console = Console(
            highlight=False, soft_wrap=soft_wrap, width=max(console.width, PIPED_WIDTH)
        )
    return console


def stderr_console() -> Console:
    """stderr, for progress bars and notes (shown only when it is a terminal)."""
    return Console(stderr=True, highlight=False)
