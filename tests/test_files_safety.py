"""Nothing lost: what gradviz writes is either the complete new file or the old one.

A write that fails half-way (disk full, rename refused, `dot` crashing), Ctrl-C while
writing or while `dot` runs: the previous file stays byte-identical and no temporary
file is left behind. An output path that names an input is refused. A reader that
leaves early (`gradviz … | head`) ends gradviz quietly. New files get the permissions
the umask asks for.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import gradviz.files as files
from gradviz.cli import cli

OLD = b"the previous file, which must survive\n"
DRAW = ["draw", "e = a*b; d = e + c; L = d*f", "a=2", "b=-3", "c=10", "f=-2"]
BIG = "+".join(["x*y"] * 200)  # its DOT, JSON and trace run far past a pipe's 64 KiB


def run(*args: str, **env: str | None):
    return CliRunner().invoke(cli, list(args), env={"GRADVIZ_DOT": None, **env})


def leftovers(folder: Path) -> list[str]:
    """Temporary files of write_atomic (`.NAME.XXXX.tmp`) still in the folder."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.fixture
def previous(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "graph.dot"
    path.write_bytes(OLD)
    return path


# -- a failed write leaves the previous file ------------------------------------------------


def _fail_midway(monkeypatch) -> None:
    """The temporary file takes half the data, then the disk is full."""
    real_fdopen = os.fdopen

    class HalfWriter:
        def __init__(self, handle: int, mode: str) -> None:
            self.file = real_fdopen(handle, mode)

        def __enter__(self):
            return self

        def __exit__(self, *exc) -> None:
            self.file.close()

        def write(self, data: bytes) -> int:
            self.file.write(data[: len(data) // 2])
            self.file.flush()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files.os, "fdopen", HalfWriter)


def _fail_fsync(monkeypatch) -> None:
    def fsync(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(files.os, "fsync", fsync)


def _fail_rename(monkeypatch) -> None:
    def replace(source, target) -> None:
        raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))

    monkeypatch.setattr(files.os, "replace", replace)


@pytest.mark.parametrize(
    ("failure", "message"),
    [
        (_fail_midway, "No space left on device"),
        (_fail_fsync, "Input/output error"),
        (_fail_rename, "Invalid cross-device link"),
    ],
    ids=["disk-full-midway", "fsync", "rename"],
)
def test_a_failed_write_leaves_the_previous_file_byte_identical(
    previous: Path, monkeypatch, failure, message
):
    failure(monkeypatch)
    result = run(*DRAW, "-o", "graph.dot")
    assert result.exit_code == 1, result.output  # a runtime failure: the path was fine
    assert f"Error: cannot write 'graph.dot': {message}" in result.stderr
    assert "Traceback" not in result.stderr
    assert previous.read_bytes() == OLD
    assert leftovers(previous.parent) == []


def test_a_failing_dot_leaves_the_previous_picture(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    crash = tmp_path / "crashing-dot"
    crash.write_text("#!/bin/sh\necho 'Error: out of memory' >&2\nprintf '<svg'\nexit 3\n")
    crash.chmod(0o755)
    picture = tmp_path / "graph.svg"
    picture.write_bytes(OLD)
    result = run(*DRAW, "-o", "graph.svg", "-o", "graph.json", GRADVIZ_DOT=str(crash))
    assert result.exit_code == 1, result.output
    assert "crashing-dot failed to write SVG: Error: out of memory" in result.stderr
    assert picture.read_bytes() == OLD
    assert (tmp_path / "graph.json").is_file()  # the other output is still written
    assert leftovers(tmp_path) == []


def test_a_diverging_training_keeps_the_previous_model(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    saved = tmp_path / "m.json"
    saved.write_bytes(OLD)
    args = ["train", "circle", "--activation", "relu", "--output-activation", "linear"]
    result = run(*args, "--lr", "1000000", "--epochs", "3", "-q", "--save", "m.json")
    assert result.exit_code == 1
    assert "training diverged" in result.stderr
    assert saved.read_bytes() == OLD
    _fail_midway(monkeypatch)
    result = run("train", "xor", "--epochs", "2", "-q", "--save", "m.json")
    assert result.exit_code == 1 and "No space left on device" in result.stderr
    assert saved.read_bytes() == OLD
    assert leftovers(tmp_path) == []


# -- an output that is an input ------------------------------------------------------------


@pytest.mark.parametrize("link", ["symlink", "hardlink", "relative"])
def test_an_output_that_is_an_input_is_refused_however_it_is_named(
    tmp_path: Path, monkeypatch, link
):
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "in.expr"
    source.write_text("a*b\n")
    (tmp_path / "sub").mkdir()
    if link == "symlink":
        (tmp_path / "alias.dot").symlink_to(source)
        target = "alias.dot"
    elif link == "hardlink":
        os.link(source, tmp_path / "alias.dot")
        target = "alias.dot"
    else:
        target = "sub/../in.expr"
    result = run("draw", "@in.expr", "-f", "dot", "-o", target)
    assert result.exit_code == 2
    assert f"refusing to write '{target}': it is an input of this command" in result.stderr
    assert source.read_text() == "a*b\n"


# -- Ctrl-C -----------------------------------------------------------------------------------


def test_ctrl_c_while_writing_leaves_no_partial_or_temporary_file(previous: Path, monkeypatch):
    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(files.os, "fsync", interrupted)
    result = run(*DRAW, "-o", "new.json", "-o", "graph.dot")
    assert result.exit_code == 130
    assert result.stderr.endswith("Interrupted.\n") and "Traceback" not in result.stderr
    assert previous.read_bytes() == OLD
    assert not (previous.parent / "new.json").exists()
    assert leftovers(previous.parent) == []


def test_ctrl_c_while_rendering_writes_nothing(previous: Path, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(subprocess.Popen, "communicate", interrupted)
    result = run(*DRAW, "-o", "graph.svg")
    assert result.exit_code == 130 and "Interrupted." in result.stderr
    assert not (previous.parent / "graph.svg").exists()
    assert leftovers(previous.parent) == []


def _gradviz(*args: str, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "NO_COLOR": "1", **kwargs.pop("env", {})}
    command = [sys.executable, "-m", "gradviz", *args]
    return subprocess.Popen(command, env=env, stderr=subprocess.PIPE, **kwargs)


def _interrupt_when(process: subprocess.Popen, ready, sent: int = signal.SIGINT) -> tuple[int, str]:
    deadline = time.monotonic() + 60
    while not ready() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.poll() is None, "finished before it could be interrupted"
    process.send_signal(sent)
    _, err = process.communicate(timeout=60)
    return process.returncode, err.decode()


@pytest.mark.skipif(os.name != "posix", reason="signals and shell scripts")
def test_real_ctrl_c_during_dot_leaves_the_previous_picture(tmp_path: Path):
    started = tmp_path / "dot-started"
    slow = tmp_path / "slow-dot"
    slow.write_text(f"#!/bin/sh\ntouch '{started}'\nexec sleep 20\n")
    slow.chmod(0o755)
    picture = tmp_path / "graph.svg"
    picture.write_bytes(OLD)
    process = _gradviz(
        *DRAW, "-o", str(picture), env={"GRADVIZ_DOT": str(slow)}, stdout=subprocess.DEVNULL
    )
    status, err = _interrupt_when(process, started.exists)
    assert status == 130, err
    assert err.rstrip().endswith("Interrupted.") and "Traceback" not in err
    assert picture.read_bytes() == OLD
    assert leftovers(tmp_path) == []


def _running(pid: int, argument: str) -> bool:
    """Whether process `pid` is still the program run with `argument` (not ended, not a
    zombie waiting to be reaped, not a new process given a reused pid)."""
    proc = Path(f"/proc/{pid}")
    if not proc.is_dir():  # no /proc: whether the pid is taken
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    try:
        state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        command = (proc / "cmdline").read_bytes().split(b"\0")
    except OSError:  # ended meanwhile
        return False
    return state != "Z" and argument.encode() in command


def _gone(pid: int, argument: str) -> bool:
    """Whether that program has ended, polled up to a generous deadline."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if not _running(pid, argument):
            return True
        time.sleep(0.05)
    return False


# How long the third layout "takes": a number of seconds of its own, to tell it apart.
HANG = "117.25"


def _third_layout_hangs(folder: Path) -> tuple[Path, Path]:
    """A GRADVIZ_DOT that lays out the first two frames with graphviz-pure, then, on the
    third, writes its pid to a file (the test waits for it) and hangs as a slow layout
    does (`sleep HANG`); returns the program and that file."""
    from gradviz.layout import _pure_program

    pure = _pure_program()
    assert pure, "graphviz-pure is a dependency of gradviz and must be installed"
    count, pid = folder / "calls", folder / "layout.pid"
    program = folder / "slow-third-dot"
    program.write_text(
        "#!/bin/sh\n"
        f"n=$(cat '{count}' 2>/dev/null || echo 0); n=$((n + 1)); echo $n > '{count}'\n"
        f"if [ $n -le 2 ]; then exec '{pure}' \"$@\"; fi\n"
        f"echo $$ > '{pid}.tmp' && mv '{pid}.tmp' '{pid}'\n"
        f"exec sleep {HANG}\n"
    )
    program.chmod(0o755)
    return program, pid


@pytest.mark.skipif(os.name != "posix", reason="signals and shell scripts")
def test_ctrl_c_while_the_layout_program_starts_ends_it_too(tmp_path, monkeypatch):
    # Ctrl-C (or SIGTERM) that lands while Popen waits to hear that the program started (a
    # busy machine): the program runs, but Popen never returned it to be ended
    pid_file = tmp_path / "layout.pid"
    program = tmp_path / "slow-dot"
    program.write_text(
        f"#!/bin/sh\necho $$ > '{pid_file}.tmp' && mv '{pid_file}.tmp' '{pid_file}'\n"
        f"exec sleep {HANG}\n"
    )
    program.chmod(0o755)
    real = subprocess.Popen

    def interrupted_while_starting(*args, **kwargs):
        process = real(*args, **kwargs)
        deadline = time.monotonic() + 60
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        signal.raise_signal(signal.SIGINT)  # as if it came before Popen returned
        return process

    monkeypatch.setattr(subprocess, "Popen", interrupted_while_starting)
    try:
        result = run(*DRAW, "-o", str(tmp_path / "g.svg"), GRADVIZ_DOT=str(program))
        assert result.exit_code == 130 and "Interrupted." in result.stderr
        assert _gone(int(pid_file.read_text()), HANG), "the layout program is still running"
        assert not (tmp_path / "g.svg").exists()
    finally:
        if pid_file.exists():
            with contextlib.suppress(OSError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)


@pytest.mark.skipif(os.name != "posix", reason="signals and shell scripts")
@pytest.mark.parametrize(
    ("sent", "status", "said"),
    [(signal.SIGINT, 130, "Interrupted."), (signal.SIGTERM, 143, "Terminated.")],
    ids=["ctrl-c", "sigterm"],
)
def test_a_signal_during_trace_frames_leaves_the_earlier_frames(tmp_path, sent, status, said):
    # an earlier run's ten frames; this run (7 frames) is stopped while laying out its third
    frames = tmp_path / "frames"
    frames.mkdir()
    earlier = {f"step-{k:02d}.svg": f"<svg>earlier {k}</svg>".encode() for k in range(1, 11)}
    for name, data in earlier.items():
        (frames / name).write_bytes(data)
    program, pid_file = _third_layout_hangs(tmp_path)
    process = _gradviz(
        "trace", *DRAW[1:], "--frames", "frames",
        env={"GRADVIZ_DOT": str(program)}, stdout=subprocess.DEVNULL, cwd=tmp_path,
    )  # fmt: skip
    try:
        returned, err = _interrupt_when(process, pid_file.exists, sent)
        assert returned == status, err
        assert err.rstrip().endswith(said) and "Traceback" not in err
        assert (
            "note: no frame written, 'frames' left as it was: its 10 frames of an earlier run "
            "(step-01.svg … step-10.svg) kept"
        ) in err
        assert {p.name: p.read_bytes() for p in frames.iterdir()} == earlier  # nothing else
        # the layout program (in a session of its own) was ended with gradviz
        assert _gone(int(pid_file.read_text()), HANG), "the layout program is still running"
    finally:  # a failing run leaves nothing running behind it either
        if pid_file.exists():
            with contextlib.suppress(OSError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)


@pytest.mark.skipif(os.name != "posix", reason="signals")
def test_real_ctrl_c_during_training_saves_nothing(tmp_path: Path):
    model = tmp_path / "m.json"
    process = _gradviz(
        "train", "circle", "--epochs", "300000", "--save", str(model), stdout=subprocess.PIPE
    )
    assert process.stdout is not None
    first = process.stdout.readline()  # the summary line: training has started
    assert first
    status, err = _interrupt_when(process, lambda: True)
    assert status == 130, err
    assert "Traceback" not in err and "Interrupted." in err
    assert not model.exists() and leftovers(tmp_path) == []


# -- a closed pipe --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["draw", BIG, "-f", "dot"],
        ["draw", BIG, "-f", "json"],
        ["draw", BIG, "x=1", "y=2", "-o", "-", "-f", "dot", "--precision", "17"],
        ["trace", BIG],  # printed through rich
    ],
    ids=["dot", "json", "dash-o", "rich"],
)
def test_a_closed_pipe_ends_quietly(args):
    process = _gradviz(*args, stdout=subprocess.PIPE)
    assert process.stdout is not None
    head = process.stdout.read(10)  # `| head -c 10`
    process.stdout.close()
    err = process.stderr.read().decode()
    status = process.wait(timeout=60)
    assert len(head) == 10
    assert status == 141, err  # 128 + SIGPIPE, as a shell reports a command killed by it
    assert "Traceback" not in err and "Error" not in err and "Exception" not in err


@pytest.mark.skipif(not Path("/bin/bash").exists(), reason="needs bash")
def test_a_closed_pipe_in_a_real_shell_pipeline():
    script = (
        f'"{sys.executable}" -m gradviz draw "{BIG}" -f dot | head -c 10; '
        'echo " status=${PIPESTATUS[0]}"'
    )
    done = subprocess.run(["/bin/bash", "-c", script], capture_output=True, timeout=60)
    assert done.stdout.decode().endswith(" status=141\n"), done
    assert b"Traceback" not in done.stderr and b"Error" not in done.stderr


# -- permissions -------------------------------------------------------------------------------


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_new_files_follow_the_umask(tmp_path: Path, monkeypatch, umask):
    monkeypatch.chdir(tmp_path)
    old = os.umask(umask)
    try:
        result = run(*DRAW, "-o", "new.dot", "-o", "new.json")
        trained = run("train", "xor", "--epochs", "2", "-q", "--save", "m.json")
    finally:
        os.umask(old)
    assert result.exit_code == 0 and trained.exit_code == 0
    for name in ("new.dot", "new.json", "m.json"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o666 & ~umask, name


def test_an_overwritten_file_keeps_its_mode(previous: Path):
    previous.chmod(0o640)
    result = run(*DRAW, "-o", "graph.dot")
    assert result.exit_code == 0
    assert previous.read_bytes() != OLD
    assert stat.S_IMODE(previous.stat().st_mode) == 0o640


def _gone_or_zombie(pid: int) -> bool:
    """True once `pid` runs no more (a zombie waits only for its parent to read it)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return fields[0] in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_hanging_dot_is_stopped_with_every_process_it_started(previous: Path):
    """A `dot` (here a wrapper script) that starts a child of its own and hangs: on the
    timeout gradviz ends the whole process group, so no child keeps running."""
    fake = previous.parent / "hanging-dot"
    fake.write_text("#!/bin/sh\nsleep 60 &\necho $! > child.pid\nwait\n")
    fake.chmod(0o755)
    started = time.monotonic()
    result = run(*DRAW, "-o", "graph.svg", GRADVIZ_DOT=str(fake), GRADVIZ_DOT_TIMEOUT="0.5")
    assert time.monotonic() - started < 45  # far less than the fake's 60 s, even on a busy machine
    assert result.exit_code == 1 and "took longer than 0.5 s" in result.stderr, result.stderr
    child = int((previous.parent / "child.pid").read_text())
    deadline = time.monotonic() + 30  # a budget, not a wait: it ends as soon as the child does
    while not _gone_or_zombie(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone_or_zombie(child), f"the dot's child {child} is still running"
    assert not (previous.parent / "graph.svg").exists() and leftovers(previous.parent) == []


# -- every output option of every command is one set: no input, no file twice ------------

POINTS = "a,b,y\n0,0,0\n0,1,1\n1,0,1\n1,1,0\n"


def _spec(data: str) -> str:
    return f'layers = [2, 2, 1]\ndata = {{csv = "{data}"}}\nepochs = 2\n'


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory) -> str:
    """A saved model's text whose data set is the CSV file `DATA` beside it."""
    folder = tmp_path_factory.mktemp("model")
    (folder / "DATA").write_text(POINTS)
    (folder / "s.toml").write_text(_spec("DATA"))
    result = CliRunner().invoke(
        cli, ["train", str(folder / "s.toml"), "-q", "--save", str(folder / "m.json")]
    )
    assert result.exit_code == 0, result.output
    return (folder / "m.json").read_text()


# (the command line, the files it finds: the input each output names has that output's
# extension, so that only the refusal of inputs stands between it and the data)
OVER_INPUTS = {
    "draw-o-expr": ("draw @e.svg -o e.svg", {"e.svg": "a*b"}),
    "draw-o-model": ("draw --model m.json --input 0,1 -o m.json", {"m.json": "d.dot"}),
    "draw-o-model-data": ("draw --model m.json --input 0,1 -o d.dot", {"m.json": "d.dot"}),
    "trace-o-expr": ("trace @e.html -o e.html", {"e.html": "a*b"}),
    "trace-o-model-data": ("trace --model m.json --input 0,1 -o d.html", {"m.json": "d.html"}),
    "trace-frames-expr": ("trace @out/step-01.svg a=1 --frames out", {"out/step-01.svg": "a*a"}),
    "trace-frames-model-data": (
        "trace --model m.json --input 0,1 --level layer --frames .",
        {"m.json": "step-01.svg"},
    ),
    "train-save-spec": ("train s.json --save s.json", {"s.json": _spec("d.csv")}),
    "train-save-data": ("train s.toml --save d.json", {"s.toml": _spec("d.json")}),
    "train-boundary-data": ("train s.toml --boundary d.svg", {"s.toml": _spec("d.svg")}),
    "train-curves-data": ("train s.toml --curves d.png", {"s.toml": _spec("d.png")}),
    "train-report-data": ("train s.toml --report d.html", {"s.toml": _spec("d.html")}),
    "train-report-spec": ("train s.html --report s.html", {"s.html": _spec("d.csv")}),
    "train-curves-csv-option": (
        "train --layers 2,2,1 --data d.csv --curves d.csv",
        {"d.csv": POINTS},
    ),
    "inspect-curves-data": ("inspect m.json --curves d.svg", {"m.json": "d.svg"}),
    "inspect-boundary-data": ("inspect m.json --boundary d.svg", {"m.json": "d.svg"}),
    "inspect-o-data": ("inspect m.json -o d.html", {"m.json": "d.html"}),
    "inspect-o-data-option": (
        "inspect m.json --data y.csv -o y.csv",
        {"m.json": "x.csv", "y.csv": POINTS},
    ),
    "grads-plot-spec-data": ("grads s.toml --plot d.svg", {"s.toml": _spec("d.svg")}),
    "grads-plot-model-data": ("grads m.json --plot d.svg", {"m.json": "d.svg"}),
    "grads-plot-model": ("grads m.svg --plot m.svg", {"m.svg": _spec("d.csv")}),
}


def _make(folder: Path, files: dict[str, str], model_text: str) -> None:
    """The files of a case; `m.json` names the CSV file its data set is read from."""
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name == "m.json":
            path.write_text(model_text.replace('"DATA"', f'"{content}"'))
            (folder / content).write_text(POINTS)
        else:
            path.write_text(content)
    if "s.toml" in files or "s.json" in files or "s.html" in files:
        for data in ("d.csv", "d.json", "d.svg", "d.png", "d.html"):
            (folder / data).write_text(POINTS)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("name", list(OVER_INPUTS))
def test_no_output_option_may_name_an_input(name: str, tmp_path: Path, monkeypatch, saved_model):
    monkeypatch.chdir(tmp_path)
    line, files = OVER_INPUTS[name]
    _make(tmp_path, files, saved_model)
    if "--data d.svg" in line or "--data d.html" in line:
        (tmp_path / "s.toml").write_text("layers = [2, 2, 1]\nepochs = 2\n")
    before = _snapshot(tmp_path)
    result = run(*line.split())
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert "it is an input of this command" in result.stderr, result.stderr
    assert _snapshot(tmp_path) == before  # nothing overwritten, nothing written


# Two outputs of one command naming one file: the plain name twice, `./` and a symlink.
TWICE = {
    "draw-symlink": ("draw a -o p.svg -o link.svg", "'link.svg'"),
    "train-boundary-curves": (
        "train xor --boundary p.svg --curves p.svg",
        "--boundary and --curves",
    ),
    "train-dot-slash": ("train xor --boundary ./p.svg --curves p.svg", "--boundary and --curves"),
    "train-curves-report-link": (
        "train xor --curves p.svg --report link.html",
        "--curves and --report",
    ),
    "train-save-report-link": (
        "train xor --save m.json --report mlink.html",
        "--save and --report",
    ),
    "inspect-boundary-curves-link": (
        "inspect m.json --boundary p.svg --curves link.svg",
        "--boundary and --curves",
    ),
    "inspect-curves-o-link": (
        "inspect m.json --curves p.svg -o link.html",
        "--curves and --report",
    ),
    "trace-frames-o-link": ("trace a*a a=1 --frames out -o out.html", "--frames and --output"),
}


@pytest.mark.parametrize("name", list(TWICE))
def test_no_two_output_options_may_name_one_file(
    name: str, tmp_path: Path, monkeypatch, saved_model
):
    monkeypatch.chdir(tmp_path)
    line, options = TWICE[name]
    _make(tmp_path, {"m.json": "d.csv"}, saved_model)
    (tmp_path / "p.svg").write_bytes(OLD)
    for link in ("link.svg", "link.html"):
        (tmp_path / link).symlink_to("p.svg")
    (tmp_path / "mlink.html").symlink_to("m.json")
    (tmp_path / "out").mkdir()
    (tmp_path / "out.html").symlink_to("out/step-01.svg")
    before = _snapshot(tmp_path)
    result = run(*line.split())
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert "is given twice as an output" in result.stderr and options in result.stderr
    assert "wrote" not in result.stderr
    assert _snapshot(tmp_path) == before
