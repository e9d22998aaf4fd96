"""User text made safe to show, and the one rule that names an unnamed output (shared by
the library and every renderer, so no library module imports a renderer for them)."""

from __future__ import annotations

from collections.abc import Iterable

# What an unlabelled output is called, in order of preference: `L` (the usual name of
# the quantity whose gradient we take), unless a node of the graph is already called so.
OUTPUT_NAMES = ("L", "out", "output")


def printable(text: str) -> str:
    """User text with every character that is not printable (controls, lone surrogates,
    unassigned code points, spaces other than ' ') as Python writes it escaped (`\\n`,
    `\\x1b`, `\\u200b`): no output format receives them raw."""
    if text.isprintable():  # nearly always: one pass in C (a drawing prints thousands)
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def printable_lines(text: str) -> str:
    """`printable`, line by line: no escape sequence in a quoted name reaches the terminal."""
    return "\n".join(printable(line) for line in text.split("\n"))


def output_name(label: str | None, labels: Iterable[str | None]) -> str:
    """What the output is called in `∂L/∂x` by every command: its label, else the first of
    OUTPUT_NAMES no node of the graph is `labels`-ed."""
    if label:
        return printable(label)
    taken = set(labels)
    return next((name for name in OUTPUT_NAMES if name not in taken), OUTPUT_NAMES[0])


def operand(name: str) -> str:
    """A name as an operand: negative constants get parentheses (`x·(-1)`)."""
    return f"({name})" if name.startswith("-") else name
