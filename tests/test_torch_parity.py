"""One truth, two engines: a gradviz network and its `torch.nn.Sequential` (float64, the
same weights) give the same per-layer statistics and loss at the start (1e-12 relative),
and trained side by side, full batch, the same weights after 500 steps (1e-6) and the
same final accuracy. Only the order of the sums differs between the two."""

from __future__ import annotations

import math

import numpy as np
import pytest
from torch_support import require_torch

torch = require_torch()

from gradviz.errors import InputError  # noqa: E402
from gradviz.nn import (  # noqa: E402
    LOSS_FUNCTIONS,
    Network,
    is_correct,
    layer_samples,
)
from gradviz.spec import resolve_spec  # noqa: E402
from gradviz.stats import diagnose  # noqa: E402
from gradviz.torch import from_module, to_module, watch  # noqa: E402
from gradviz.train import evaluate, load_data, train  # noqa: E402

# The fields the recorder cannot give (hop_bound needs a spectral norm per step) or that
# mean another moment (update:data: gradviz's is the last update, at step 0 none).
NOT_COMPARED = {"name", "hop_bound", "update_data", "reason"}
CASES = {"xor": {}, "circle": {"update": "full"}}


def _spec(name: str, **more: object):
    return resolve_spec(name, {**CASES[name], **more}, {})


def _close(a: object, b: object, rel: float) -> bool:
    if a is None or b is None or isinstance(a, str):
        return a == b
    if isinstance(a, float | int) and math.isnan(a):
        return math.isnan(b)
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-300)


def _compare_tables(expected, got, rel: float) -> None:
    assert len(expected.layers) == len(got.layers)
    for want, have in zip(expected.layers, got.layers, strict=True):
        w, h = want.to_dict(), have.to_dict()
        for key in w.keys() - NOT_COMPARED:
            assert _close(w[key], h[key], rel), f"{want.name}.{key}: {w[key]} vs {h[key]}"
    assert got.at_rest == expected.at_rest and got.stalled == expected.stalled
    assert _close(expected.output_spread, got.output_spread, rel)


def _torch_diagnosis(net, X, Y):
    """The recorder's statistics of one full-batch backward at the module's weights."""
    net.zero_grad()
    rec = watch(net, every=1)
    loss = ((net(X) - Y) ** 2).mean()
    loss.backward()
    rec.step()
    rec.close()
    return rec.diagnosis(), float(loss.detach())


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_same_weights_give_the_same_table_and_loss(name: str) -> None:
    spec = _spec(name)
    data = load_data(spec)
    network = Network.from_spec(spec)
    expected = diagnose(layer_samples(network, data.X, data.Y), epoch=0)
    X, Y = torch.from_numpy(data.X), torch.from_numpy(data.Y)[:, None]
    got, loss = _torch_diagnosis(to_module(network), X, Y)
    _compare_tables(expected, got, 1e-12)
    assert math.isclose(loss, evaluate(network, data).loss, rel_tol=1e-12)
    # the statuses and the sentences agree too (they read the same table)
    assert [lay.status for lay in got.layers] == [lay.status for lay in expected.layers]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_trained_side_by_side_they_stay_together(name: str) -> None:
    steps = 500
    spec = _spec(name, epochs=steps)
    data = load_data(spec)
    result = train(spec, data)
    net = to_module(Network.from_spec(spec))
    optimizer = torch.optim.SGD(net.parameters(), lr=spec.learning_rate)
    X, Y = torch.from_numpy(data.X), torch.from_numpy(data.Y)[:, None]
    for _ in range(steps):
        optimizer.zero_grad()
        ((net(X) - Y) ** 2).mean().backward()
        optimizer.step()
    trained = from_module(net)
    for (W, b), (W_t, b_t) in zip(result.network.weights(), trained.weights(), strict=True):
        scale = max(np.max(np.abs(W)), 1.0)
        assert np.max(np.abs(W - W_t)) <= 1e-6 * scale
        assert np.max(np.abs(b - b_t)) <= 1e-6 * max(np.max(np.abs(b)), 1.0)
    with torch.no_grad():
        outputs = net(X)[:, 0].tolist()
    accuracy = np.mean(
        [
            is_correct(o, y, LOSS_FUNCTIONS[spec.loss].threshold)
            for o, y in zip(outputs, data.Y, strict=True)
        ]
    )
    assert accuracy == result.final.accuracy
    expected = diagnose(layer_samples(result.network, data.X, data.Y))
    got, loss = _torch_diagnosis(net, X, Y)
    _compare_tables(expected, got, 1e-6)
    assert math.isclose(loss, result.final.loss, rel_tol=1e-6)


def test_from_module_and_to_module_are_inverse() -> None:
    network = Network.from_spec(resolve_spec("deep-relu", {}, {}))
    again = from_module(to_module(network))
    assert again.sizes == network.sizes and again.activations == network.activations
    for (W, b), (W2, b2) in zip(network.weights(), again.weights(), strict=True):
        assert np.array_equal(W, W2) and np.array_equal(b, b2)


@pytest.mark.parametrize(
    ("module", "words"),
    [
        (lambda: torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.GELU()), "GELU"),
        (lambda: torch.nn.Sequential(torch.nn.Linear(2, 3, bias=False)), "no bias"),
        (lambda: torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Linear(2, 3)), "without a layer"),
        (lambda: torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Linear(4, 1)), "takes 4"),
        (lambda: torch.nn.Linear(2, 3), "nn.Sequential"),
    ],
)
def test_from_module_refuses_what_gradviz_cannot_express(module, words: str) -> None:
    with pytest.raises(InputError, match=words):
        from_module(module())
