"""gradviz.torch.tensorboard: the event files it writes, read back with TensorBoard's own
reader (EventAccumulator), hold each recorded layer's statistics as the run has them (at
TensorBoard's float32), at the recorded steps, and the statuses and verdict as text."""

from __future__ import annotations

import math

import numpy as np
import pytest
from torch_support import require_framework

require_framework("tensorboard")
import torch  # noqa: E402
from tensorboard.backend.event_processing.event_accumulator import (  # noqa: E402
    EventAccumulator,
)
from torch.utils.tensorboard import SummaryWriter  # noqa: E402

from gradviz.errors import InputError, ModelError  # noqa: E402
from gradviz.schema import load_run  # noqa: E402
from gradviz.stats import verdict  # noqa: E402
from gradviz.torch import watch  # noqa: E402
from gradviz.torch.tensorboard import STATISTICS, convert, tag, write_step  # noqa: E402


def _recorded(tmp_path, steps: int = 9, every: int = 4):
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(3, 8, dtype=torch.float64),
        torch.nn.ReLU(),
        torch.nn.Linear(8, 1, dtype=torch.float64),
        torch.nn.Sigmoid(),
    )
    g = torch.Generator().manual_seed(1)
    X = torch.randn(32, 3, generator=g, dtype=torch.float64)
    Y = (X[:, :1] > 0).to(torch.float64)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.5)
    rec = watch(net, every=every, optimizer=optimizer)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(net(X), Y)
        loss.backward()
        optimizer.step()
        rec.log(loss=loss)
    rec.save(tmp_path / "run.json")
    return load_run(tmp_path / "run.json")


def _read(logdir) -> EventAccumulator:
    events = EventAccumulator(str(logdir), size_guidance={"scalars": 0, "tensors": 0})
    events.Reload()
    return events


def _text(events: EventAccumulator, name: str) -> list[tuple[int, str]]:
    found = events.Tensors(f"{name}/text_summary")
    return [(e.step, e.tensor_proto.string_val[0].decode("utf-8")) for e in found]


def test_a_converted_run_holds_every_statistic_at_its_steps(tmp_path) -> None:
    run = _recorded(tmp_path)
    convert(tmp_path / "run.json", tmp_path / "tb")
    events = _read(tmp_path / "tb")
    tags = set(events.Tags()["scalars"])
    steps = [step for step, _ in run.history]
    assert steps == [0, 4, 8]
    checked = 0
    for layer in run.layers:
        for statistic in STATISTICS:
            values = [getattr(d.layers[run.layers.index(layer)], statistic) for _, d in run.history]
            name = tag(layer.name, statistic)
            if all(v is None for v in values):
                assert name not in tags  # not measured: no made-up points
                continue
            read = events.Scalars(name)
            expected = [(s, v) for s, v in zip(steps, values, strict=True) if v is not None]
            assert [e.step for e in read] == [s for s, _ in expected]
            for event, (_, value) in zip(read, expected, strict=True):
                # TensorBoard keeps a scalar as float32
                assert event.value == float(np.float32(value)) or (
                    math.isnan(event.value) and math.isnan(value)
                ), name
            checked += 1
    assert checked >= 2 * 10  # rms, |g|, grad:data, update:data, act ... of both layers
    assert "gradviz/0/rms" in tags and "gradviz/2/update_data" in tags
    loss = events.Scalars("gradviz/loss")
    assert [e.step for e in loss] == run.curve_steps
    assert [e.value for e in loss] == [float(np.float32(v)) for v in run.loss]
    ((last, said),) = _text(events, "gradviz/verdict")
    assert last == 8
    assert said == "\n".join(f"- {line}" for line in verdict(run.diagnosis(), run.history))
    statuses = _text(events, "gradviz/status")
    assert [s for s, _ in statuses] == steps
    assert "| 0 | ok |" in statuses[-1][1]


def test_write_step_writes_a_live_step(tmp_path) -> None:
    run = _recorded(tmp_path, steps=1, every=1)
    _, diagnosis = run.history[0]
    writer = SummaryWriter(log_dir=str(tmp_path / "live"))
    write_step(writer, 7, diagnosis)
    writer.close()
    events = _read(tmp_path / "live")
    rms = events.Scalars("gradviz/2/rms")
    assert [(e.step, e.value) for e in rms] == [(7, float(np.float32(diagnosis.layers[1].rms)))]
    assert _text(events, "gradviz/verdict")[0][0] == 7


def test_an_unreadable_run_file_is_refused_before_anything_is_written(tmp_path) -> None:
    (tmp_path / "bad.json").write_text('{"format": "gradviz-run", "version": 99}')
    with pytest.raises(ModelError, match=r"bad\.json"):
        convert(tmp_path / "bad.json", tmp_path / "tb")
    assert not (tmp_path / "tb").exists()


def test_watch_writes_each_recorded_step_to_the_writer_it_is_given(tmp_path) -> None:
    """`watch(..., tensorboard=writer)`: every recorded step's statistics as the history
    holds them (update:data included: each step is written once complete), live."""
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(3, 8, dtype=torch.float64),
        torch.nn.Tanh(),
        torch.nn.Linear(8, 1, dtype=torch.float64),
    )
    X = torch.randn(32, 3, dtype=torch.float64)
    Y = X.sum(1, keepdim=True)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    writer = SummaryWriter(log_dir=str(tmp_path / "live"))
    rec = watch(net, every=3, optimizer=optimizer, tensorboard=writer)
    for step in range(8):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(net(X), Y).backward()
        optimizer.step()
        if step == 4:  # written so far: the complete steps (0 and 3), live
            writer.flush()
            assert [e.step for e in _read(tmp_path / "live").Scalars("gradviz/0/rms")] == [0]
    rec.close()
    writer.close()
    events = _read(tmp_path / "live")
    history = rec.history()
    assert [step for step, _ in history] == [0, 3, 6]
    for i, layer in enumerate(("0", "2")):
        for statistic in ("rms", "update_data", "grad_data"):
            got = [(e.step, e.value) for e in events.Scalars(tag(layer, statistic))]
            want = [(s, float(np.float32(getattr(d.layers[i], statistic)))) for s, d in history]
            assert got == want, (layer, statistic)
    with pytest.raises(InputError, match="tensorboard must be"):
        watch(net, tensorboard="runs/")
