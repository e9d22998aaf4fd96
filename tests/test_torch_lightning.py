"""gradviz.torch.lightning.Watch under a real Lightning Trainer: the run file it writes holds
the table `gradviz.torch.watch` gives for the same steps of a plain loop (with gradient
accumulation, and under the two-process `ddp` strategy on CPU), the gradients read are
the unclipped ones, and `fail_on` stops a run that goes NaN at a known step."""

from __future__ import annotations

import datetime
import io
import json
import math
import os
import socket
import time
from functools import cache
from types import SimpleNamespace

import pytest
from torch_support import require_installed

require_installed("lightning")
import torch  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from click.testing import CliRunner  # noqa: E402
from rich.console import Console  # noqa: E402

from gradviz.cli import cli  # noqa: E402
from gradviz.errors import InputError, OutputError, StatusFound  # noqa: E402
from gradviz.render.layers import layer_table  # noqa: E402
from gradviz.schema import load_run  # noqa: E402
from gradviz.torch import watch  # noqa: E402

F64 = torch.float64
TIMEOUT = 180  # seconds for both ddp processes: far above the ~15 they take


def _net() -> torch.nn.Sequential:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(3, 8, dtype=F64),
        torch.nn.Tanh(),
        torch.nn.Linear(8, 8, dtype=F64),
        torch.nn.ReLU(),
        torch.nn.Linear(8, 1, dtype=F64),
        torch.nn.Sigmoid(),
    )


def _data(n: int = 64, nan_row: int | None = None):
    g = torch.Generator().manual_seed(1)
    X = torch.randn(n, 3, generator=g, dtype=F64)
    Y = (X[:, :1] * X[:, 1:2] > 0).to(F64)
    if nan_row is not None:
        X[nan_row, 0] = math.nan
    return X, Y


@cache
def lit() -> SimpleNamespace:
    """Lightning, gradviz's callback and the test's LightningModules, imported when a test
    first asks (importing Lightning takes seconds: at module level every worker paid that
    while collecting, the fast suite's workers too)."""
    import lightning as L

    from gradviz.torch.lightning import Watch

    class Module(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net = _net()
            self.calls = 0

        def training_step(self, batch, batch_idx):
            self.calls += 1
            x, y = batch
            return {"loss": torch.nn.functional.mse_loss(self.net(x), y), "calls": self.calls}

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.5)

    class Validated(Module):
        def validation_step(self, batch, batch_idx):
            self.net(batch[0] * 10)  # (far from the training batches' activations)

    return SimpleNamespace(L=L, Watch=Watch, Module=Module, Validated=Validated)


def _trainer(callback, **options):
    quiet = {
        "logger": False,
        "enable_checkpointing": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "accelerator": "cpu",
    }
    return lit().L.Trainer(callbacks=[callback], **{"devices": 1, **quiet, **options})


def _loader(X, Y, batch: int):
    dataset = torch.utils.data.TensorDataset(X, Y)
    return torch.utils.data.DataLoader(dataset, batch_size=batch, shuffle=False)


def _plain(X, Y, batch: int, accumulate: int, epochs: int, every: int, path):
    """The same training written out: `accumulate` backward passes of loss/accumulate,
    the recorder's step() where Lightning's on_before_optimizer_step is, then the step."""
    holder = torch.nn.Module()  # (the layers' names as in the LightningModule: net.0, ...)
    holder.net = net = _net()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.5)
    rec = watch(holder, every=every, manual=True)
    batches = [(X[i : i + batch], Y[i : i + batch]) for i in range(0, len(X), batch)]
    for _ in range(epochs):
        for start in range(0, len(batches), accumulate):
            optimizer.zero_grad()
            total = 0.0
            for x, y in batches[start : start + accumulate]:
                loss = torch.nn.functional.mse_loss(net(x), y) / accumulate
                loss.backward()
                total = total + loss.detach()
            rec.step()
            optimizer.step()
            rec.log(loss=total)
    rec.save(path)
    return load_run(path)


def _text(diagnosis) -> str:
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(layer_table(diagnosis, width=200))
    return console.file.getvalue()


def _same(a, b, rel: float = 0.0) -> None:
    """Two histories of recorded steps: the same tables, and every number equal (to `rel`)."""
    assert [s for s, _ in a] == [s for s, _ in b]
    for (_, x), (_, y) in zip(a, b, strict=True):
        assert _text(x) == _text(y)
        for p, q in zip(x.layers, y.layers, strict=True):
            for key, value in p.to_dict().items():
                other = q.to_dict()[key]
                if isinstance(value, float) and not math.isnan(value):
                    assert math.isclose(value, other, rel_tol=rel, abs_tol=1e-15), key
                else:
                    assert value == other or (value != value and other != other), key


def test_the_run_file_holds_the_plain_loop_s_table_with_accumulation(tmp_path, capsys) -> None:
    X, Y = _data()
    callback = lit().Watch(every=2, save=tmp_path / "run.json", width=120)
    _trainer(callback, max_epochs=2, accumulate_grad_batches=2).fit(
        lit().Module(), _loader(X, Y, 16)
    )
    run = load_run(tmp_path / "run.json")
    plain = _plain(X, Y, batch=16, accumulate=2, epochs=2, every=2, path=tmp_path / "plain.json")
    assert [s for s, _ in run.history] == [0, 2] and run.steps_run == 4  # 8 batches, 2 a step
    _same(run.history, plain.history)
    assert run.curve_steps == plain.curve_steps == [1, 2, 3, 4]
    assert run.loss == pytest.approx(plain.loss, rel=1e-15)  # the mean of each step's batches
    assert [layer.name for layer in run.layers] == ["net.0", "net.2", "net.4"]
    printed = capsys.readouterr().out
    assert printed.count("Gradients per layer: Module at step 2") == 1  # printed once
    assert "• " in printed.split("Gradients per layer")[1]  # with its verdict
    # the file reads as any run does
    shown = CliRunner().invoke(cli, ["grads", str(tmp_path / "run.json")])
    assert shown.exit_code == 0 and "net.4" in shown.output, shown.output


def test_the_gradients_read_are_the_unclipped_ones(tmp_path, capsys) -> None:
    """on_before_optimizer_step runs before gradient_clip_val clips: the first step's
    numbers are those of the plain loop without clipping (later steps differ, as the
    clipped updates do), and a line under the verdict says so."""
    X, Y = _data()
    callback = lit().Watch(every=1, save=tmp_path / "run.json", width=120)
    _trainer(callback, max_steps=1, gradient_clip_val=1e-3).fit(lit().Module(), _loader(X, Y, 32))
    run = load_run(tmp_path / "run.json")
    plain = _plain(X, Y, batch=32, accumulate=1, epochs=1, every=1, path=tmp_path / "p.json")
    first = run.history[0][1]
    assert math.sqrt(sum(layer.norm**2 for layer in first.layers)) > 10 * 1e-3  # not clipped
    _same(run.history, plain.history[:1])
    assert "before Lightning's clipping (gradient_clip_val=0.001)" in capsys.readouterr().out


def test_fail_on_stops_a_run_that_goes_nan_at_a_known_step(tmp_path, capsys) -> None:
    X, Y = _data(nan_row=3 * 16 + 5)  # in the batch of optimizer step 3
    module = lit().Module()
    callback = lit().Watch(every=1, save=tmp_path / "run.json", fail_on=("nan",), width=120)
    with pytest.raises(StatusFound) as caught:
        _trainer(callback, max_epochs=3).fit(module, _loader(X, Y, 16))
    error = caught.value
    assert (error.status, error.layer, error.step) == ("NaN", "net.0", 3)
    assert "layer net.0 is NaN at step 3" in str(error) and error.exit_code == 1
    assert module.calls == 4  # stopped in the step that went NaN: no batch after it
    run = load_run(tmp_path / "run.json")  # saved before stopping
    assert [s for s, _ in run.history] == [0, 1, 2, 3]
    assert [lay.status for lay in run.history[2][1].layers] == ["ok"] * 3
    assert run.history[3][1].layers[0].status == "NaN"
    assert capsys.readouterr().out.count("Gradients per layer") == 1


def test_without_fail_on_the_run_goes_on(tmp_path) -> None:
    X, Y = _data(nan_row=3 * 16 + 5)
    module = lit().Module()
    callback = lit().Watch(every=1, save=tmp_path / "run.json", fail_on=(), show=False)
    _trainer(callback, max_epochs=1).fit(module, _loader(X, Y, 16))
    assert module.calls == 4 and len(load_run(tmp_path / "run.json").history) == 4


def test_validation_batches_leave_the_recorded_steps_as_they_were(tmp_path) -> None:
    X, Y = _data()
    runs = []
    for module, name in ((lit().Module(), "plain"), (lit().Validated(), "validated")):
        callback = lit().Watch(every=4, save=tmp_path / f"{name}.json", fail_on=(), show=False)
        # 4 batches an epoch: validation runs after step 3, while step 4 is armed
        trainer = _trainer(callback, max_epochs=2, num_sanity_val_steps=0)
        loaders = {"val_dataloaders": _loader(X, Y, 16)} if name == "validated" else {}
        trainer.fit(module, _loader(X, Y, 16), **loaders)
        runs.append(load_run(tmp_path / f"{name}.json"))
    _same(runs[0].history, runs[1].history)


def test_bad_arguments_are_one_line_input_errors() -> None:
    with pytest.raises(InputError, match=r"fail_on: 'nans' is not a status; choose from nan"):
        lit().Watch(fail_on=("nans",))
    with pytest.raises(InputError, match="every must be a whole number"):
        lit().Watch(every=0)


def test_a_save_path_that_cannot_be_written_is_refused_before_training(tmp_path) -> None:
    with pytest.raises(OutputError, match=r"cannot write save=.*does not exist"):
        lit().Watch(save=tmp_path / "missing" / "run.json")
    with pytest.raises(OutputError, match="it is a folder"):
        lit().Watch(save=tmp_path)


# -- two processes under the ddp strategy ---------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ddp_worker(rank: int, port: int, folder: str, nan_row: int | None = None) -> None:
    """One of the two processes, started as torchrun would (Lightning's environment
    variables set): Lightning joins them, it does not re-run the test's command line.
    With `nan_row`, fail_on=("nan",): each rank writes down the StatusFound it raised."""
    os.environ.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        WORLD_SIZE="2",
        NODE_RANK="0",
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        GLOO_SOCKET_IFNAME="lo",  # loopback only
    )
    torch.set_num_threads(1)
    X, Y = _data(nan_row=nan_row)
    every = 2 if nan_row is None else 1
    callback = lit().Watch(every=every, save=os.path.join(folder, f"run{rank}.json"), show=False)
    strategy = lit().L.pytorch.strategies.DDPStrategy(
        process_group_backend="gloo", timeout=datetime.timedelta(seconds=TIMEOUT)
    )
    # each rank its own half, every other row (Lightning's own sampler would shuffle):
    # each step's two batches of 16 are the 32 rows of the one-process step
    trainer = _trainer(
        callback, devices=2, strategy=strategy, max_epochs=2, use_distributed_sampler=False
    )
    try:
        trainer.fit(lit().Module(), _loader(X[rank::2], Y[rank::2], 16))
    except StatusFound as error:
        if nan_row is None:
            raise
        found = {"status": error.status, "layer": error.layer, "step": error.step}
        with open(os.path.join(folder, f"stopped{rank}.json"), "w") as file:
            json.dump(found, file)


def _two_processes(folder, nan_row: int | None = None) -> None:
    context = mp.start_processes(
        _ddp_worker,
        args=(_free_port(), str(folder), nan_row),
        nprocs=2,
        join=False,
        start_method="spawn",
    )
    deadline = time.monotonic() + TIMEOUT
    while not context.join(timeout=max(0.0, deadline - time.monotonic())):
        if time.monotonic() >= deadline:
            for process in context.processes:
                process.kill()
            pytest.fail(f"the two processes did not finish in {TIMEOUT} s")


@pytest.mark.slow  # two processes starting Lightning: seconds
def test_two_process_ddp_gives_the_one_process_table(tmp_path) -> None:
    _two_processes(tmp_path)
    assert not (tmp_path / "run1.json").exists(), "only rank 0 writes"
    both = load_run(tmp_path / "run0.json")
    assert both.world_size == 2 and both.steps_run == 4
    X, Y = _data()
    one = _plain(X, Y, batch=32, accumulate=1, epochs=2, every=2, path=tmp_path / "one.json")
    _same(both.history, one.history, rel=1e-9)


@pytest.mark.slow  # two processes starting Lightning: seconds
def test_fail_on_stops_both_ddp_processes_at_the_same_step(tmp_path) -> None:
    """Each rank sees the same all-reduced numbers: both raise, at the step that went NaN
    on one of them (row 32 + 7, in step 1's 32 rows, is rank 1's), and neither waits."""
    _two_processes(tmp_path, nan_row=32 + 7)
    found = [json.loads((tmp_path / f"stopped{rank}.json").read_text()) for rank in (0, 1)]
    assert found[0] == found[1] == {"status": "NaN", "layer": "net.0", "step": 1}
    assert [s for s, _ in load_run(tmp_path / "run0.json").history] == [0, 1]
