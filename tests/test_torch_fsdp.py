"""Under FSDP2 (`torch.distributed.fsdp.fully_shard`, gloo, CPU, two processes on loopback)
each parameter and gradient is a DTensor sharded by rows: a weight of 4 rows is split
2 + 2 (even), one of 5 rows 3 + 2 (uneven), one of 1 row 1 + 0 (an empty shard). Each
layer's statistics must be those of the whole parameter, equal to the one-process run on
the whole batch.

`gradviz.torch.shards.sizes` reads them through the local shards (‖g‖² and Σ|g| summed
across the ranks, max|g| maxed): checked here against the whole tensors. The recorder
(`watch`), which reads DTensors through their local shards too, is checked on the same
run against the one-process run."""

from __future__ import annotations

import datetime
import io
import json
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
from gradviz.run import load_run  # noqa: E402
from gradviz.torch import watch  # noqa: E402
from gradviz.torch.shards import nonfinite_counts, sizes  # noqa: E402

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


def _sizes_worker(rank: int, store: str, folder: str) -> None:
    _start(rank, store)
    try:
        from torch.distributed.tensor import Shard, distribute_tensor

        net = _sharded(_net())
        X, Y = _data()
        half = slice(rank * 16, (rank + 1) * 16)
        _step(net, torch.optim.SGD(net.parameters(), lr=0.5), X[half], Y[half])
        tensors = _tensors(net)
        shapes = [list(t.to_local().shape) for t in tensors[:6]]
        # NaN/inf at known places of a 5 x 3 tensor, in both ranks' rows
        marked = torch.zeros(5, 3, dtype=F64)
        marked[0, 1], marked[4, 2], marked[3, 0] = math.nan, math.inf, -math.inf
        mesh = tensors[0].device_mesh
        counts = nonfinite_counts([distribute_tensor(marked, mesh, [Shard(0)])])
        result = {"sizes": sizes(tensors).tolist(), "counts": counts, "shapes": shapes}
        with open(os.path.join(folder, f"sizes{rank}.json"), "w") as file:
            json.dump(result, file)
    finally:
        dist.destroy_process_group()


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


def _whole(X, Y) -> list[list[float]]:
    """(‖t‖, Σ|t|, max|t|) of each whole tensor after the one-process step."""
    net = _net()
    _step(net, torch.optim.SGD(net.parameters(), lr=0.5), X, Y)
    out = []
    for t in _tensors(net):
        a = t.detach().abs()
        out.append([float(torch.linalg.vector_norm(a)), float(a.sum()), float(a.max())])
    return out


@SLOW
def test_shard_sizes_are_those_of_the_whole_tensors(tmp_path) -> None:
    _run(_sizes_worker, tmp_path)
    rank0 = json.loads((tmp_path / "sizes0.json").read_text())
    rank1 = json.loads((tmp_path / "sizes1.json").read_text())
    # the shards this test is about: even, uneven and empty (weights, then biases)
    assert [s[0] for s in rank1["shapes"][::2]] == [2, 2, 0]
    X, Y = _data()
    whole = _whole(X, Y)
    for rank in (rank0, rank1):  # every rank gets the whole tensors' numbers
        for got, want in zip(rank["sizes"], whole, strict=True):
            for a, b in zip(got, want, strict=True):
                assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300)
    assert rank0["counts"] == rank1["counts"] == [3]


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


def test_plain_tensors_are_read_whole_without_a_collective() -> None:
    t = torch.tensor([[3.0, -4.0], [0.0, 1.0]], dtype=F64)
    assert sizes([t, torch.zeros(0, 2)]).tolist() == [[math.sqrt(26), 8.0, 4.0], [0, 0, 0]]
    assert nonfinite_counts([torch.tensor([math.nan, 1.0, math.inf])]) == [2]
