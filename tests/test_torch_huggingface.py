"""gradviz.torch.huggingface.Watch under a real transformers Trainer (a tiny BERT built from
its config in the test: no download, no network, `report_to=[]`): the run file holds the
table `gradviz.torch.watch` gives for the same steps of a plain loop (with gradient
accumulation), the gradients read are those after `max_grad_norm`'s clipping (said under
the verdict, with the clipping's factor), and `fail_on` stops a run that goes NaN at a
known step."""

from __future__ import annotations

import io
import math

import pytest
from torch_support import require_framework

transformers = require_framework("transformers")
require_framework("accelerate")
import torch  # noqa: E402
from rich.console import Console  # noqa: E402

from gradviz.errors import StatusFound  # noqa: E402
from gradviz.render.layers import layer_table  # noqa: E402
from gradviz.run import load_run  # noqa: E402
from gradviz.torch import watch  # noqa: E402
from gradviz.torch.huggingface import Watch  # noqa: E402

ROWS, BATCH, VOCAB = 64, 16, 40


def _model():
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=VOCAB,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=16,
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


def _same(a, b, rel: float) -> None:
    assert [s for s, _ in a] == [s for s, _ in b]
    for (_, x), (_, y) in zip(a, b, strict=True):
        assert _text(x) == _text(y)
        for p, q in zip(x.layers, y.layers, strict=True):
            for key, value in p.to_dict().items():
                other = q.to_dict()[key]
                if isinstance(value, float) and math.isfinite(value):
                    assert math.isclose(value, other, rel_tol=rel, abs_tol=1e-300), key
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
    ids, labels = _data()
    callback = Watch(every=1, save=tmp_path / "run.json", width=200)
    _, train = _train(callback, tmp_path, ids, labels, max_steps=2, max_grad_norm=1e-3)
    train()
    run = load_run(tmp_path / "run.json")
    plain, norms = _plain(ids, labels, 2, 1, 1, tmp_path / "plain.json", clip=1e-3)
    _same(run.history, plain.history, rel=1e-9)
    assert all(norm > 1e-3 for norm in norms)  # each step was clipped
    factors = [round(1e-3 / norm, 6) for norm in norms]
    assert sorted(callback.clipped) == [0, 1]
    assert [round(f, 6) for f in callback.clipped.values()] == factors
    printed = " ".join(capsys.readouterr().out.split())
    assert "gradients read after the Trainer's clipping (max_grad_norm=0.001)" in printed
    assert "it scaled them at recorded steps 0 (×" in printed


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
