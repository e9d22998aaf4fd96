"""Per-layer gradient statistics against numbers they did not produce: gradients from the
engine's own backward pass, closed forms where theory gives exact ratios (the sigmoid
chains), and renderings read back by `dot` and an XML parser."""

from __future__ import annotations

import itertools
import json
import math
import warnings

import numpy as np
import pytest
from rich.console import Console

from gradviz import nn, schema, stats
from gradviz.engine import Value
from gradviz.errors import InputError
from gradviz.nn import LayerSample
from gradviz.render import layers as view

# -- LayerSamples built with the engine (independent of the code under test) ---------------

ACT = {
    "sigmoid": lambda z: z.sigmoid(),
    "tanh": lambda z: z.tanh(),
    "relu": lambda z: z.relu(),
    "linear": lambda z: z,
}


def chain(weight: float, bias: float, n: int = 10, x: float = 0.5) -> list[LayerSample]:
    """n single-input sigmoid neurons in a row; the loss is the last output itself."""
    a = Value(x)
    kept = []
    for _ in range(n):
        w, b = Value(weight, "w"), Value(bias, "b")
        z = w * a + b
        out = z.sigmoid()
        kept.append((w, b, z, out))
        a = out
    a.backward()
    return [
        LayerSample(
            index=i + 1,
            name=f"L{i + 1}",
            activation="sigmoid",
            is_output=i == n - 1,
            weights=np.array([[w.data]]),
            biases=np.array([b.data]),
            weight_grads=np.array([[w.grad]]),
            bias_grads=np.array([b.grad]),
            pre_activations=np.array([[z.data]]),
            activations=np.array([[out.data]]),
        )
        for i, (w, b, z, out) in enumerate(kept)
    ]


def network(
    weights: list[np.ndarray],
    biases: list[np.ndarray],
    activations: list[str],
    X: np.ndarray,
    T: np.ndarray,
    previous: list[np.ndarray] | None = None,
) -> list[LayerSample]:
    """A dense network as a graph of Values over the whole batch at once (numpy data), with
    the loss = mean over the batch of the summed squared error; returns its LayerSamples."""
    batch = X.shape[0]
    a = [Value(X[:, k].astype(float)) for k in range(X.shape[1])]
    kept = []
    for W, b, act in zip(weights, biases, activations, strict=True):
        wv = [[Value(float(W[j, k])) for k in range(W.shape[1])] for j in range(W.shape[0])]
        bv = [Value(float(b[j])) for j in range(W.shape[0])]
        zs = []
        for j in range(W.shape[0]):
            z = bv[j]
            for k in range(W.shape[1]):
                z = z + wv[j][k] * a[k]
            zs.append(z)
        outs = [ACT[act](z) for z in zs]
        kept.append((wv, bv, zs, outs))
        a = outs
    loss = Value(0.0)
    for j, out in enumerate(a):
        loss = loss + (out - Value(T[:, j].astype(float))) ** 2
    loss.backward()

    def batch_mean(g: object) -> float:  # per-sample grads -> gradient of the mean loss
        return float(np.sum(g)) / batch

    samples = []
    for i, (wv, bv, zs, outs) in enumerate(kept):
        samples.append(
            LayerSample(
                index=i + 1,
                name=f"L{i + 1}",
                activation=activations[i],
                is_output=i == len(kept) - 1,
                weights=weights[i].astype(float),
                biases=biases[i].astype(float),
                weight_grads=np.array([[batch_mean(w.grad) for w in row] for row in wv]),
                bias_grads=np.array([batch_mean(b.grad) for b in bv]),
                pre_activations=np.stack([np.broadcast_to(z.data, (batch,)) for z in zs], axis=1),
                activations=np.stack([np.broadcast_to(o.data, (batch,)) for o in outs], axis=1),
                previous_weights=None if previous is None else previous[i],
            )
        )
    return samples


def deep(activation: str, seed: int = 0, depth: int = 10, width: int = 8) -> list[LayerSample]:
    """A fresh deep net, uniform ±sqrt(2/n_in) weights and zero biases (the spec default)."""
    rng = np.random.default_rng(seed)
    sizes = [2] + [width] * (depth - 1) + [1]
    Ws = [rng.uniform(-1, 1, (m, n)) * math.sqrt(2 / n) for n, m in itertools.pairwise(sizes)]
    bs = [np.zeros(m) for m in sizes[1:]]
    acts = [activation] * (depth - 1) + ["sigmoid"]
    X = rng.uniform(-1.5, 1.5, (32, 2))
    T = (np.sum(X * X, axis=1, keepdims=True) < 1).astype(float)
    return network(Ws, bs, acts, X, T)


def statuses(samples: list[LayerSample]) -> list[str]:
    return [layer.status for layer in stats.diagnose(samples).layers]


def render(renderable: object, width: int = 200) -> str:
    console = Console(width=width, no_color=True, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    return console.export_text()


# -- the three exact sigmoid chains ----------------------------------------------------------


@pytest.mark.parametrize(
    ("weight", "bias", "hop"),
    [(1.0, -0.5, 0.25), (4.0, -2.0, 1.0), (8.0, -4.0, 2.0)],
)
def test_chain_gradients_match_closed_form(weight: float, bias: float, hop: float) -> None:
    # Every pre-activation is w·0.5 + b = 0, so σ = 0.5, σ' = 0.25, and going back one
    # neuron multiplies dL/dz by w·σ' = hop. dL/dz10 = σ'(0) = 0.25, dL/dw_i = dL/dz_i · 0.5.
    samples = chain(weight, bias)
    for i, s in enumerate(samples, start=1):
        assert s.pre_activations[0, 0] == 0.0
        assert s.bias_grads[0] == 0.25 * hop ** (10 - i)
        assert s.weight_grads[0, 0] == 0.125 * hop ** (10 - i)
    ratio = samples[0].weight_grads[0, 0] / samples[-1].weight_grads[0, 0]
    assert ratio == hop**9  # 0.25⁹, 1, 2⁹ exactly: powers of two


def network_chain(weight: float, bias: float, n: int = 10) -> list[LayerSample]:
    """The same chain as a real gradviz network (n single-input sigmoid layers, mse loss)
    measured by `nn.layer_samples` on the one example x = 0.5, target 1."""
    network = nn.Network([1] * (n + 1), ["sigmoid"] * n)
    network.set_weights([(np.array([[weight]]), np.array([bias]))] * n)
    return nn.layer_samples(network, np.array([[0.5]]), np.array([1.0]))


@pytest.mark.parametrize(
    ("weight", "bias", "hop", "expected"),
    [
        (1.0, -0.5, 0.25, ["vanishing"] * 6 + ["weak"] * 2 + ["ok"] * 2),
        (4.0, -2.0, 1.0, ["ok"] * 10),
        (8.0, -4.0, 2.0, ["exploding"] * 3 + ["ok"] * 7),
    ],
)
def test_chain_through_the_network_code_is_exact(
    weight: float, bias: float, hop: float, expected: list[str]
) -> None:
    """Every pre-activation is 0 (σ = 0.5, σ' = 0.25); the loss (a − 1)² sends back
    2(0.5 − 1) = −1, so dL/dz10 = −0.25 and each hop multiplies by w·σ' = hop exactly."""
    samples = network_chain(weight, bias)
    assert [s.pre_activations.tolist() for s in samples] == [[[0.0]]] * 10
    for i, s in enumerate(samples, 1):
        assert s.bias_grads.tolist() == [-0.25 * hop ** (10 - i)]
        assert s.weight_grads.tolist() == [[-0.125 * hop ** (10 - i)]]  # × the input 0.5
    d = stats.diagnose(samples)
    assert d.layers[0].rms / d.layers[-1].rms == hop**9  # 0.25⁹, 1, 2⁹
    assert [layer.hop for layer in d.layers[:-1]] == [hop] * 9
    assert [layer.hop_bound for layer in d.layers[:-1]] == [hop] * 9  # 0.25 · |w|
    assert [layer.status for layer in d.layers] == expected
    # the same numbers as the chain built by hand with the engine (the loss is a10 there)
    by_hand = stats.diagnose(chain(weight, bias))
    assert [lay.rel for lay in d.layers] == [lay.rel for lay in by_hand.layers]


def test_chain_weights_1_first_layers_vanishing_with_no_saturation() -> None:
    d = stats.diagnose(chain(1.0, -0.5))
    first, last = d.layers[0], d.layers[-1]
    assert first.rel == 0.25**9 and last.rel == 1.0
    assert all(layer.hop == 0.25 and layer.hop_bound == 0.25 for layer in d.layers[:-1])
    assert d.layers[-1].hop is None and d.layers[-1].hop_bound is None
    assert all(layer.saturated == 0.0 and layer.mean_slope == 0.25 for layer in d.layers)
    # below = 0.25^(10-i): < 1e-2 for i <= 6, < 1e-1 for i = 7, 8
    assert [layer.status for layer in d.layers] == ["vanishing"] * 6 + ["weak"] * 2 + ["ok"] * 2
    (sentence,) = stats.verdict(d)
    assert sentence.startswith("L1–L6 are vanishing: L1 receives 3.8e-6 of L10's gradient")
    assert "through 9 sigmoid layers" in sentence and "×0.25 per layer" in sentence
    assert "none of their outputs saturated" in sentence and "tanh or ReLU" in sentence
    # the factor's two parts: every slope 0.25 (σ(0)), every weight 1
    assert "σ′ averages 0.25 here (at most 0.25) and the weights multiply it by 1;" in sentence


def test_chain_weights_4_ratio_one_all_ok() -> None:
    d = stats.diagnose(chain(4.0, -2.0))
    assert [layer.rel for layer in d.layers] == [1.0] * 10
    assert [layer.hop for layer in d.layers[:-1]] == [1.0] * 9
    assert [layer.status for layer in d.layers] == ["ok"] * 10
    assert stats.verdict(d)[0].startswith("Healthy")


def test_chain_weights_8_first_layers_exploding() -> None:
    d = stats.diagnose(chain(8.0, -4.0))
    assert [layer.growth for layer in d.layers] == [2.0 ** (10 - i) for i in range(1, 11)]
    assert [layer.hop for layer in d.layers[:-1]] == [2.0] * 9
    assert [layer.hop_bound for layer in d.layers[:-1]] == [2.0] * 9  # 0.25 · |8|
    # growth >= 100: 512, 256, 128; the rest grow less and nothing vanishes toward the output
    assert [layer.status for layer in d.layers] == ["exploding"] * 3 + ["ok"] * 7
    (sentence,) = stats.verdict(d)
    assert sentence.startswith("L1–L3 are exploding: L1's gradient is 512× the output layer's")
    # ×2 per layer: every slope σ′(0) = 0.25, every weight 8
    assert "×2 per layer through 9 layers: σ′ averages 0.25 here (at most 0.25) and the" in sentence
    assert "weights multiply it by 8)" in sentence
    assert "lower the learning rate" in sentence


def test_chain_table_says_so() -> None:
    text = render(view.layer_table(stats.diagnose(chain(1.0, -0.5))))
    rows = {line.split()[0]: line for line in text.splitlines() if line.strip().startswith("L")}
    assert "3.81e-6" in rows["L1"] and "vanishing" in rows["L1"] and "×0.25" in rows["L1"]
    assert "≤0.25" in rows["L1"]
    assert rows["L10"].split()[-1] == "ok"
    text = render(view.layer_table(stats.diagnose(chain(8.0, -4.0))))
    assert "exploding" in text and "×2" in text


# -- the statuses on networks made with the engine -------------------------------------------


def test_fresh_deep_sigmoid_vanishes_without_saturation() -> None:
    d = stats.diagnose(deep("sigmoid"))
    assert [layer.status for layer in d.layers[:3]] == ["vanishing"] * 3
    assert d.layers[-1].status == "ok" and d.layers[-2].status in ("ok", "weak")
    assert max(layer.saturated or 0 for layer in d.layers) < 0.05
    # each sigmoid passes back at most 0.25 × ‖W next‖: the measured hop obeys the bound
    for layer in d.layers[:-1]:
        assert layer.hop <= layer.hop_bound * (1 + 1e-12)


def test_fresh_deep_relu_does_not_vanish() -> None:
    for seed in range(3):
        found = statuses(deep("relu", seed=seed))
        assert "vanishing" not in found and "exploding" not in found, found


def test_output_layer_never_saturated_nor_vanishing() -> None:
    # A confident sigmoid output (every output at 0.999...) is success, not saturation.
    X = np.array([[1.0], [2.0], [3.0]])
    samples = network(
        [np.array([[1.0]]), np.array([[9.0]])],
        [np.zeros(1), np.zeros(1)],
        ["tanh", "sigmoid"],
        X,
        np.ones((3, 1)),
    )
    d = stats.diagnose(samples)
    assert d.layers[-1].saturated == 1.0
    assert d.layers[-1].status not in ("saturated", "dead", "vanishing")


def test_hidden_layer_saturated() -> None:
    X = np.array([[1.0], [-1.0], [2.0], [-2.0]])
    T = np.array([[1.0], [0.0], [1.0], [0.0]])
    samples = network(
        [np.array([[10.0], [-10.0]]), np.array([[1.0, 1.0]])],
        [np.zeros(2), np.zeros(1)],
        ["sigmoid", "sigmoid"],
        X,
        T,
    )
    d = stats.diagnose(samples)
    assert d.layers[0].saturated == 1.0
    # every unit flips between the two ends with the input: saturated, yet not dead
    assert d.layers[0].dead == 0.0
    assert d.layers[0].status in ("saturated", "vanishing")


def test_dead_relu_units() -> None:
    X = np.array([[1.0], [2.0], [3.0]])
    W1 = np.array([[-1.0], [-2.0], [-3.0], [1.0]])  # three units negative for every input
    samples = network(
        [W1, np.ones((1, 4))],
        [np.zeros(4), np.zeros(1)],
        ["relu", "linear"],
        X,
        np.array([[1.0], [0.0], [1.0]]),
    )
    d = stats.diagnose(samples)
    assert d.layers[0].dead_units == 3 and d.layers[0].dead == 0.75
    assert d.layers[0].status == "dead"
    assert any(line.startswith("L1: most ReLU units are dead (3/4") for line in stats.verdict(d))


def _scaled(samples: list[LayerSample], factor: float) -> list[LayerSample]:
    for s in samples:
        s.weight_grads = s.weight_grads * factor
        s.bias_grads = s.bias_grads * factor
    return samples


def test_converged_network_is_not_vanishing() -> None:
    # Tiny gradients everywhere, uneven between layers, outputs that vary: converged.
    samples = _scaled(deep("sigmoid", depth=4), 1e-6)
    d = stats.diagnose(samples)
    assert d.at_rest and not d.stalled
    assert {layer.status for layer in d.layers} == {"converged"}
    assert any(line.startswith("Converged") for line in stats.verdict(d))


def test_stuck_at_the_mean_is_stalled() -> None:
    # Outputs equal for every sample (the net ignores its input) and gradients ~ 0.
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    T = np.array([[0.0], [1.0], [0.0], [1.0]])
    samples = network(
        [np.array([[0.0]]), np.array([[0.0]])],
        [np.zeros(1), np.zeros(1)],
        ["sigmoid", "sigmoid"],
        X,
        T,
    )
    d = stats.diagnose(samples)
    assert d.output_spread == 0.0 and d.stalled
    assert {layer.status for layer in d.layers} == {"stalled"}
    assert any("stuck at the mean prediction" in line for line in stats.verdict(d))


def test_nan_names_the_first_layer_in_forward_order() -> None:
    samples = deep("relu", depth=4)
    samples[1].pre_activations = samples[1].pre_activations.copy()
    samples[1].pre_activations[0, 0] = np.inf
    samples[3].weight_grads = samples[3].weight_grads * np.nan
    d = stats.diagnose(samples)
    assert d.first_nonfinite == (2, "pre-activations")
    assert d.layers[1].status == "NaN" and d.layers[3].status == "NaN"
    assert d.layers[1].nonfinite == 1
    assert stats.verdict(d)[0].startswith(
        "NaN/inf first appeared in layer L2 (its pre-activations)"
    )
    # only gradients: the backward pass meets the output layer first
    samples = deep("relu", depth=4)
    samples[2].bias_grads = samples[2].bias_grads * np.nan
    assert stats.diagnose(samples).first_nonfinite == (3, "gradients")


def test_update_data_and_grad_data() -> None:
    samples = chain(1.0, -0.5, n=3)
    samples[0].previous_weights = np.array([[1.001]])
    d = stats.diagnose(samples)
    assert d.layers[0].update_data == pytest.approx(0.001)
    assert d.layers[1].update_data is None
    assert d.layers[2].grad_data == 0.125  # ‖g‖/‖w‖ = 0.125 / 1


def test_history_heat_map_and_first_epochs() -> None:
    snaps = [(0, chain(1.0, -0.5)), (10, chain(4.0, -2.0)), (20, chain(8.0, -4.0))]
    bad = chain(8.0, -4.0)
    bad[0].weights = np.array([[np.nan]])
    snaps.append((30, bad))
    history = stats.history(snaps)
    lines = stats.verdict(history[-1][1], history)
    assert lines[0].startswith(
        "NaN/inf first appeared in layer L1 (its weights) by the end of epoch 30"
    )
    # L1 is NaN by now; L2 and L3 still explode, as they have since epoch 20
    assert lines[1].startswith("L2–L3 are exploding (first at epoch 20): L2's gradient is 256×")
    calmed = stats.history([*snaps[:3], (30, chain(4.0, -2.0))])
    lines = stats.verdict(calmed[-1][1], calmed)
    assert lines[0].startswith("L1–L3 are exploding at epoch 20: L1's gradient is 512×")
    found = stats.failures(history[-1][1], history)
    assert found["NaN"] == ["L1"] and found["exploding"] == ["L1", "L2", "L3"]
    assert "vanishing" not in found  # only at epoch 0: what counts is the final state
    text = render(view.heat_map(history))
    rows = {line.split()[0]: line for line in text.splitlines() if line.startswith("L")}
    assert rows["L1"].split()[2] == "▁▆█!"  # log scale 4.8e-7 .. 64, then NaN
    assert "4.8e-7" in rows["L1"]


def test_json_round_trip_keeps_nan_and_none() -> None:
    samples = chain(1.0, -0.5, n=3)
    samples[1].activations = np.array([[np.nan]])
    d = stats.diagnose(samples, epoch=7)
    text = json.dumps(d.to_dict(), allow_nan=False)  # valid JSON: no bare NaN
    back = schema.read_diagnosis(json.loads(text))
    assert back.epoch == 7 and back.first_nonfinite == d.first_nonfinite
    assert math.isnan(back.layers[1].act_mean)
    assert back.layers[2].hop is None
    assert [lay.status for lay in back.layers] == [lay.status for lay in d.layers]
    with pytest.raises(InputError, match="miss"):
        schema.read_layer_stats({"index": 1})


def test_bad_input_is_an_input_error() -> None:
    with pytest.raises(InputError, match="no layers"):
        stats.diagnose([])
    samples = chain(1.0, -0.5, n=2)
    samples[1].activation = "swish"
    with pytest.raises(InputError, match="unknown activation 'swish'"):
        stats.diagnose(samples)


def test_parameter_grads_names_and_values() -> None:
    params = stats.parameter_grads(chain(1.0, -0.5, n=2))
    assert [p.name for p in params] == ["L1.N1.w0", "L1.N1.b", "L2.N1.w0", "L2.N1.b"]
    assert params[0].grad == 0.125 * 0.25 and params[1].grad == 0.25 * 0.25
    text = render(view.params_table(params))
    assert "least credit: L1.N1.w0 (0.031)" in text


# -- rendering -------------------------------------------------------------------------------


def test_log_bar_separates_small_gradients() -> None:
    bars = [view.log_bar(x).plain.rstrip() for x in (1.0, 1e-2, 1e-6, 1e-12, 0.0)]
    assert bars[0] == "█" * 8
    assert len(bars[1]) > len(bars[2]) > 0  # 1e-2 and 1e-6 differ, neither is empty
    assert bars[3] == "▏" and bars[4] == "·"
    assert view.log_bar(math.nan).plain == "nan" and view.log_bar(None).plain == ""


def test_layer_names_are_not_markup() -> None:
    samples = chain(1.0, -0.5, n=2)
    samples[0].name = "[bold]x[/]"
    text = render(view.report(stats.diagnose(samples), ["[red]kept[/red]"]))
    assert "[bold]x[/]" in text and "[red]kept[/red]" in text


def test_verdict_splits_the_factor_into_slope_and_weights_by_hand() -> None:
    """A chain of one-unit sigmoid layers, each weight 2.2 and each bias chosen so every
    activation is p with σ′ = p(1 − p) = 0.2: by hand, δ shrinks by σ′·w = 0.2 × 2.2 =
    0.44 per layer, and every layer's input is p, so the weight gradients do too."""
    p = (1 + math.sqrt(0.2)) / 2  # p(1 − p) = 0.2
    z = math.log(p / (1 - p))
    w = 2.2
    depth = 8
    net = nn.Network([1] * (depth + 1), ["sigmoid"] * depth)
    net.set_flat([w, z - w * p] * depth)
    samples = nn.layer_samples(net, np.array([[p]]), np.array([0.0]))
    for sample in samples:  # the premise: every activation is p
        assert sample.activations[0, 0] == pytest.approx(p, rel=1e-12)
    lines = stats.verdict(stats.diagnose(samples))
    sentence = next(line for line in lines if "vanishing" in line)
    assert (
        "about ×0.44 per layer: σ′ averages 0.2 here (at most 0.25) and the weights "
        "multiply it by 2.2" in sentence
    ), sentence


# -- the one status table: help and the manual are made from it ------------------------------


def test_the_manual_s_status_table_is_the_one_in_stats() -> None:
    """The manual's "Statuses and their thresholds" table (docs/manual/grads.md) is
    `stats.status_markdown()` byte for byte: change a threshold or a rule and this fails
    until the manual follows."""
    from pathlib import Path

    page = Path(__file__).parent.parent / "docs" / "manual" / "grads.md"
    section = page.read_text(encoding="utf-8").split("## Statuses and their thresholds\n", 1)[1]
    table = section[section.index("| status |") :].split("\n\n", 1)[0] + "\n"
    assert table == stats.status_markdown()


def test_grads_help_lists_the_statuses_of_the_table() -> None:
    from click.testing import CliRunner

    from gradviz.cli import cli

    result = CliRunner().invoke(cli, ["grads", "--help"], terminal_width=100)
    assert result.exit_code == 0
    for line in stats.status_help().splitlines():
        assert line.strip() in result.output
    assert "0.0001" in result.output and "0.97" in result.output


def test_the_status_table_names_real_thresholds_and_its_rules_read_them() -> None:
    assert tuple(s.name for s in stats.STATUS_TABLE) == stats.STATUSES
    assert stats.STATUSES[-1] == "ok"


def test_a_changed_threshold_changes_the_words(monkeypatch) -> None:
    """The words are templates over the constants, not the numbers typed in again."""
    monkeypatch.setattr(stats, "EXPLODING_GROWTH", 1e3)
    monkeypatch.setattr(stats, "DEAD_FRACTION", 0.75)
    assert "rms >= 1000x the output layer's" in stats.status_help()
    assert "≥ 75% of the units" in stats.status_markdown()


def test_the_file_schema_declares_every_field_of_a_layer() -> None:
    """schema.LAYER_FIELDS, read off LayerStats, is the schema a saved model's statistics
    are read with: every field in order, each of the kind its type says."""
    from dataclasses import fields

    assert list(schema.LAYER_FIELDS) == [f.name for f in fields(stats.LayerStats)]
    kinds = {"index": "count", "is_output": "flag", "rms": "number", "hop": "number?"}
    kinds |= {"act_mean": "signed", "nonfinite_in": "text?", "status": "text"}
    assert {name: schema.LAYER_FIELDS[name] for name in kinds} == kinds
    assert schema.DIAGNOSIS_FIELDS["epoch"] == "count?"
    assert "layers" not in schema.DIAGNOSIS_FIELDS


# -- many moments at once ----------------------------------------------------------------


def _moments() -> list[tuple[int, list[LayerSample]]]:
    """Moments of three networks (two shapes of moment per network: with and without the
    weights before the last update), one with a NaN, one all zeros, one a single example."""
    from gradviz.batched import Batched
    from gradviz.spec import PRESETS, spec_from_mapping
    from gradviz.train import load_data

    rng = np.random.default_rng(3)
    moments = []
    for name in ("deep-sigmoid", "deep-relu", "xor"):
        spec = spec_from_mapping(PRESETS[name])
        data, network = load_data(spec), nn.Network.from_spec(spec)
        batched, P = Batched(network), np.array(network.flat())
        for trial in range(5):
            Q = P * (1 + trial) + rng.normal(0, trial, P.shape)
            if trial == 3:
                Q[2] = np.nan
            if trial == 4:
                Q[:] = 0.0
            rows = 1 if trial == 2 else data.size
            with np.errstate(all="ignore"):
                samples = batched.samples(Q, data.X[:rows], data.Y[:rows], P if trial else None)
            moments.append((10 * trial, samples))
    return moments


def test_moments_diagnosed_together_get_the_numbers_each_gets_alone() -> None:
    """A training's moments are reduced together (one numpy call per quantity over all of
    them): each moment's numbers must not depend on the others in the call."""
    moments = _moments()
    together = stats.diagnose_all(moments)
    shuffled = stats.diagnose_all(moments[::-1])[::-1]
    for (epoch, samples), both, reversed_ in zip(moments, together, shuffled, strict=True):
        alone = stats.diagnose(samples, epoch=epoch)
        assert json.dumps(both.to_dict()) == json.dumps(alone.to_dict())
        assert json.dumps(reversed_.to_dict()) == json.dumps(alone.to_dict())
    assert any(d.first_nonfinite is not None for d in together)
    assert stats.diagnose_all([]) == []


def test_each_moments_numbers_are_its_own_arrays_reduced() -> None:
    """Spot checks of the stacked reductions against numpy on each moment's own arrays."""
    moments = _moments()
    for (_, samples), diagnosis in zip(moments, stats.diagnose_all(moments), strict=True):
        for sample, layer in zip(samples, diagnosis.layers, strict=True):
            g = sample.weight_grads
            with np.errstate(all="ignore"):
                assert layer.rms == pytest.approx(np.sqrt(np.mean(g * g)), rel=1e-15, nan_ok=True)
                assert layer.act_std == pytest.approx(np.std(sample.activations), nan_ok=True)
                bad = int(np.sum(~np.isfinite(g)) + np.sum(~np.isfinite(sample.weights)))
            assert layer.nonfinite >= bad
            assert layer.batch == len(sample.activations)


def test_layers_of_one_kind_diagnosed_together_get_the_numbers_each_gets_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Layers of one kind (deep-sigmoid's eight 16x16 hidden layers, at every moment) are
    stacked into one call: a layer's numbers must not depend on the layers beside it in
    the stack. BLOCK_FLOATS = 1 computes every layer in a call of its own."""
    moments = _moments()
    kinds = [stats._layer_kind(sample) for _, samples in moments for sample in samples]
    assert max(kinds.count(kind) for kind in kinds) >= 8  # a stack to get wrong
    monkeypatch.setattr(stats, "BLOCK_FLOATS", 2**40)
    together = [json.dumps(d.to_dict()) for d in stats.diagnose_all(moments)]
    monkeypatch.setattr(stats, "BLOCK_FLOATS", 1)
    alone = [json.dumps(d.to_dict()) for d in stats.diagnose_all(moments)]
    assert together == alone


def test_nonfinite_counts_every_nan_and_inf_of_a_layer() -> None:
    """The count and the first quantity against each layer's own arrays, on moments with
    NaN, and with finite weights so large that their squares overflow (a sum of squares
    that is not finite must not be taken for a NaN)."""
    from gradviz.batched import Batched
    from gradviz.spec import PRESETS, spec_from_mapping
    from gradviz.train import load_data

    spec = spec_from_mapping(PRESETS["deep-relu"])
    data, network = load_data(spec), nn.Network.from_spec(spec)
    batched, P = Batched(network), np.array(network.flat())
    huge = P * 1e200
    with np.errstate(all="ignore"):
        moments = [
            (0, batched.samples(huge, data.X, data.Y, P)),
            (1, batched.samples(np.where(np.arange(P.size) % 7 == 0, np.nan, P), data.X, data.Y)),
        ]
    names = dict(stats._QUANTITIES)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflowing sum is no warning of ours
        diagnoses = stats.diagnose_all(moments)
    for (_, samples), diagnosis in zip(moments, diagnoses, strict=True):
        for sample, layer in zip(samples, diagnosis.layers, strict=True):
            bad = {a: int(np.sum(~np.isfinite(getattr(sample, a)))) for a in names}
            assert layer.nonfinite == sum(bad.values())
            assert layer.nonfinite_in == next((names[a] for a in names if bad[a]), None)
    weights = [sample.weights for sample in moments[0][1]]
    with np.errstate(over="ignore"):
        assert all(np.isfinite(w).all() and not np.isfinite(np.sum(w * w)) for w in weights)
    assert stats.diagnose(moments[1][1]).first_nonfinite == (1, "weights")
