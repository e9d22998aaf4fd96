"""`.grad` accumulates across `backward()` calls; `zero_grad()` empties it; the library's
own passes (examples of a network, training steps, layer statistics) start from zero, so
what the CLI prints does not depend on what ran before."""

from __future__ import annotations

import numpy as np

from gradviz import nn
from gradviz.compile import Plain
from gradviz.engine import Value
from gradviz.spec import preset


def _network() -> nn.Network:
    return nn.Network.from_spec(preset("xor"))


def test_network_zero_grad_empties_every_parameter() -> None:
    network = _network()
    params = network.parameters()
    inputs = [Value(1.0, "x0"), Value(0.0, "x1")]
    loss = network.build(inputs, Value(1.0, "y")).loss
    loss.backward()
    first = [p.grad for p in params]
    assert any(g != 0 for g in first)
    loss.backward()  # accumulates: twice the same
    assert [p.grad for p in params] == [2 * g for g in first]
    network.zero_grad()
    assert all(p.grad == 0.0 for p in params)
    loss.backward()
    assert [p.grad for p in params] == first


def test_the_librarys_passes_start_from_zero() -> None:
    network = _network()
    params = network.parameters()
    first = [p.grad for p in (nn.example_graph(network, [1.0, 0.0], 1.0), params)[1]]
    again = [p.grad for p in (nn.example_graph(network, [1.0, 0.0], 1.0), params)[1]]
    assert first == again  # not doubled by the shared parameters
    X, Y = np.array([[0.0, 1.0], [1.0, 1.0]]), np.array([1.0, 0.0])
    samples = [s.weight_grads.copy() for s in nn.layer_samples(network, X, Y)]
    repeat = [s.weight_grads for s in nn.layer_samples(network, X, Y)]
    assert all(np.array_equal(a, b) for a, b in zip(samples, repeat, strict=True))
    stale = Plain(network)
    for p in stale.network.parameters():
        p.grad = 123.0  # stale grads must not leak into a step
    args = (network.flat(), X.tolist(), Y.tolist(), [0, 1])
    assert stale.gradient(*args) == Plain(network).gradient(*args)
