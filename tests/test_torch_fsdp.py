"""Under FSDP2 (`torch.distributed.fsdp.fully_shard`, gloo, CPU, two processes on loopback)
each parameter and gradient is a DTensor sharded by rows: a weight of 4 rows is split
2 + 2 (even), one of 5 rows 3 + 2 (uneven), one of 1 row 1 + 0 (an empty shard). Each
layer's statistics must be those of the whole parameter, equal to the one-process run on
the whole batch.

The recorder (`watch`) reads DTensors through their local shards (‖g‖² and Σ|g| summed
across the ranks, max|g| maxed, an empty shard 0), in a process group of its own (FSDP's
reductions may still be in flight on the default group: a collective of ours there
interleaved with them, "Is there a distributed collective mismatch", about one run in
three), and is checked against the one-process run."""

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
from gradviz.torch import watch  # noqa: E402

SLOW = pytest.mark.slow  # two processes starting torch.distributed: seconds
WORLD = 2
STEPS = 6
TIMEOUT = 120  # seconds for both processes: far above the few they take
F64 = torch.float64


def _net() -> torch.nn.Sequential:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(3, 4, dtype=F64),  # 4 rows: 2 + 2
        torch.nn.Tanh(),
        torch.nn.Linear(4, 5, dtype=F64),  # 5 rows: 3 + 2
        torch.nn.ReLU(),
        torch.nn.Linear(5, 1, dtype=F64),  # 1 row: 1 + 0, an empty shard
        torch.nn.Sigmoid(),
    )


def _data():
    g = torch.Generator().manual_seed(1)
    X = torch.randn(32, 3, generator=g, dtype=F64)
    return X, (X[:, :1] * X[:, 1:2] > 0).to(F64)


def _step(net, optimizer, X, Y) -> torch.Tensor:
    optimizer.zero_grad()
    loss = ((net(X) - Y) ** 2).mean()
    loss.backward()
    return loss


def _tensors(net) -> list[torch.Tensor]:
    """Every weight and bias, then their gradients, in module order."""
    params = [p for m in net if isinstance(m, torch.nn.Linear) for p in (m.weight, m.bias)]
    return params + [p.grad for p in params]


def _sharded(net) -> torch.nn.Module:
    from torch.distributed.fsdp import fully_shard

    for module in net:
        if isinstance(module, torch.nn.Linear):
            fully_shard(module)
    fully_shard(net)
    return net


def _start(rank: int, store: str) -> None:
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"  # loopback only
    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo",
        init_method=f"file://{store}",
        rank=rank,
        world_size=WORLD,
        timeout=datetime.timedelta(seconds=TIMEOUT),
    )


def _watch_worker(rank: int, store: str, folder: str) -> None:
    _start(rank, store)
    try:
        net = _sharded(_net())
        X, Y = _data()
        half = slice(rank * 16, (rank + 1) * 16)
        _train(net, X[half], Y[half], os.path.join(folder, f"run{rank}.json"))
    finally:
        dist.destroy_process_group()


def _train(net, X, Y, path) -> None:
    optimizer = torch.optim.SGD(net.parameters(), lr=0.5)
    rec = watch(net, every=2, optimizer=optimizer)
    for _ in range(STEPS):
        loss = _step(net, optimizer, X, Y)
        optimizer.step()
        rec.log(loss=loss)
    rec.save(path)


def _run(worker, folder) -> None:
    """Both processes, to their end (a failure in either raises here)."""
    context = mp.start_processes(
        worker,
        args=(str(folder / "store"), str(folder)),
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


@SLOW
def test_fsdp_run_gives_the_one_process_table(tmp_path) -> None:
    _run(_watch_worker, tmp_path)
    assert not (tmp_path / "run1.json").exists(), "only rank 0 writes"
    both = load_run(tmp_path / "run0.json")
    net = _net()
    X, Y = _data()
    _train(net, X, Y, tmp_path / "one.json")
    one = load_run(tmp_path / "one.json")
    assert both.world_size == WORLD and [s for s, _ in both.history] == [0, 2, 4]
    for (_, a), (_, b) in zip(both.history, one.history, strict=True):
        assert _text(a) == _text(b)
        for x, y in zip(a.layers, b.layers, strict=True):
            for key, value in x.to_dict().items():
                other = y.to_dict()[key]
                if isinstance(value, float):
                    assert math.isclose(value, other, rel_tol=1e-9, abs_tol=1e-15), key
                else:
                    assert value == other, key


def _text(diagnosis) -> str:
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(layer_table(diagnosis, width=200))
    return console.file.getvalue()
