"""Under DistributedDataParallel (gloo, CPU, two processes on loopback) each rank's recorder
sees the all-reduced gradients and the activation sums of both ranks, and rank 0 alone
writes the file: the same table as the same run in one process on the whole batch."""

from __future__ import annotations

import datetime
import io
import math
import os
import time

import pytest
from torch_support import require_torch

torch = require_torch()

import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from rich.console import Console  # noqa: E402

from gradviz.render.layers import layer_table  # noqa: E402
from gradviz.schema import load_run  # noqa: E402
from gradviz.stats import verdict  # noqa: E402
from gradviz.torch import watch  # noqa: E402

pytestmark = pytest.mark.slow  # two processes starting torch: seconds
WORLD = 2
STEPS = 12
TIMEOUT = 120  # seconds for both processes: far above the few they take


def _text(diagnosis) -> str:
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(layer_table(diagnosis, width=200))
    return console.file.getvalue()


def _setup(seed: int = 0):
    torch.manual_seed(seed)
    net = torch.nn.Sequential(
        torch.nn.Linear(3, 8, dtype=torch.float64),
        torch.nn.Sigmoid(),
        torch.nn.Linear(8, 8, dtype=torch.float64),
        torch.nn.ReLU(),
        torch.nn.Linear(8, 1, dtype=torch.float64),
        torch.nn.Sigmoid(),
    )
    g = torch.Generator().manual_seed(1)
    X = torch.randn(64, 3, generator=g, dtype=torch.float64)
    Y = (X[:, :1] * X[:, 1:2] > 0).to(torch.float64)
    return net, X, Y


def _train(model, net, X, Y, path) -> None:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    rec = watch(model, every=4, optimizer=optimizer)
    for _ in range(STEPS):
        optimizer.zero_grad()
        loss = ((model(X) - Y) ** 2).mean()
        loss.backward()
        optimizer.step()
        rec.log(loss=loss)
    rec.save(path)


def _worker(rank: int, store: str, folder: str) -> None:
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"  # loopback only
    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo",
        init_method=f"file://{store}",
        rank=rank,
        world_size=WORLD,
        timeout=datetime.timedelta(seconds=TIMEOUT),
    )
    try:
        net, X, Y = _setup()
        model = torch.nn.parallel.DistributedDataParallel(net)
        shard = slice(rank * 32, (rank + 1) * 32)  # equal halves: the mean of means is the mean
        _train(model, net, X[shard], Y[shard], os.path.join(folder, f"run{rank}.json"))
    finally:
        dist.destroy_process_group()


def test_two_ranks_give_the_one_process_table(tmp_path) -> None:
    context = mp.start_processes(
        _worker,
        args=(str(tmp_path / "store"), str(tmp_path)),
        nprocs=WORLD,
        join=False,
        start_method="spawn",
    )
    deadline = time.monotonic() + TIMEOUT
    # join returns True once both have ended, False each time one of them ends before the
    # other (or the timeout passes); it raises if a process failed
    while not context.join(timeout=max(0.0, deadline - time.monotonic())):
        if time.monotonic() >= deadline:
            for process in context.processes:
                process.kill()
            pytest.fail(f"the two processes did not finish in {TIMEOUT} s")
    assert not (tmp_path / "run1.json").exists(), "only rank 0 writes"
    both = load_run(tmp_path / "run0.json")
    assert both.world_size == WORLD and [s for s, _ in both.history] == [0, 4, 8]

    net, X, Y = _setup()
    _train(net, net, X, Y, tmp_path / "one.json")
    one = load_run(tmp_path / "one.json")
    assert [layer.name for layer in both.layers] == ["0", "2", "4"]  # not "module.0"
    for (_, a), (_, b) in zip(both.history, one.history, strict=True):
        assert _text(a) == _text(b)
        for x, y in zip(a.layers, b.layers, strict=True):
            for key, value in x.to_dict().items():
                other = y.to_dict()[key]
                if isinstance(value, float):
                    assert math.isclose(value, other, rel_tol=1e-9, abs_tol=1e-15), key
                else:
                    assert value == other, key
    # each rank logged its own half's loss; the curve is their mean: the whole batch's
    assert len(both.loss) == STEPS
    for a, b in zip(both.loss, one.loss, strict=True):
        assert math.isclose(a, b, rel_tol=1e-12), (a, b)


# -- constructed failures under DDP: each named as in one process ---------------------


def _scenario(name: str):
    """(model, data, steps, every, clip, poison step) of a constructed failure."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    X = torch.rand(64, 4, generator=g, dtype=torch.float64)
    Y = torch.rand(64, 1, generator=g, dtype=torch.float64)
    if name == "clipped":
        net = torch.nn.Sequential(torch.nn.Linear(4, 1, dtype=torch.float64))
        with torch.no_grad():
            net[0].weight.mul_(1e-3)
        return net, X, Y * 1e4, 2, 1, 1e-3, None
    sizes, activation = ((4, 8), (8, 8), (8, 1)), torch.nn.ReLU
    if name == "vanishing":
        sizes, activation = ((4, 8), *[(8, 8)] * 9, (8, 1)), torch.nn.Sigmoid
    if name == "exploding":  # linear layers multiplying the signal by about 4.6 each
        sizes, activation = ((4, 16), *[(16, 16)] * 5, (16, 1)), torch.nn.Identity
    layers = []
    for a, b in sizes:
        layers += [torch.nn.Linear(a, b, dtype=torch.float64), activation()]
    net = torch.nn.Sequential(*layers[:-1])
    if name == "exploding":
        with torch.no_grad():
            for layer in net[::2]:
                layer.weight.mul_(8.0)
    if name == "dead":
        with torch.no_grad():
            for layer in net[::2]:
                layer.bias.fill_(-5.0)
    if name == "frozen":
        net[0].requires_grad_(False)
    return net, X, Y, 7, 4, None, 5 if name == "nan" else None


SCENARIOS = ("dead", "vanishing", "exploding", "clipped", "nan", "frozen")


def _run_scenario(name: str, model, net, X, Y, steps, every, clip, poison, path) -> None:
    optimizer = torch.optim.SGD([p for p in net.parameters() if p.requires_grad], lr=1e-9)
    rec = watch(model, every=every)
    for step in range(steps):
        if step == poison:
            with torch.no_grad():
                net[2].weight[0, 0] = math.nan
        optimizer.zero_grad()
        ((model(X) - Y) ** 2).mean().backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(net.parameters(), clip)
        optimizer.step()
    rec.save(path)
    rec.close()


def _failures_worker(rank: int, store: str, folder: str) -> None:
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"  # loopback only
    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo",
        init_method=f"file://{store}",
        rank=rank,
        world_size=WORLD,
        timeout=datetime.timedelta(seconds=TIMEOUT),
    )
    try:
        for name in SCENARIOS:
            net, X, Y, *rest = _scenario(name)
            model = torch.nn.parallel.DistributedDataParallel(net)
            shard = slice(rank * 32, (rank + 1) * 32)
            path = os.path.join(folder, f"{name}{rank}.json")
            _run_scenario(name, model, net, X[shard], Y[shard], *rest, path)
    finally:
        dist.destroy_process_group()


def test_constructed_failures_are_named_under_ddp(tmp_path) -> None:
    context = mp.start_processes(
        _failures_worker,
        args=(str(tmp_path / "store"), str(tmp_path)),
        nprocs=WORLD,
        join=False,
        start_method="spawn",
    )
    deadline = time.monotonic() + TIMEOUT
    while not context.join(timeout=max(0.0, deadline - time.monotonic())):
        if time.monotonic() >= deadline:
            for process in context.processes:
                process.kill()
            pytest.fail(f"the two processes did not finish in {TIMEOUT} s")
    for name in SCENARIOS:
        net, X, Y, *rest = _scenario(name)
        _run_scenario(name, net, net, X, Y, *rest, tmp_path / f"{name}-one.json")
        both, one = load_run(tmp_path / f"{name}0.json"), load_run(tmp_path / f"{name}-one.json")
        assert [s for s, _ in both.history] == [s for s, _ in one.history], name
        for (_, a), (_, b) in zip(both.history, one.history, strict=True):
            assert [lay.status for lay in a.layers] == [lay.status for lay in b.layers], name
            assert a.first_nonfinite == b.first_nonfinite, name
            assert (a.clip_scale is None) == (b.clip_scale is None), name
            if a.clip_scale is not None:
                assert a.clip_scale == pytest.approx(b.clip_scale, rel=1e-9), name
        lines = verdict(both.diagnosis(), both.history)
        assert not any(line.startswith("Healthy") for line in lines), (name, lines)
    statuses = {n: [lay.status for lay in load_run(tmp_path / f"{n}0.json").diagnosis().layers]
                for n in SCENARIOS}  # fmt: skip
    assert statuses["dead"][:2] == ["dead", "dead"]
    assert statuses["vanishing"][0] == "vanishing"
    assert "exploding" in statuses["exploding"]
    assert statuses["clipped"] == ["exploding"]
    assert statuses["frozen"][0] == "frozen"
    nan = load_run(tmp_path / "nan0.json")
    assert [s for s, _ in nan.history] == [0, 4, 5]
    assert dict(nan.history)[5].first_nonfinite == (2, "weights")
