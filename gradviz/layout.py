"""The Graphviz program that lays out pictures: finding it, and running it safely.

A system `dot` is preferred (it also does PDF); else `graphviz-pure`, a static port
installed with gradviz, renders SVG and PNG with no system packages, and is preferred for
a heavy layout (10-15 times faster than dot 2.43 there: PREFER_PURE_COST) and a PyTorch
drawing's SVG (`gradviz.output.pure_first`). `GRADVIZ_DOT`
chooses one: `system`, `pure`, `none` or a program's path; any other value, like a bad
`GRADVIZ_DOT_TIMEOUT`, is bad input (exit 2). A layout runs with an argv list (no shell),
a timeout, and in a process group of its own.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gradviz.errors import InputError, RenderError, Worded, quoted

if TYPE_CHECKING:
    import subprocess


# Above this layout cost, SVG and PNG go to graphviz-pure even with a system dot. SVG times,
# dot 2.43 vs graphviz-pure 0.2.2: `t = t*x` chains of cost 10k/40k/152k 0.9/12/95 s vs
# 0.1/1.2/6.6 s; sums `x*y+…` of cost 10k/40k/250k 0.4/12/>180 s vs 0.3/2.2/24 s.
PREFER_PURE_COST = 20_000
# PNGs at twice the CSS pixel (sharp on a high-density screen; a 10-point `+` stays a `+`),
# at most PNG_MAX_PX across or down (a bigger drawing is scaled down).
PNG_DPI = 96
PNG_SCALE = 2
PNG_MAX_PX = 3840
PNG_MAX_INCHES = PNG_MAX_PX / (PNG_DPI * PNG_SCALE)
DOT_TIMEOUT = 60.0  # seconds; GRADVIZ_DOT_TIMEOUT overrides

GET_GRAPHVIZ = (
    "install Graphviz (apt install graphviz, brew install graphviz, winget install graphviz) "
    "or `pip install graphviz-pure` (SVG and PNG only)"
)
WITHOUT_GRAPHVIZ = ".dot, .mmd, .md, .json, .txt and the terminal view work without it"


@dataclass(frozen=True)
class DotProgram:
    """A Graphviz layout program and what it can write."""

    path: str
    kind: str  # "system" (Graphviz's dot) or "pure" (graphviz-pure)

    @property
    def formats(self) -> tuple[str, ...]:
        return ("svg", "png", "pdf") if self.kind == "system" else ("svg", "png")


def _pure_program() -> str | None:
    """graphviz-pure: on PATH, or next to this interpreter when the venv is not active."""
    import shutil  # lazy: start-up (as are the other imports for writing pictures)
    import sysconfig  # lazy: start-up

    found = shutil.which("graphviz-pure")
    if found:
        return found
    name = "graphviz-pure.exe" if os.name == "nt" else "graphviz-pure"
    for folder in (Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))):
        candidate = folder / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


DOT_CHOICES = ("auto", "system", "pure", "none")


def dot_choice() -> str:
    """GRADVIZ_DOT (`auto` when unset): a word of DOT_CHOICES or a program's path."""
    choice = os.environ.get("GRADVIZ_DOT", "").strip() or "auto"
    if choice in DOT_CHOICES:
        return choice
    import shutil  # lazy: start-up

    try:  # a name too long for the file system is no program either
        path = shutil.which(choice) or choice
        runnable = Path(path).is_file() and os.access(path, os.X_OK)
    except OSError:
        runnable = False
    if not runnable:
        raise InputError(
            f"GRADVIZ_DOT={quoted(choice)} is neither {', '.join(DOT_CHOICES)} nor a program "
            "that can be run"
        )
    return path


def dot_programs(*, heavy: bool = False) -> list[DotProgram]:
    """Usable programs, best first, as `GRADVIZ_DOT` allows: system `dot` first, unless the
    layout is `heavy` and none was chosen."""
    import shutil  # lazy: start-up

    choice = dot_choice()
    if choice not in DOT_CHOICES:  # a program's path
        return [DotProgram(choice, "pure" if "graphviz-pure" in Path(choice).name else "system")]
    found = {"system": shutil.which("dot"), "pure": _pure_program()}
    kinds = {"auto": ["pure", "system"] if heavy else ["system", "pure"], "none": []}
    return [DotProgram(found[k], k) for k in kinds.get(choice, [choice]) if found[k]]


def find_dot(fmt: str, *, heavy: bool = False) -> DotProgram:
    """The program that renders `fmt`, or a RenderError saying how to get one."""
    programs = dot_programs(heavy=heavy)
    for program in programs:
        if fmt in program.formats:
            return program
    choice = dot_choice()
    if choice == "none":  # switched off on purpose: say so, not how to install it
        raise RenderError(
            f"GRADVIZ_DOT=none switched Graphviz off, so {fmt.upper()} cannot be written "
            f"(unset GRADVIZ_DOT to use it); {WITHOUT_GRAPHVIZ}"
        )
    if programs:  # only graphviz-pure, asked for PDF
        raise RenderError(
            f"{fmt.upper()} needs Graphviz's own `dot` (graphviz-pure does SVG and PNG): "
            f"install Graphviz (apt install graphviz, brew install graphviz); "
            f"SVG, PNG, {WITHOUT_GRAPHVIZ}"
        )
    if choice in ("system", "pure"):
        missing = "no `dot` is on PATH" if choice == "system" else "graphviz-pure is not found"
        raise RenderError(
            f"GRADVIZ_DOT={choice} but {missing}, so {fmt.upper()} cannot be written: "
            f"unset GRADVIZ_DOT, or {GET_GRAPHVIZ}; {WITHOUT_GRAPHVIZ}"
        )
    raise RenderError(
        f"no Graphviz program found to write {fmt.upper()}: {GET_GRAPHVIZ}; {WITHOUT_GRAPHVIZ}"
    )


def dot_timeout() -> float:
    """Seconds a layout may take: GRADVIZ_DOT_TIMEOUT, else DOT_TIMEOUT."""
    text = os.environ.get("GRADVIZ_DOT_TIMEOUT", "").strip()
    if not text:
        return DOT_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < 1e6:  # the user's setting: bad input, exit 2
        raise InputError(
            f"GRADVIZ_DOT_TIMEOUT={quoted(text)} is not a number of seconds (> 0, < 1e6)"
        )
    return seconds


SMALLER = Worded("draw a smaller graph")  # what a timeout advises first, by default


def run_dot(
    dot_text: str,
    fmt: str,
    *,
    program: DotProgram | None = None,
    heavy: bool = False,
    smaller: Worded = SMALLER,
) -> bytes:
    """Lay out DOT text and return the picture, one format a call (a PNG's `-Gsize` cap
    would shrink an SVG of the same call); `smaller` is what a timeout suggests first."""
    import subprocess  # lazy: start-up

    program = program or find_dot(fmt, heavy=heavy)
    timeout = dot_timeout()
    argv = [program.path, f"-T{fmt}"]
    if fmt == "png":
        argv += [f"-Gdpi={PNG_DPI * PNG_SCALE}", f"-Gsize={PNG_MAX_INCHES:g},{PNG_MAX_INCHES:g}"]
    try:
        done = _run_in_own_group(argv, dot_text.encode("utf-8"), timeout)
    except subprocess.TimeoutExpired:
        faster = (
            "; graphviz-pure is much faster on such graphs: GRADVIZ_DOT=pure"
            if program.kind == "system" and fmt in ("svg", "png") and _pure_program()
            else ""
        )
        raise RenderError(
            f"{Path(program.path).name} took longer than {timeout:g} s to draw the graph",
            hint=f"{smaller.template[0].upper()}{smaller.template[1:]}, write .dot or .json "
            "instead (no layout needed), or set GRADVIZ_DOT_TIMEOUT=SECONDS to wait longer"
            f"{faster}.",
            options=smaller.options,
        ) from None
    except OSError as error:
        raise RenderError(f"could not run {program.path}: {error.strerror or error}") from None
    if done.returncode != 0 or not done.stdout:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = message[-1] if message else f"exit status {done.returncode}"
        raise RenderError(f"{Path(program.path).name} failed to write {fmt.upper()}: {why}")
    return done.stdout


def _run_in_own_group(argv: list[str], data: bytes, timeout: float) -> subprocess.CompletedProcess:
    """`subprocess.run` in a process group of its own, all of it killed on a timeout or
    Ctrl-C: a `dot` wrapper that started a child leaves nothing running behind it."""
    import subprocess  # lazy: start-up

    process = None
    try:
        with _signals_deferred():
            process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=os.name == "posix",
            )
        out, err = process.communicate(data, timeout=timeout)
    except BaseException:  # the timeout, Ctrl-C, SIGTERM: end every process it started
        if process is not None:
            _kill_group(process)
        raise
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Ctrl-C (and SIGTERM, under a Python handler: the CLI's) wait while the program starts
    and are raised once Popen has returned: raised inside Popen, they would leave it running
    with nobody holding it."""
    import threading  # lazy: start-up

    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread gets signals (and may set their handlers)
        return
    names = [getattr(signal, name) for name in ("SIGINT", "SIGTERM") if hasattr(signal, name)]
    handlers = {s: h for s in names if callable(h := signal.getsignal(s))}
    caught: list[int] = []
    for number in handlers:
        signal.signal(number, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        for number, handler in handlers.items():
            signal.signal(number, handler)
        for number in dict.fromkeys(caught):  # each once, by its own handler
            signal.raise_signal(number)


def _kill_group(process: subprocess.Popen) -> None:
    if os.name == "posix":
        with contextlib.suppress(OSError):  # already gone
            os.killpg(process.pid, signal.SIGKILL)
    process.kill()
    process.wait()  # reap it; not communicate(): a child that left the group may hold a pipe
    for pipe in (process.stdin, process.stdout, process.stderr):
        with contextlib.suppress(OSError):
            pipe.close()  # type: ignore[union-attr]


PNG_OP_POINTS = 12  # an op's symbol in a PNG, bold: its `+` 3 px thick (2 px at 10 pt)


def png_fonts(program: DotProgram, font: str) -> tuple[str, tuple[str, int]]:
    """The sans font of a PNG's texts, given the SVG's `font`, and the ops' symbols' (bold,
    larger: a thin 10-point `+` all but vanishes). graphviz-pure's own `Helvetica` is a
    sans (any other name falls back to a serif); a system `dot` finds `font` by fontconfig."""
    if program.kind == "pure":
        return "Helvetica", ("Helvetica-Bold", PNG_OP_POINTS)
    return font, (f"{font} Bold", PNG_OP_POINTS)


def configure_graphviz_package() -> DotProgram | None:
    """Point the `graphviz` package at graphviz-pure when there is no system `dot` (so a
    Digraph displays in Jupyter after a plain pip install); the program used."""
    programs = [p for p in dot_programs() if "svg" in p.formats]
    if not programs:
        return None
    program = programs[0]
    if program.kind == "pure":
        import graphviz.backend.dot_command  # lazy: start-up

        graphviz.backend.dot_command.DOT_BINARY = Path(program.path)
    return program
