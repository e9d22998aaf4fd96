"""gradviz.torch and the op table's other activations (softplus, leaky_relu, elu, gelu,
silu): the modules that compute exactly those ops, watched in torch, give the per-layer
table gradviz's own statistics give for the same weights (slope from the op row at the
inputs, saturation by outputs or by inputs, stuck units); the modules with other
parameters are read as linear and the table says so; to_module/from_module map them."""

from __future__ import annotations

import io
import itertools
import math

import numpy as np
import pytest
from torch_support import require_torch

torch = require_torch()
nn = torch.nn

from gradviz.errors import InputError  # noqa: E402
from gradviz.nn import Network, layer_samples  # noqa: E402
from gradviz.ops import ACTIVATIONS  # noqa: E402
from gradviz.stats import diagnose  # noqa: E402
from gradviz.torch import from_module, to_module, watch  # noqa: E402
from gradviz.torch.activations import (  # noqa: E402
    FROM_OUTPUTS,
    QUADRATIC_SLOPES,
    activation_of,
    module_for,
)

NEW = ("softplus", "leaky_relu", "elu", "gelu", "silu")
MODULES = {
    "softplus": lambda: nn.Softplus(),
    "leaky_relu": lambda: nn.LeakyReLU(),
    "elu": lambda: nn.ELU(),
    "gelu": lambda: nn.GELU(approximate="tanh"),
    "silu": lambda: nn.SiLU(),
}
# The fields the recorder cannot give (see tests/test_torch_parity.py).
NOT_COMPARED = {"name", "hop_bound", "update_data", "reason"}


def _close(a: object, b: object, rel: float) -> bool:
    if a is None or b is None or isinstance(a, str):
        return a == b
    if isinstance(a, float | int) and math.isnan(a):
        return math.isnan(b)
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-300)


@pytest.mark.parametrize("kind", NEW)
def test_the_modules_compute_the_op_rows(kind: str) -> None:
    """Each module, with its default parameters, is the op row's function (softplus
    within 1e-10 relative: torch's is x itself beyond its threshold of 20)."""
    x = np.linspace(-40.0, 40.0, 4001)
    op = ACTIVATIONS[kind]
    module = MODULES[kind]()
    assert activation_of(module) == kind
    with torch.no_grad():
        theirs = module(torch.from_numpy(x)).numpy()
    ours = np.asarray(op.forward(x))
    np.testing.assert_allclose(theirs, ours, rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize(
    "module",
    [
        *(nn.Softplus(beta=2.0), nn.Softplus(threshold=5.0), nn.LeakyReLU(0.2)),
        *(nn.ELU(alpha=0.5), nn.GELU(), nn.Hardtanh(), nn.Mish()),
    ],
    ids=repr,
)
def test_other_parameters_are_not_the_op(module) -> None:
    assert activation_of(module) is None


def _network(kind: str, seed: int) -> tuple[Network, np.ndarray, np.ndarray]:
    """A 3-6-5-1 MLP of `kind` with weights large enough that some inputs saturate."""
    rng = np.random.default_rng(seed)
    sizes = [3, 6, 5, 1]
    network = Network(sizes, [kind, kind, "linear"], "mse", 0.0)
    weights = [
        (rng.normal(0.0, 2.5, (m, n)), rng.normal(0.0, 1.5, m))
        for n, m in itertools.pairwise(sizes)
    ]
    network.set_weights(weights)
    X = rng.normal(0.0, 1.5, (40, 3))
    Y = (X.sum(1) > 0).astype(float)
    return network, X, Y


@pytest.mark.parametrize("kind", NEW)
def test_the_watched_table_is_gradviz_own(kind: str) -> None:
    """Statuses, mean |slope|, saturated fraction, stuck units and the rest of each row,
    from the recorder in torch and from gradviz's statistics (numpy, the op row) on the
    same weights: the first recorded step (while the layers are mapped) and a later one."""
    network, X, Y = _network(kind, seed=NEW.index(kind))
    expected = diagnose(layer_samples(network, X, Y), epoch=0)
    net = to_module(network)
    Xt, Yt = torch.from_numpy(X), torch.from_numpy(Y)[:, None]
    rec = watch(net, every=1)
    for _ in range(2):
        net.zero_grad()
        ((net(Xt) - Yt) ** 2).mean().backward()
        rec.step()
    rec.close()
    history = rec.history()
    assert len(history) == 2
    for _, got in history:
        for want, have in zip(expected.layers, got.layers, strict=True):
            w, h = want.to_dict(), have.to_dict()
            for key in w.keys() - NOT_COMPARED:
                assert _close(w[key], h[key], 1e-9), (
                    f"{kind} {want.name}.{key}: {w[key]} vs {h[key]}"
                )
        assert [lay.status for lay in got.layers] == [lay.status for lay in expected.layers]
    hidden = got.layers[:2]
    assert all(lay.activation == kind for lay in hidden)
    op = ACTIVATIONS[kind]
    if op.saturation is None and op.saturation_input is None:  # leaky_relu: never saturated
        assert all(lay.saturated is None and lay.dead_units == 0 for lay in hidden)
    else:  # the weights saturate some inputs: the comparison above is not of zeros
        assert any(lay.saturated > 0 for lay in hidden)
    assert all(lay.mean_slope != 1.0 for lay in hidden)


def test_gelus_slope_is_read_at_its_inputs() -> None:
    """gelu dips below 0: its mean |slope| and its band are of the inputs, against numpy
    on the very pre-activations of the step."""
    torch.manual_seed(3)
    net = nn.Sequential(nn.Linear(3, 8, dtype=torch.float64), nn.GELU(approximate="tanh"))
    net.append(nn.Linear(8, 1, dtype=torch.float64))
    X = 2.0 * torch.randn(50, 3, dtype=torch.float64)
    rec = watch(net, every=1)
    (net(X) ** 2).mean().backward()
    rec.step()
    first = rec.diagnosis().layers[0]
    x = net[0](X).detach().numpy()
    op = ACTIVATIONS["gelu"]
    slope = np.abs(np.asarray(op.local(op.forward(x), x)[0]))
    assert math.isclose(first.mean_slope, float(np.mean(slope)), rel_tol=1e-12)
    low, high = op.saturation_input
    assert first.saturated == pytest.approx(float(np.mean((x < low) | (x > high))), abs=0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_the_slopes_step_is_a_above_zero_in_its_dtype(dtype: torch.dtype) -> None:
    """The op rows' `step(a)` (GELU's slope beyond |a| = 1e50), written straight into a's
    dtype: (a > 0) as that dtype, bit for bit, NaN and -0.0 included."""
    from gradviz.torch.activations import _TORCH_NAMES

    edges = [0.0, -0.0, 1e-45, -1e-45, 1.0, -1.0, 1e50, -1e50, math.inf, -math.inf, math.nan]
    a = torch.cat([torch.tensor(edges), torch.randn(300)]).to(dtype)
    step = _TORCH_NAMES["step"](a)
    assert step.dtype == dtype and torch.equal(step, (a > 0).to(dtype))
    assert torch.equal(torch.signbit(step), torch.zeros_like(step, dtype=torch.bool))


def test_a_slope_is_read_under_another_torch_dispatch_mode() -> None:
    """Under torch's FlopCounterMode (a TorchDispatchMode) torch imports Python modules
    from the frame of the op row's compiled slope: it reads the same slope there."""
    from torch.utils.flop_counter import FlopCounterMode

    torch.manual_seed(4)
    net = nn.Sequential(nn.Linear(3, 8, dtype=torch.float64), nn.SiLU())
    net.append(nn.Linear(8, 1, dtype=torch.float64))
    X = 2.0 * torch.randn(50, 3, dtype=torch.float64)
    rec = watch(net, every=1)
    with FlopCounterMode(display=False):
        (net(X) ** 2).mean().backward()
    rec.step()
    x = net[0](X).detach().numpy()
    sig = 1.0 / (1.0 + np.exp(-x))  # silu' = σ(x)·(1 + x·(1 - σ(x))), by hand
    slope = np.abs(sig * (1.0 + x * (1.0 - sig)))
    assert math.isclose(rec.diagnosis().layers[0].mean_slope, float(np.mean(slope)), rel_tol=1e-12)


@pytest.mark.parametrize(
    "module",
    [nn.GELU(), nn.LeakyReLU(0.2), nn.Hardtanh(), nn.PReLU(dtype=torch.float64)],
    ids=lambda m: type(m).__name__,
)
def test_an_unknown_activation_is_read_as_linear_and_said(module) -> None:
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4, dtype=torch.float64), module)
    net.append(nn.Linear(4, 1, dtype=torch.float64))
    X = torch.randn(20, 3, dtype=torch.float64)
    rec = watch(net, every=1)
    (net(X) ** 2).mean().backward()
    rec.step()
    first = rec.diagnosis().layers[0]
    pre = net[0](X).detach().numpy()  # its own output: the activation is not read
    assert first.activation == "linear" and first.mean_slope == 1.0
    assert math.isclose(first.act_mean, float(np.mean(pre)), rel_tol=1e-12)
    notes = rec.notes()
    assert notes[0] == (
        f"the activation after layer 0 ({module!r}) is unknown to gradviz: its row is read at "
        "the layer's output, as linear (slope 1, no saturation)"
    )
    if isinstance(module, nn.PReLU):  # a parameter of its own: a row, its output not read
        assert notes[1:] == [
            "Activations not read for 1 (PReLU: the output is not one layer's units); their "
            "gradients are."
        ]
        assert rec.diagnosis().layers[1].name == "1"
    else:
        assert notes[1:] == []
    out = io.StringIO()
    rec.table(file=out, width=200)
    assert f"the activation after layer 0 ({module!r}) is unknown to gradviz" in out.getvalue()
    assert rec.run().layers[0].activation_module is None


def test_known_activations_carry_no_note() -> None:
    network, X, _ = _network("silu", seed=0)
    net = to_module(network)
    rec = watch(net, every=1)
    net(torch.from_numpy(X)).sum().backward()
    rec.step()
    assert rec.notes() == []


@pytest.mark.parametrize("kind", NEW)
def test_to_module_and_from_module_map_them(kind: str) -> None:
    network, _, _ = _network(kind, seed=1)
    module = to_module(network)
    assert [activation_of(m) for m in module if not isinstance(m, nn.Linear)] == [kind, kind]
    again = from_module(module)
    assert again.activations == network.activations
    for (W, b), (W2, b2) in zip(network.weights(), again.weights(), strict=True):
        assert np.array_equal(W, W2) and np.array_equal(b, b2)
    # from a module built by hand, with the defaults
    hand = nn.Sequential(nn.Linear(2, 3), MODULES[kind](), nn.Linear(3, 1))
    assert from_module(hand).activations == (kind, "linear")


@pytest.mark.parametrize(
    "module", [nn.LeakyReLU(0.2), nn.GELU(), nn.ELU(alpha=2.0), nn.Softplus(beta=3.0)], ids=repr
)
def test_from_module_refuses_other_parameters_by_name(module) -> None:
    with pytest.raises(InputError, match="with these parameters") as error:
        from_module(nn.Sequential(nn.Linear(2, 3), module))
    assert repr(module) in str(error.value)


def _watched_once(module):
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4, dtype=torch.float64), module)
    net.append(nn.Linear(4, 1, dtype=torch.float64))
    X = torch.randn(20, 3, dtype=torch.float64)
    rec = watch(net, every=1)
    (net(X) ** 2).mean().backward()
    rec.step()
    return net, X, rec


def test_an_in_place_activation_whose_slope_needs_its_input_is_said() -> None:
    """nn.ELU(inplace=True) overwrites its input before the hook sees it: read as linear,
    and the note says why; an in-place ReLU is read off its outputs as before."""
    net, X, rec = _watched_once(nn.ELU(inplace=True))
    first = rec.diagnosis().layers[0]
    assert first.activation == "linear"
    assert rec.notes() == [
        "the activation after layer 0 (ELU(alpha=1.0, inplace=True)) works in place, its "
        "input gone before it is read: its row is read at the layer's output, as linear "
        "(slope 1, no saturation)"
    ]
    net, X, rec = _watched_once(nn.ReLU(inplace=True))
    first = rec.diagnosis().layers[0]
    a = torch.relu(net[0](X)).detach().numpy()
    assert first.activation == "relu" and rec.notes() == []
    assert math.isclose(first.mean_slope, float(np.mean(a > 0)), rel_tol=1e-12)


def test_slopes_read_off_outputs_follow_autograd():
    """The activations whose mean slope the recorder reads from the outputs' two moments give,
    at every output, the slope autograd computes at the input (σ′, tanh′), and the ones
    whose derivative needs the input are not among them."""
    a = torch.linspace(-6.0, 6.0, 241, dtype=torch.float64, requires_grad=True)
    assert set(QUADRATIC_SLOPES) == {"sigmoid", "tanh"}
    assert {"sigmoid", "tanh", "relu"} == FROM_OUTPUTS
    for name, (c0, c1, c2) in QUADRATIC_SLOPES.items():
        out = module_for(name)(a)
        (slope,) = torch.autograd.grad(out.sum(), a)
        o = out.detach()
        assert torch.allclose(c0 + c1 * o + c2 * o * o, slope, rtol=0, atol=1e-12), name
