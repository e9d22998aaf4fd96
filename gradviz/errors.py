"""gradviz's one error hierarchy: the library raises these with structured fields, and
`gradviz.cli` turns them into exit statuses and messages in one place."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from typing import NamedTuple

# How an option is named to the reader: the library says `eps`, `level='layer'`,
# `grad=False` (as a Python call writes it); the CLI `--eps`, `--level layer`, `--no-grad`.
OptionWords = Callable[[str], str]


def keyword(option: str) -> str:
    """How the library names an option: by its keyword, as a Python call writes it."""
    return option


class Worded(NamedTuple):
    """A text naming options as `{option}`, and those options (advice a caller words)."""

    template: str
    options: tuple[str, ...] = ()

    def words(self, words: OptionWords = keyword) -> str:
        """The text with each `{option}` of `options` named by `words`, and nothing else."""
        text = self.template
        for option in self.options:
            text = text.replace("{" + option + "}", words(option))
        return text


class GradvizError(Exception):
    """Base class. `exit_code` is what the CLI exits with: 2 bad input, 1 runtime failure.
    The message and hint name each of `options` as `{input}`: keywords here, flags once
    the CLI renders them (`render(flag)`); any other brace stays as it is."""

    exit_code = 1

    def __init__(
        self, message: str, *, hint: str | None = None, options: Sequence[str] = ()
    ) -> None:
        self.options = tuple(options)
        self.template, self.hint_template = message, hint
        self.message, self.hint = self._words(keyword)
        super().__init__(self.message)

    def _words(self, words: OptionWords) -> tuple[str, str | None]:
        hint = self.hint_template and Worded(self.hint_template, self.options).words(words)
        return Worded(self.template, self.options).words(words), hint

    def render(self, words: OptionWords | None = None) -> str:
        """The full text for a user: message, then anything that points at the cause;
        `words` names the options (the CLI: as flags)."""
        message, hint = self._words(words or keyword)
        return message if not hint else f"{message}\n{hint}"


QUOTE_LIMIT = 60  # characters of the user's text an error quotes; the rest is elided


def quoted(value: object, limit: int = QUOTE_LIMIT) -> str:
    """The user's text as an error quotes it: repr'd, cut after `limit` characters with its
    length (`'vvvv…' (20,000 characters)`)."""
    if isinstance(value, str):
        if len(value) <= limit and len(shown := repr(value)) <= limit + 2:
            return shown
        # the longest start whose repr fits: an escape such as \x1b takes four columns
        low = min(len(value), limit)
        while len(repr(value[:low])) > limit + 2:
            low -= 1
        head = repr(value[:low])
        return f"{head[:-1]}…{head[-1]} ({len(value):,} characters)"
    shown = repr(value)
    return shown if len(shown) <= limit else f"{shown[:limit]}… ({len(shown):,} characters)"


def shortened(text: str, limit: int = QUOTE_LIMIT) -> str:
    """A name as an error shows it unquoted (a spec key, a column): cut after `limit`."""
    return text if len(text) <= limit else f"{text[:limit]}…"


def listing(names: list[str], shown: int = 8, width: int = 20) -> str:
    """Names for an error line: the first `shown`, each cut, then `… (1,000 in all)`."""
    text = ", ".join(shortened(name, width) for name in names[:shown])
    return text if len(names) <= shown else f"{text}, … ({len(names):,} in all)"


class InputError(GradvizError):
    """The user gave something we cannot accept (exit status 2)."""

    exit_code = 2


class ExpressionError(InputError):
    """A problem at a place in an expression: `start`/`end` are character offsets."""

    def __init__(
        self,
        message: str,
        *,
        source: str,
        start: int,
        end: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.source = source
        self.start = max(0, min(start, len(source)))
        self.end = max(self.start + 1, end if end is not None else self.start + 1)

    def render(self, words: OptionWords | None = None) -> str:
        """Message, the offending line (a window around the span, marked …) and a caret under
        the span. Control, surrogate and format characters (bidi overrides) print as �, so
        no escape reaches the terminal and the carets line up; wide characters get two."""
        line_start = self.source.rfind("\n", 0, self.start) + 1
        line_end = self.source.find("\n", self.start)
        line_end = len(self.source) if line_end == -1 else line_end
        left = max(line_start, self.start - _CONTEXT)
        span_end = min(self.end, line_end, self.start + _CONTEXT)
        right = min(line_end, span_end + _CONTEXT)
        before = ("…" if left > line_start else "") + self.source[left : self.start]
        spanned = self.source[self.start : span_end]
        after = self.source[span_end:right] + ("…" if right < line_end else "")
        shown = _printable(before + spanned + after)
        caret = " " * _width(before) + "^" * max(1, _width(spanned))
        text = f"{self.message}\n  {shown}\n  {caret}"
        return f"{text}\n{self.hint}" if self.hint else text


_CONTEXT = 60  # characters of a long line shown on each side of an error's span


def _printable(text: str) -> str:
    return "".join(
        " " if c == "\t" else "\ufffd" if unicodedata.category(c) in ("Cc", "Cs", "Cf") else c
        for c in text
    )


def _width(text: str) -> int:
    """Terminal columns: East Asian wide characters take two, combining marks none."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


class SpecError(InputError):
    """A network spec (TOML file or inline options) that cannot be used."""


class ModelError(InputError):
    """A saved model file that is malformed."""


class DataError(InputError):
    """A data set (built-in name or CSV file) that cannot be used."""


class OutputError(InputError):
    """An output path or format that cannot be used (a missing folder, an unknown extension)."""


class WriteError(GradvizError):
    """Writing failed at run time on a usable path (disk full, I/O error): exit status 1."""


class RenderError(GradvizError):
    """Rendering failed at run time (no `dot` program, `dot` crashed): exit status 1."""


class TrainingError(GradvizError):
    """Training failed at run time (non-finite loss): exit status 1."""


class StatusFound(TrainingError):
    """A watched run reached a status named by `fail_on`: which, in which layer, at which step."""

    def __init__(
        self, message: str, *, status: str, layer: str, step: int, hint: str | None = None
    ) -> None:
        super().__init__(message, hint=hint)
        self.status, self.layer, self.step = status, layer, step
