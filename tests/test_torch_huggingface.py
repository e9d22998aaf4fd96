"""gradviz.torch.huggingface.Watch under a real transformers Trainer (a tiny BERT built from
its config in the test: no download, no network, `report_to=[]`): the run file holds the
table `gradviz.torch.watch` gives for the same steps of a plain loop (with gradient
accumulation), the gradients read are those after `max_grad_norm`'s clipping (said under
the verdict, with the clipping's factor), and `fail_on` stops a run that goes NaN at a
known step."""

from __future__ import annotations

import io
import math
import os
import socket
import time

import pytest
from torch_support import require_framework

transformers = require_framework("transformers")
require_framework("accelerate")
import torch  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from rich.console import Console  # noqa: E402

from gradviz.errors import StatusFound  # noqa: E402
from gradviz.render.layers import layer_table  # noqa: E402
from gradviz.schema import load_run  # noqa: E402
from gradviz.torch import watch  # noqa: E402
from gradviz.torch.huggingface import Watch  # noqa: E402

ROWS, BATCH, VOCAB = 64, 16, 40
TIMEOUT = 180  # seconds for both DDP processes: far above the ~15 they take


def _model():
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=VOCAB,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        # (not 16, the hidden size: the recorder would read the position embeddings' output,
        # one row per position whatever the batch, as 16 units, and under DDP count their
        # rows once per process: the `n` column would differ from the one-process run)
        max_position_embeddings=12,
        hidden_dropout_prob=0.0,  # (no randomness the plain loop would have to replay)
        attention_probs_dropout_prob=0.0,
        num_labels=1,
        problem_type="regression",
    )
    return transformers.BertForSequenceClassification(config).double()


def _data(nan_row: int | None = None):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, VOCAB, (ROWS, 8), generator=g)
    labels = (ids[:, 0] % 2).to(torch.float64)
    if nan_row is not None:
        labels[nan_row] = math.nan
    return ids, labels


class Rows(torch.utils.data.Dataset):
    def __init__(self, ids, labels) -> None:
        self.ids, self.labels = ids, labels

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.labels[i]}


def _train(callback, folder, ids, labels, **options):
    settings = {
        "output_dir": str(folder / "out"),
        "report_to": [],
        "save_strategy": "no",
        "logging_steps": 1,
        "use_cpu": True,
        "per_device_train_batch_size": BATCH,
        "disable_tqdm": True,
        "seed": 0,
        "optim": "sgd",
        "learning_rate": 0.1,
        "lr_scheduler_type": "constant",
        "weight_decay": 0.0,
        "train_sampling_strategy": "sequential",  # the plain loop's order
        **options,
    }
    args = transformers.TrainingArguments(**settings)
    trainer = transformers.Trainer(
        model=_model(), args=args, train_dataset=Rows(ids, labels), callbacks=[callback]
    )
    return trainer, trainer.train


def _plain(
    ids, labels, steps: int, accumulate: int, every: int, path, clip: float = 0.0, scale=None
):
    """The Trainer's loop written out: `accumulate` backward passes of loss × `scale`
    (1/accumulate unless given), clipping, the recorder's step() where
    on_pre_optimizer_step is, then SGD's step."""
    scale = 1 / accumulate if scale is None else scale
    model = _model()
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    rec = watch(model, every=every, manual=True)
    starts = list(range(0, ROWS, BATCH))
    norms = []
    for step in range(steps):
        total = 0.0
        for k in range(accumulate):
            start = starts[(step * accumulate + k) % len(starts)]
            batch = slice(start, start + BATCH)
            loss = model(input_ids=ids[batch], labels=labels[batch]).loss * scale
            loss.backward()
            total = total + loss.detach()
        if clip:
            norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), clip)))
        rec.step()
        optimizer.step()
        optimizer.zero_grad()
        rec.log(loss=total)
    rec.save(path)
    return load_run(path), norms


def _text(diagnosis) -> str:
    console = Console(file=io.StringIO(), width=250, color_system=None)
    console.print(layer_table(diagnosis, width=250))
    return console.file.getvalue()


def _roundoff(diagnosis) -> set[int]:
    """The layers whose bias gradient is rounding noise (attention's key bias: softmax
    ignores a shift, so its gradient is 0 but for rounding, ~1e-18)."""
    top = max(lay.signal for lay in diagnosis.layers if math.isfinite(lay.signal))
    return {i for i, lay in enumerate(diagnosis.layers) if lay.signal < 1e-12 * top}


def _same(a, b, rel: float, exact_text: bool = True) -> None:
    """Two histories: the same tables and every number equal to `rel`. Without
    `exact_text`, a bias gradient that is rounding noise, and the hop (‖δ‖ over the next
    layer's) beside it, are left out, and a mean of activations within 1e-12 of 0 is 0:
    noise, whichever way it is summed."""
    assert [s for s, _ in a] == [s for s, _ in b]
    for (_, x), (_, y) in zip(a, b, strict=True):
        if exact_text:
            assert _text(x) == _text(y)
        noise = _roundoff(y)
        for i, (p, q) in enumerate(zip(x.layers, y.layers, strict=True)):
            for key, value in p.to_dict().items():
                other = q.to_dict()[key]
                if not exact_text and (
                    (key == "hop" and {i, i + 1} & noise) or (key == "signal" and i in noise)
                ):
                    continue
                # (a LayerNorm's outputs average 0: their mean is rounding, ~1e-17)
                zero = 1e-12 if key == "act_mean" and not exact_text else 1e-300
                if isinstance(value, float) and math.isfinite(value):
                    assert math.isclose(value, other, rel_tol=rel, abs_tol=zero), key
                else:
                    assert value == other or (value != value and other != other), key


def test_the_run_file_holds_the_plain_loop_s_table_with_accumulation(tmp_path, capsys) -> None:
    ids, labels = _data()
    callback = Watch(every=2, save=tmp_path / "run.json", width=200)
    trainer, train = _train(
        callback, tmp_path, ids, labels, max_steps=4, gradient_accumulation_steps=2,
        max_grad_norm=0.0,
    )  # fmt: skip
    train()
    run = load_run(tmp_path / "run.json")
    # the Trainer divides each batch's loss by the batches accumulated, unless the model
    # takes loss keywords (num_items_in_batch), as BERT's heads do in transformers 5: then
    # it leaves the loss to the model, and BERT's regression loss is each batch's mean
    scale = 1.0 if trainer.model_accepts_loss_kwargs else 0.5
    plain, _ = _plain(ids, labels, 4, 2, 2, tmp_path / "plain.json", scale=scale)
    assert [s for s, _ in run.history] == [0, 2] and run.steps_run == 4
    assert "bert.encoder.layer.1.output.dense" in [layer.name for layer in run.layers]
    _same(run.history, plain.history, rel=1e-12)
    # the Trainer's logged loss: each step's (its sum is kept in float32: 1e-6)
    assert run.curve_steps == plain.curve_steps == [1, 2, 3, 4]
    assert run.loss == pytest.approx(plain.loss, rel=1e-6)
    printed = capsys.readouterr().out
    assert printed.count("Gradients per layer: BertForSequenceClassification at step 2") == 1
    assert "clipping" not in printed  # max_grad_norm=0: nothing clipped, nothing said


def test_the_gradients_read_are_the_clipped_ones_and_the_verdict_says_so(tmp_path, capsys):
    """The Trainer clips before on_pre_optimizer_step: the table holds the clipped
    gradients (the plain loop's, clipped the same), and each recorded step knows the
    factor clipping scaled them by (read at the end of the backward pass)."""
    ids, labels = _data()
    callback = Watch(every=1, save=tmp_path / "run.json", width=200)
    _, train = _train(callback, tmp_path, ids, labels, max_steps=2, max_grad_norm=1e-3)
    train()
    run = load_run(tmp_path / "run.json")
    plain, norms = _plain(ids, labels, 2, 1, 1, tmp_path / "plain.json", clip=1e-3)
    _same(run.history, plain.history, rel=1e-9)
    assert all(norm > 1e-3 for norm in norms)  # each step was clipped
    for (_, diagnosis), norm in zip(run.history, norms, strict=True):
        assert math.isclose(diagnosis.clip_scale, 1e-3 / (norm + 1e-6), rel_tol=1e-6)
    printed = " ".join(capsys.readouterr().out.split())
    assert "Gradient clipping scaled the gradients by ×" in printed


def test_fail_on_stops_a_run_that_goes_nan_at_a_known_step(tmp_path, capsys) -> None:
    ids, labels = _data(nan_row=2 * BATCH + 3)  # in the batch of optimizer step 2
    callback = Watch(every=1, save=tmp_path / "run.json", fail_on="nan", width=200)
    trainer, train = _train(callback, tmp_path, ids, labels, max_steps=6, max_grad_norm=0.0)
    with pytest.raises(StatusFound) as caught:
        train()
    error = caught.value
    run = load_run(tmp_path / "run.json")  # saved before stopping
    assert [s for s, _ in run.history] == [0, 1, 2]
    nan_layers = [lay.name for lay in run.history[2][1].layers if lay.status == "NaN"]
    assert (error.status, error.step) == ("NaN", 2) and error.layer == nan_layers[0]
    assert "NaN" not in [lay.status for lay in run.history[1][1].layers]
    assert trainer.state.global_step == 2  # no optimizer step after the NaN
    assert capsys.readouterr().out.count("Gradients per layer") == 1


# -- two processes under DistributedDataParallel -------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ddp_worker(rank: int, port: int, folder: str) -> None:
    """One of two processes, started as torchrun would: the Trainer (accelerate) joins
    them over gloo and wraps the model in DistributedDataParallel."""
    os.environ.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        WORLD_SIZE="2",
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        GLOO_SOCKET_IFNAME="lo",  # loopback only
    )
    torch.set_num_threads(1)
    ids, labels = _data()
    callback = Watch(every=2, save=os.path.join(folder, f"run{rank}.json"), show=False)
    from pathlib import Path

    # half a batch each (the two make the plain loop's 16 rows); no loss × processes, which
    # the Trainer applies for models taking loss keywords (average_tokens_across_devices)
    trainer, train = _train(
        callback, Path(folder), ids, labels, max_steps=4, max_grad_norm=0.0,
        per_device_train_batch_size=BATCH // 2, average_tokens_across_devices=False,
    )  # fmt: skip
    assert trainer.args.world_size == 2
    train()


@pytest.mark.slow  # two processes starting transformers: seconds
def test_two_process_ddp_gives_the_one_process_table(tmp_path) -> None:
    context = mp.start_processes(
        _ddp_worker,
        args=(_free_port(), str(tmp_path)),
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
    assert not (tmp_path / "run1.json").exists(), "only rank 0 writes"
    both = load_run(tmp_path / "run0.json")
    assert both.world_size == 2 and [s for s, _ in both.history] == [0, 2]
    ids, labels = _data()
    one, _ = _plain(ids, labels, 4, 1, 2, tmp_path / "one.json")
    _same(both.history, one.history, rel=1e-9, exact_text=False)
    # the Trainer's logged loss is the mean over both processes: the whole batch's
    assert both.loss == pytest.approx(one.loss, rel=1e-6)
