"""The fence renderer: a `gradviz` command line (what a writer typed in a terminal after
`gradviz`) and the fence's options in, an HTML fragment for a docs page out.

The body is split with shlex (never a shell) and run in-process through the same click
commands as the terminal (`gradviz.cli`), with the picture written into a temporary folder
the fence chooses and read back: the docs show exactly what `gradviz … -o x.svg` writes.
What the fragment holds, by `format`:

- `svg` (the default): the picture inline, scaled to the column (viewBox kept, width 100%
  up to its own size), its ids namespaced so that many diagrams share a page;
- `mermaid`: `<pre class="mermaid">` for the site's own Mermaid (no CDN);
- `html`: the live page (sliders, stepper) in a sandboxed `<iframe srcdoc>`;
- `text`: what the command prints, as a terminal shows it.

Fragments are cached by the command line, the options, the content of the files it names
and gradviz's own version and code, in a folder outside the site. A failure is a
`FenceError` and writes nothing to the cache: the page gets an error box (`error_box`),
never a stale picture.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import html
import io
import json
import os
import re
import shlex
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import click

from gradviz.cli import cli
from gradviz.docs import command as command_line
from gradviz.docs import paths
from gradviz.files import write_atomic

FORMATS = ("svg", "mermaid", "html", "text")
OPTIONS = ("format", "height")  # what a fence's header (or a directive's options) may set
DEFAULT_HEIGHT_EXTRA = 720  # px below the picture in a live page: its controls and numbers
MAX_FRAME_HEIGHT = 2400  # px: a live page's frame is never taller than this before it loads
MAX_FITTED_HEIGHT = 10_000  # px: nor once it has said its height (a report: about 3,400)


class FenceError(Exception):
    """A fence that cannot be drawn: `message` as gradviz words it; `line` (1-based, in the
    page) once a front end knows where the fence is."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line

    def where(self, page: str) -> str:
        return f"{page}:{self.line}" if self.line is not None else page


@dataclass(frozen=True)
class FenceOptions:
    format: str = "svg"
    height: int | None = None  # px, the live page's frame (format=html); None: from the picture


def fence_options(given: Mapping[str, object]) -> FenceOptions:
    """The options of a fence header (`format=mermaid height=600`) or a directive, checked:
    an unknown option or value is a FenceError naming the ones there are."""
    unknown = sorted(set(given) - set(OPTIONS))
    if unknown:
        raise FenceError(
            f"unknown fence option {unknown[0]!r}: the options are {', '.join(OPTIONS)}"
        )
    fmt = str(given.get("format") or "svg").strip().lower()
    if fmt not in FORMATS:
        raise FenceError(f"format={fmt!r}: choose one of {', '.join(FORMATS)}")
    height = given.get("height")
    if height is not None:
        try:
            height = int(str(height).removesuffix("px"))
        except ValueError:
            height = 0
        if not 0 < height <= 10_000:
            raise FenceError(f"height={given['height']!r}: a number of pixels, 1 to 10000")
    return FenceOptions(format=fmt, height=height)


# -- the command line ---------------------------------------------------------------------

# What each command draws in each format: the options the fence adds ({out}: its folder),
# and the file it then reads (a glob: the last match in name order, e.g. the last frame).
CAPTURES: dict[str, dict[str, tuple[tuple[str, ...], str]]] = {
    "draw": {
        "svg": (("-o", "{out}/fence.svg"), "fence.svg"),
        "mermaid": (("-o", "{out}/fence.mmd"), "fence.mmd"),
        "html": (("-o", "{out}/fence.html"), "fence.html"),
    },
    "trace": {
        "svg": (("--frames", "{out}/frames"), "frames/step-*.svg"),
        "mermaid": (("--frames", "{out}/frames", "--format", "mmd"), "frames/step-*.mmd"),
        "html": (("-o", "{out}/fence.html"), "fence.html"),
    },
    # these name the picture with a flag of their own, given bare: `grads deep.json --plot`
    "grads": {"svg": ((), "picture.svg")},
    "train": {"svg": (("-q",), "picture.svg")},
    "inspect": {"html": (("-o", "{out}/report.html"), "report.html")},
}
# The flags that name the picture of a command that draws one by a flag of its own: the
# fence writes the file, so the body gives the flag alone (one of them).
PICTURE_FLAGS = {"grads": ("--plot",), "train": ("--boundary", "--curves")}
TEXT_COMMANDS = ("draw", "trace", "check", "grads", "compare", "inspect")
PICTURE_SUFFIXES = (".svg", ".png", ".pdf")
MAX_WORDS = 1000  # a command line longer than this is no command anyone types
_PICTURE = "\x00picture"  # stands for the fence's picture file while the body is read


def command_words(body: str) -> list[str]:
    """The fence's body as the words of a command line (shlex, as a shell would split it,
    but nothing is expanded or run). A leading `$` and `gradviz` are optional."""
    text = body.replace("\\\n", " ")  # a command continued over lines
    try:
        words = shlex.split(text, comments=False, posix=True)
    except ValueError as error:  # an unclosed quote
        raise FenceError(f"cannot split the command line: {error}") from None
    if words[:1] == ["$"]:
        words = words[1:]
    if words[:1] == ["gradviz"]:
        words = words[1:]
    if not words:
        raise FenceError('the fence is empty: write a gradviz command, e.g. draw "a*b" a=2 b=3')
    if len(words) > MAX_WORDS:
        raise FenceError(f"{len(words):,} words: a fence's command line has at most {MAX_WORDS:,}")
    return words


def _checked(
    words: list[str], fmt: str, out: str, commands: command_line.Commands | None = None
) -> list[str]:
    """The words with the fence's output options added (writing into folder `out`), after
    refusing what it cannot draw and every option of the body's that names an output:
    read as click reads the command line, so no spelling (`-oX`, `--output=X`) slips by."""
    command, rest = words[0], words[1:]
    known = sorted({*CAPTURES, *TEXT_COMMANDS})
    if command not in known:
        raise FenceError(f"{command!r} is not a gradviz command a fence draws: {', '.join(known)}")
    if fmt != "text" and fmt not in CAPTURES.get(command, {}):
        can = [f for f in FORMATS if f in CAPTURES.get(command, {})] + ["text"]
        raise FenceError(f"{command} draws no {fmt} in a fence: format={' or '.join(can)}")
    picture = fmt != "text" and command in PICTURE_FLAGS
    if picture:  # `grads deep.json --plot`: the picture's file is the fence's
        rest = _bare_picture_flag(command, rest)
    parsed = _parsed([command, *rest], commands)
    _refuse_outputs(parsed, rest, picture)
    if fmt == "text":
        if command not in TEXT_COMMANDS:
            raise FenceError(f"format=text: {command} prints nothing to show")
        return words
    rest = [f"{out}/picture.svg" if word == _PICTURE else word for word in rest]
    added = [word.format(out=out) for word in CAPTURES[command][fmt][0]]
    if _animated(words, fmt):  # `trace … --animate`: the animation is the picture
        added = ["-o", f"{out}/{ANIMATION}"]
    if "--" in rest:  # options go before `--` (an expression that starts with -)
        at = rest.index("--")
        final = [command, *rest[:at], *added, *rest[at:]]
    else:
        final = [command, *rest, *added]
    if out:  # what runs writes only into the fence's folder (checked as click reads it)
        _only_into(_parsed(final), out)
    return final


def _parsed(words: list[str], commands: command_line.Commands | None = None) -> command_line.Parsed:
    try:
        return command_line.parse(words, commands)
    except command_line.CommandLineError as error:
        raise FenceError(str(error)) from None


def _refuse_outputs(parsed: command_line.Parsed, rest: list[str], picture: bool) -> None:
    """Every option of the body that names a file the command writes (or its format):
    the fence's own picture flag aside, given once with the fence's file."""
    for option in command_line.outputs(parsed):
        flags = PICTURE_FLAGS.get(parsed.command.name or "", ())
        if picture and set(option.opts) & set(flags) and parsed.given[option.name] == [_PICTURE]:
            continue
        given = command_line.spelling(rest, option, skip=_PICTURE)
        if picture and set(option.opts) & set(flags):
            raise FenceError(
                f"{given}: the fence writes the picture itself; write {option.opts[0]} alone, once"
            )
        raise FenceError(
            f"{given}: the fence writes the output itself; leave {'/'.join(option.opts)} out "
            f"(the fence's format= option chooses {', '.join(FORMATS)})"
        )
    if picture and not any(
        parsed.given.get(name) == [_PICTURE]
        for name, param in parsed.params.items()
        if set(getattr(param, "opts", ())) & set(PICTURE_FLAGS[parsed.command.name or ""])
    ):  # the bare flag was read as another option's value (`--data --plot`)
        raise _picture_flag_error(parsed.command.name or "")
    extra = [word for word in parsed.extra if word != _PICTURE]
    if extra:
        raise FenceError(f"unexpected extra argument: {extra[0]}")


def _only_into(parsed: command_line.Parsed, out: str) -> None:
    folder = Path(out).resolve()
    for option in command_line.outputs(parsed):
        if option.writes != "file":
            continue
        for value in parsed.given[option.name]:
            for path in value if isinstance(value, (list, tuple)) else [value]:
                if not Path(str(path)).resolve().is_relative_to(folder):
                    raise FenceError(f"internal error: the fence would write {path}")


ANIMATION = "animated.svg"


def _picture_flag_error(command: str) -> FenceError:
    return FenceError(
        f"{command} draws its picture with {' or '.join(PICTURE_FLAGS[command])}, given once "
        "with no file name (the fence writes the file)"
    )


def _animated(words: list[str], fmt: str) -> bool:
    """`trace EXPR --animate`: the backward pass as one animated SVG (shown as an image, so
    that its styles and animations stay its own however many share a page)."""
    return words[0] == "trace" and fmt == "svg" and "--animate" in words


def _bare_picture_flag(command: str, rest: list[str]) -> list[str]:
    """`rest` with a stand-in for the fence's picture file after the one picture flag it
    gives bare (click then reads the line: the flag must take that file, once)."""
    flags = PICTURE_FLAGS[command]
    end = rest.index("--") if "--" in rest else len(rest)
    given = [i for i, word in enumerate(rest[:end]) if word in flags]
    if len(given) != 1:
        raise _picture_flag_error(command)
    at = given[0]
    after = rest[at + 1] if at + 1 < len(rest) else ""
    if after.lower().endswith(PICTURE_SUFFIXES):
        raise FenceError(
            f"{rest[at]} {after}: the fence writes the picture itself; write {rest[at]} alone"
        )
    return [*rest[: at + 1], _PICTURE, *rest[at + 1 :]]


# -- running it in-process ----------------------------------------------------------------

_RUNNING = threading.Lock()  # chdir and the redirected stdout are the process's own


@dataclass(frozen=True)
class Run:
    status: int
    stdout: str
    stderr: str


def run_command(words: list[str], base: Path) -> Run:
    """`gradviz WORDS` run in-process from folder `base` (where its relative paths start),
    its output captured: the click commands of `gradviz.cli`, no shell, no subprocess of
    our own (Graphviz's layout program aside)."""
    out, err = io.StringIO(), io.StringIO()
    settings = {"NO_COLOR": "1", "COLUMNS": "100", "TERM": "dumb", "GRADVIZ_TRACEBACK": ""}
    # graphviz-pure unless the site chose: the same picture on every machine, no system dot
    settings["GRADVIZ_DOT"] = os.environ.get("GRADVIZ_DOT") or "pure"
    with (
        _RUNNING,
        _environment(settings),
        contextlib.chdir(base),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            status = cli.main(args=words, prog_name="gradviz", standalone_mode=False)
        except click.ClickException as error:
            err.write(f"Error: {error.format_message()}\n")
            status = error.exit_code
        except click.Abort:
            err.write("Error: aborted\n")
            status = 1
        except MemoryError:  # a build under a memory limit: the page and line, not a crash
            err.write("Error: out of memory running this command (the build's memory limit)\n")
            status = 1
        except Exception as error:  # a bug in gradviz: the page says so, the build goes on
            err.write(f"Error: internal error: {type(error).__name__}: {error}\n")
            status = 1
    return Run(status or 0, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _environment(settings: dict[str, str]):
    saved = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _failure(run: Run) -> str:
    """gradviz's message of a failed run: its `Error: …` lines (notes left out)."""
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    start = next((i for i, line in enumerate(lines) if line.startswith("Error:")), None)
    kept = lines[start:] if start is not None else lines[-3:]
    return "\n".join(kept).removeprefix("Error: ") or f"gradviz exited with status {run.status}"


_QUOTED = re.compile(r"'([^'\n]*)'|\"([^\"\n]*)\"")
_CARETS = re.compile(r"\s*[\^~]+\s*")
_LEFT_OUT = "  (a line of a file the command read, left out of the page)"
HEAD_BYTES = 1 << 20  # of each file read, what a message is compared with


def without_file_content(message: str, files: list[Path], body: str) -> str:
    """gradviz's message with no text of the files the command read: a line it quotes
    (the line over a caret) left out, quoted values masked, unless the fence's body holds
    them (the page shows the body anyway). The page and the build log are public; the
    terminal shows the whole message."""
    if not files:
        return message
    heads = [_head(path) for path in files]
    names = {path.name for path in files}

    def from_a_file(text: str) -> bool:
        text = text.strip()
        return bool(text) and text not in body and any(text in head for head in heads)

    def masked(match: re.Match[str]) -> str:
        inner = match.group(1) if match.group(1) is not None else match.group(2)
        if inner in body or inner in names or Path(inner).name in names:
            return match.group(0)
        return "'…'"

    lines = message.split("\n")
    kept: list[str] = []
    for i, line in enumerate(lines):
        over_caret = i + 1 < len(lines) and _CARETS.fullmatch(lines[i + 1])
        if _CARETS.fullmatch(line) and kept and kept[-1] == _LEFT_OUT:
            continue
        if (over_caret and line.strip() not in body) or from_a_file(line):
            if not kept or kept[-1] != _LEFT_OUT:
                kept.append(_LEFT_OUT)
            continue
        kept.append(_QUOTED.sub(masked, line))
    return "\n".join(kept)


def _head(path: Path) -> str:
    try:
        with path.open("rb") as file:
            return file.read(HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""


# -- the cache ----------------------------------------------------------------------------


def default_cache_dir() -> Path:
    """GRADVIZ_FENCE_CACHE, else the user's cache folder (XDG_CACHE_HOME or ~/.cache):
    outside any site folder, kept between builds."""
    given = os.environ.get("GRADVIZ_FENCE_CACHE", "").strip()
    if given:
        return Path(given).expanduser()
    root = os.environ.get("XDG_CACHE_HOME", "").strip() or Path.home() / ".cache"
    return Path(root) / "gradviz" / "fence"


@functools.cache
def gradviz_fingerprint() -> str:
    """gradviz's version and a digest of its code and assets: a changed renderer (even
    before a release) draws every fence again."""
    from importlib.metadata import (  # lazy: start-up
        PackageNotFoundError,
        packages_distributions,
        version,
    )

    # the distribution that holds the module (gradviz-backprop: the module is gradviz)
    names = packages_distributions().get("gradviz", ["gradviz"])
    try:
        release = version(names[0])
    except PackageNotFoundError:  # run from a source tree
        release = "unreleased"
    digest = hashlib.sha256(release.encode())
    root = Path(__file__).resolve().parent.parent  # the gradviz package
    for path in sorted(root.rglob("*")):
        if path.suffix in (".py", ".js", ".css") and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return f"{release}-{digest.hexdigest()[:16]}"


def _file(path: Path) -> bool:
    try:
        return not path.is_dir()
    except OSError:
        return True  # its digest says what is wrong


def _digest(path: Path, name: str) -> str:
    try:
        return paths.digest(path, name=name)
    except paths.PathError as error:
        raise FenceError(str(error)) from None


class Cache:
    """Fragments by key, one file each in `folder` (None: no cache), written atomically."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.hits = 0
        self.misses = 0

    def key(self, found: paths.Found, options: FenceOptions, places: paths.Places) -> str:
        """The command line as it runs, where it runs, the options, and the content of
        every file it reads (a spec's or a model's data too), hashed in chunks."""
        document = {
            "gradviz": gradviz_fingerprint(),
            "words": found.words,
            "folder": places.show(found.folder),
            "options": [options.format, options.height],
            "files": {
                places.name(path): _digest(path, places.name(path))
                for path in found.files
                if _file(path)
            },
        }
        return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()

    def commands(self) -> command_line.Commands:
        """The commands to read command lines with, their descriptions kept here."""
        if getattr(self, "_commands", None) is None:
            self._commands = command_line.Commands(self.folder, gradviz_fingerprint())
        return self._commands

    def get(self, key: str) -> str | None:
        if self.folder is None:
            return None
        try:
            found = (self.folder / f"{key}.html").read_text(encoding="utf-8")
        except OSError:
            self.misses += 1
            return None
        self.hits += 1
        return found

    def put(self, key: str, fragment: str) -> None:
        if self.folder is None:
            return
        with contextlib.suppress(OSError):  # a cache that cannot be written only costs time
            self.folder.mkdir(parents=True, exist_ok=True)
            write_atomic(self.folder / f"{key}.html", fragment)


# -- the fragment -------------------------------------------------------------------------


def render_fence(
    body: str,
    options: FenceOptions | Mapping[str, object] = FenceOptions(),
    *,
    base: Path | str = ".",
    cache: Cache | None = None,
    prefix: str = "gv-",
    page: Path | str | None = None,
    roots: tuple[Path | str, ...] = (),
    mermaid_loaded: bool = True,
) -> str:
    """The HTML fragment of one fence: `body` is a gradviz command line. Its relative
    paths are looked for beside the `page`'s folder first, then in `base`; no file it
    reads may lie outside `roots` (default: `base`), the docs project. `prefix` starts
    every id of an inline SVG (unique on its page). `mermaid_loaded`: whether the site
    loads mermaid.js (if not, a Mermaid fence says it needs it). FenceError when it cannot
    be drawn; nothing is cached then."""
    if not isinstance(options, FenceOptions):
        options = fence_options(options)
    places = paths.Places(
        base=Path(base),
        page=Path(page) if page is not None else None,
        roots=tuple(Path(root) for root in roots) or (Path(base),),
    )
    words = command_words(body)
    cache = cache or Cache(None)
    commands = cache.commands()
    _checked(words, options.format, "", commands)  # refused before anything is read
    if not places.base.is_dir():
        raise FenceError(f"base {places.base}: no such folder (where the fences' commands run)")
    found = located(words, options.format, places, commands)
    key = cache.key(found, options, places)
    fragment = cache.get(key)
    if fragment is None:
        fragment = _draw(found, options, places, body)
        cache.put(key, fragment)
    if options.format == "mermaid" and not mermaid_loaded:
        fragment += MERMAID_NOTE
    return namespace_ids(fragment, prefix) if options.format == "svg" else fragment


MERMAID_NOTE = (
    '<p class="gradviz-mermaid-note"><small>This is Mermaid text: the site needs mermaid.js '
    "to draw it (MkDocs: extra_javascript; Sphinx: sphinxcontrib-mermaid or html_js_files), "
    "or the fence's format=svg.</small></p>"
)


def located(
    words: list[str],
    fmt: str,
    places: paths.Places,
    commands: command_line.Commands | None = None,
) -> paths.Found:
    """The files the command line names (every value of an option or argument that is
    not an output), found and checked: PathError as a FenceError."""
    command, rest = words[0], words[1:]
    if fmt != "text" and command in PICTURE_FLAGS:
        rest = _bare_picture_flag(command, rest)
    parsed = _parsed([command, *rest], commands)
    values = [
        value
        for param, value in parsed.values()
        if not isinstance(param, command_line.OutputOption) and value != _PICTURE
    ]
    try:
        return paths.locate(values, words, places)
    except paths.PathError as error:
        raise FenceError(str(error)) from None


def _draw(found: paths.Found, options: FenceOptions, places: paths.Places, body: str) -> str:
    words = found.words
    with tempfile.TemporaryDirectory(prefix="gradviz-fence-") as folder:
        run = run_command(_checked(words, options.format, folder), found.folder)
        if run.status != 0:
            message = without_file_content(_failure(run), found.files, body)
            raise FenceError(message + _where_looked(found, places))
        if options.format == "text":
            return (
                f'<pre class="gradviz-text"><code>{html.escape(run.stdout.rstrip())}</code></pre>'
            )
        _, pattern = CAPTURES[words[0]][options.format]
        written = sorted(
            Path(folder).glob(ANIMATION if _animated(words, options.format) else pattern)
        )
        if not written:
            raise FenceError(f"gradviz {words[0]} wrote no {options.format}")
        text = written[-1].read_text(encoding="utf-8")
    if _animated(words, options.format):
        return f'<div class="gradviz-diagram">{animation_image(text)}</div>'
    if options.format == "svg":
        return f'<div class="gradviz-diagram">{inline_svg(text)}</div>'
    if options.format == "mermaid":
        return f'<pre class="mermaid">{html.escape(text.strip())}</pre>'
    height = options.height or _frame_height(text)
    fit = "" if options.height else " data-gradviz-fit"  # a height the writer gave stays
    page = html.escape(_telling_height(text), quote=True)
    return (
        f'<iframe class="gradviz-page"{fit} srcdoc="{page}" '
        f'sandbox="allow-scripts" title="gradviz live page" loading="lazy" '
        f'style="width:100%;height:{height}px;border:0"></iframe>{FRAME_FITTER}'
    )


# The live page tells the page that holds it how tall it is (a sandboxed frame of its own
# origin: the page cannot measure it), whenever that changes; the page sizes its frame.
_HEIGHT_TELLER = (
    "(function(){var last=0;function tell(){var h=Math.ceil(document.documentElement"
    ".getBoundingClientRect().height);if(Math.abs(h-last)>1){last=h;"
    'parent.postMessage({gradvizFrameHeight:h},"*")}}'
    'addEventListener("load",tell);new ResizeObserver(tell).observe(document.body)})()'
)
FRAME_FITTER = (
    '<script>window.gradvizFrames||(window.gradvizFrames=1,addEventListener("message",'
    'function(e){var h=e.data&&e.data.gradvizFrameHeight;if(typeof h!=="number"||!(h>0))'
    'return;document.querySelectorAll("iframe.gradviz-page[data-gradviz-fit]").forEach('
    "function(f){if(f.contentWindow===e.source)f.style.height=Math.min(h,"
    f'{MAX_FITTED_HEIGHT})+"px"}})}}))</script>'
)
_SCRIPT_SRC = re.compile(r"(script-src )([^;\"]*)")


def _telling_height(page: str) -> str:
    """A live page with the script that tells its height, allowed by its hash in the
    page's Content-Security-Policy (which allows scripts by their hashes only)."""
    import base64  # lazy: start-up

    digest = base64.b64encode(hashlib.sha256(_HEIGHT_TELLER.encode()).digest()).decode()
    page = _SCRIPT_SRC.sub(lambda m: f"{m.group(1)}{m.group(2)} 'sha256-{digest}'", page, count=1)
    script = f"<script>{_HEIGHT_TELLER}</script>"
    at = page.rfind("</body>")
    return page[:at] + script + page[at:] if at >= 0 else page + script


def _where_looked(found: paths.Found, places: paths.Places) -> str:
    """For a fence that failed naming files that are not there: where they were looked for."""
    if not found.missing:
        return ""
    folders = [places.page, places.base] if places.page is not None else [places.base]
    where = " and ".join(
        f"{'beside the page, in' if folder == places.page else 'in base'} {places.show(folder)}"
        for folder in folders
    )
    return f"\n(looked for {', '.join(found.missing)} {where})"


_SIZE = re.compile(r'<svg\b[^>]*?\bheight="([\d.]+)(pt|px)?"')


def _frame_height(page: str) -> int:
    """A live page's frame: its picture's height (pt to px) and room for its controls."""
    size = _SIZE.search(page)
    drawing = float(size.group(1)) * (4 / 3 if size.group(2) == "pt" else 1) if size else 300.0
    return int(min(drawing, 900) + DEFAULT_HEIGHT_EXTRA) if size else MAX_FRAME_HEIGHT // 2


_PROLOGUE = re.compile(r"\A.*?(?=<svg\b)", re.DOTALL)  # XML declaration, doctype, comments
_ROOT = re.compile(r"<svg\b[^>]*>")
_LENGTH = re.compile(r'\s(width|height)="([\d.]+)(pt|px)?"')


def _lengths(tag: str) -> dict[str, float]:
    """An SVG root's width and height in CSS pixels (Graphviz and matplotlib write pt)."""
    return {
        name: float(value) * (4 / 3 if unit == "pt" else 1)
        for name, value, unit in _LENGTH.findall(tag)
    }


def inline_svg(svg: str) -> str:
    """An SVG file as an element of a page that scales to the column: the prologue dropped,
    width 100% up to its own width, height from the viewBox's proportions."""
    svg = _PROLOGUE.sub("", svg, count=1).strip()
    root = _ROOT.search(svg)
    if root is None:
        raise FenceError("the picture is not SVG")
    tag = root.group(0)
    width = _lengths(tag).get("width")
    style = f"width:100%;height:auto;max-width:{width:.0f}px" if width else "width:100%;height:auto"
    rest = _LENGTH.sub("", tag).removeprefix("<svg")
    classes = re.search(r'\sclass="([^"]*)"', rest)
    names = classes.group(1).split() if classes else []
    if classes:  # a themed SVG has its class already: one attribute, gradviz first
        rest = rest.replace(classes.group(0), "", 1)
    names = ["gradviz", *(name for name in names if name != "gradviz")]
    new = f'<svg class="{" ".join(names)}" style="{style}"{rest}{INLINE_STYLE}'
    return _scoped_styles(svg[: root.start()] + new + svg[root.end() :])


# The page's own styles must not reach into a diagram: a theme that underlines links
# (Sphinx's alabaster: `a {text-decoration: underline}`) would underline every label
# Graphviz wraps in a tooltip's <a> ("+" reads "±").
INLINE_STYLE = "<style>svg.gradviz a,svg.gradviz a:hover{text-decoration:none;border:0}</style>"
_STYLE = re.compile(r"(<style\b[^>]*>)(.*?)(</style>)", re.DOTALL)
_UNIVERSAL = re.compile(r"(^|[{}])(\s*)\*(\s*\{)")
_SYSTEM_DARK = re.compile(r"(@media \(prefers-color-scheme:dark\)\{)(svg\.gradviz(?:-plot)?\{)")


def _scoped_styles(svg: str) -> str:
    """An SVG's own style sheets, kept to it once it sits in a page: a rule for every
    element (matplotlib's `*{stroke-linejoin: round}`) only for the diagram's, and the
    system's dark mode only where the page's theme follows the system (furo's auto mode):
    on a page whose theme is light only, a diagram stays light, as the page does. Themes
    that switch (mkdocs-material's slate, furo, pydata-sphinx-theme) switch it still."""

    def scoped(match: re.Match[str]) -> str:
        css = _UNIVERSAL.sub(r"\1\2svg.gradviz *\3", match.group(2))
        css = _SYSTEM_DARK.sub(r'\1body[data-theme="auto"] \2', css)
        return match.group(1) + css + match.group(3)

    return _STYLE.sub(scoped, svg)


def animation_image(svg: str) -> str:
    """An animated SVG as an `<img>` (its CSS animations play there, as in a README), as
    wide as the column up to its own width."""
    import base64  # lazy: start-up

    root = _ROOT.search(svg)
    lengths = _lengths(root.group(0)) if root else {}
    width = f";max-width:{lengths['width']:.0f}px" if "width" in lengths else ""
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return (
        f'<img class="gradviz-animation" src="data:image/svg+xml;base64,{data}" '
        f'alt="the backward pass, animated" style="width:100%;height:auto{width}">'
    )


def namespace_ids(svg: str, prefix: str) -> str:
    """Every id of an inline SVG (and every reference to one: href, url()) prefixed, so
    that two diagrams on one page never share an id: the renderers' own prefixing
    (`gradviz.render.themes.prefix_ids`, as `to_svg(id_prefix=…)` does it)."""
    from gradviz.render.themes import prefix_ids  # lazy: start-up

    return prefix_ids(svg, prefix)


def error_box(message: str, where: str, body: str) -> str:
    """What a page shows for a fence that failed (a build that is not strict): the place,
    gradviz's message and the command line, in a box no reader takes for a picture."""
    return (
        '<div class="gradviz-error" role="alert" style="border:2px solid #c62828;'
        'border-radius:4px;padding:.6em .9em;margin:1em 0;background:#fdecea;color:#4a0d0d">'
        f'<p style="margin:0 0 .4em"><strong>gradviz fence failed</strong> at '
        f"<code>{html.escape(where)}</code></p>"
        f'<pre style="white-space:pre-wrap;margin:0 0 .4em;background:none;color:inherit">'
        f"{html.escape(message)}</pre>"
        f'<p style="margin:0;font-size:.85em">gradviz {html.escape(body.strip())}</p></div>'
    )
