"""Specs, data sets and networks: every spec mistake is one clear error naming its key or
line; networks are graphs of named Values whose gradients agree with finite differences."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from gradviz import data as datasets
from gradviz import nn
from gradviz import spec as specs
from gradviz.checking import gradcheck
from gradviz.engine import Value, topological_order
from gradviz.errors import DataError, InputError, SpecError

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def spec_file(tmp_path: Path, text: str, name: str = "spec.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# -- specs --------------------------------------------------------------------------------


# Presets without a file in samples/ (each a one-line variant, documented by train --help),
# and sample specs that are not presets (a demonstration, run by path).
PRESETS_WITHOUT_A_FILE = {"and", "or", "spiral"}
SAMPLES_NOT_PRESETS = {"exploding"}


def test_presets_and_sample_files_are_one_source() -> None:
    """Every samples/*.toml named like a preset holds exactly the preset's keys and values
    (the TOML table itself, not only the Spec it resolves to), and every preset but the
    listed variants has its file: change one and this fails until the other follows."""
    import tomllib

    files = {path.stem: path for path in SAMPLES.glob("*.toml")}
    assert set(specs.PRESETS) - set(files) == PRESETS_WITHOUT_A_FILE
    assert set(files) - set(specs.PRESETS) == SAMPLES_NOT_PRESETS
    for name in set(files) & set(specs.PRESETS):
        text = files[name].read_text(encoding="utf-8")
        assert tomllib.loads(text) == specs.PRESETS[name], name
        assert specs.load_spec(files[name]) == specs.preset(name)
        assert text.startswith("#"), "each sample says what it demonstrates"


def test_presets_are_valid_and_deep_ones_have_ten_layers() -> None:
    for name in specs.PRESETS:
        spec = specs.preset(name)
        assert spec.layers[-1] == 1
    assert len(specs.preset("deep-sigmoid").layers) - 1 == 10
    assert specs.preset("deep-relu").layers == specs.preset("deep-sigmoid").layers


def test_spec_defaults_and_per_layer_activations() -> None:
    spec = specs.spec_from_mapping({"layers": [2, 3, 3, 1], "data": "xor"})
    assert spec.activations == ("sigmoid", "sigmoid", "sigmoid")
    assert (spec.init, spec.loss, spec.update, spec.seed) == ("default", "mse", "full", 0)
    spec = specs.spec_from_mapping(
        {
            "layers": [2, 3, 3, 1],
            "data": "xor",
            "activation": ["tanh", "relu"],
            "output_activation": "linear",
        }
    )
    assert spec.activations == ("tanh", "relu", "linear")
    spec = specs.spec_from_mapping(
        {"layers": [2, 3, 1], "data": "xor", "activation": ["relu", "tanh"]}
    )
    assert spec.activations == ("relu", "tanh")
    spec = specs.spec_from_mapping({"layers": "2, 5, 1", "data": "xor", "update": "minibatch 2"})
    assert spec.layers == (2, 5, 1) and spec.update == "minibatch" and spec.batch_size == 2


def test_spec_round_trips_through_its_dict() -> None:
    spec = specs.spec_from_mapping(
        {
            "layers": [2, 3, 1],
            "data": {"name": "moons", "size": 30, "noise": 0.2, "seed": 4},
            "clip_norm": 2.0,
            "update": "minibatch 5",
            "record_every": 3,
            "loss": "bce",
        }
    )
    assert specs.spec_from_mapping(spec.to_dict()) == spec


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'layers = [2, 4, 1]\ndata = "xor"\nlerning_rate = 1.0\n',
            "line 3: lerning_rate: unknown key 'lerning_rate' (did you mean 'learning_rate'?)",
        ),
        ('layers = [2, 0, 1]\ndata = "xor"\n', "line 1: layers[1]: 0 is not a positive integer"),
        ('layers = [2, "4", 1]\ndata = "xor"\n', "layers[1]: '4' is not a positive integer"),
        ('layers = [2, true, 1]\ndata = "xor"\n', "layers[1]: True is not a positive integer"),
        (
            'layers = [2, 4, 1]\ndata = "xor"\nactivation = "sigmod"\n',
            "line 3: activation: unknown value 'sigmod' (did you mean 'sigmoid'?)",
        ),
        ('layers = [2, 4, 1]\ndata = "xor"\ninit = "glorot"\n', "line 3: init: unknown value"),
        (
            'layers = [2, 4, 1]\ndata = "xor"\nloss = "bce"\noutput_activation = "relu"\n',
            "loss: bce needs a sigmoid output",
        ),
        (
            'layers = [2, 4, 1]\ndata = "xor"\nupdate = "minibatch"\n',
            'write the batch size after it, e.g. "minibatch 16"',
        ),
        (
            'layers = [2, 4, 1]\ndata = "xor"\nclip_value = 1\nclip_norm = 1\n',
            "line 4: clip_norm: choose one of clip_value and clip_norm",
        ),
        ('layers = [2, 4, 1]\ndata = "xor"\nepochs = 0\n', "line 3: epochs: 0 is out of range"),
        (
            'layers = [2, 4, 1]\ndata = "xor"\nlearning_rate = -1\n',
            "learning_rate: -1 must be a positive number",
        ),
        (
            'layers = [2, 4, 1]\ndata = "xor"\nlearning_rate = nan\n',
            "learning_rate: nan must be a positive number",
        ),
        (
            'layers = [2, 4, 2]\ndata = "xor"\n',
            "the last size is the number of outputs and must be 1",
        ),
        (
            'layers = [2, 4, 1]\ndata = "xr"\n',
            "line 2: data: unknown data set 'xr' (did you mean 'xor'?)",
        ),
        (
            'layers = [2, 4, 1]\n[data]\nname = "circle"\nsize = 0\n',
            "line 4: data.size: 0 is out of range",
        ),
        (
            'layers = [2, 4, 1]\n[data]\nname = "circle"\ncolor = 1\n',
            "line 4: data.color: unknown key",
        ),
        (
            'layers = [2, 4, 1]\n[data]\nname = "xor"\nsize = 10\n',
            "data.size: the xor data set is fixed",
        ),
        ("layers = [2, 4, 1]\n", "data: missing"),
        ('data = "xor"\n', "layers: missing"),
        (
            'layers = [2, 4, 1]\ndata = "xor"\nactivation = ["relu", "tanh", "relu"]\n',
            "activation: 3 activations for 1 hidden layer(s)",
        ),
    ],
)
def test_spec_mistakes_are_one_line_errors_naming_the_key(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = spec_file(tmp_path, text)
    with pytest.raises(SpecError) as info:
        specs.load_spec(path)
    message = info.value.render()
    assert expected in message
    assert "\n" not in message
    assert message.startswith(str(path))
    assert info.value.exit_code == 2


def test_invalid_toml_names_the_line(tmp_path: Path) -> None:
    path = spec_file(tmp_path, 'layers = [2, 4, 1]\ndata = "xor\n')
    with pytest.raises(SpecError, match=r"invalid TOML: .*line 2"):
        specs.load_spec(path)


def test_missing_spec_file() -> None:
    with pytest.raises(SpecError, match="no such spec file"):
        specs.load_spec(Path("/nonexistent/spec.toml"))


def test_huge_sizes_are_refused_before_anything_is_built() -> None:
    with pytest.raises(SpecError, match="parameters is more than the 5,000 allowed"):
        specs.spec_from_mapping({"layers": [2, 1000, 1000, 1], "data": "xor"})
    with pytest.raises(SpecError, match="units is more than the 1024 allowed"):
        specs.spec_from_mapping({"layers": [2, 10**9, 1], "data": "xor"})
    with pytest.raises(SpecError, match="layers is more than the 64 allowed"):
        specs.spec_from_mapping({"layers": [2] * 100 + [1], "data": "xor"})
    with pytest.raises(SpecError, match="out of range"):
        specs.spec_from_mapping({"layers": [2, 1], "data": {"name": "circle", "size": 10**12}})
    with pytest.raises(SpecError, match="epochs: 1,000,000,000 is out of range"):
        specs.spec_from_mapping({"layers": [2, 1], "data": "xor", "epochs": 10**9})


def test_options_override_a_spec_and_errors_name_the_option() -> None:
    names = {"layers": "--layers", "learning_rate": "--lr", "data": "--data"}
    spec = specs.resolve_spec("xor", {"learning_rate": 0.25, "layers": "2,3,1"}, names)
    assert spec.learning_rate == 0.25 and spec.layers == (2, 3, 1) and spec.data.name == "xor"
    with pytest.raises(SpecError, match=r"^--layers: 'x' is not a positive integer$"):
        specs.resolve_spec("xor", {"layers": "2,x,1"}, names)
    with pytest.raises(SpecError, match=r"^--lr: "):
        specs.resolve_spec(None, {"layers": "2,1", "data": "xor", "learning_rate": 0.0}, names)
    with pytest.raises(SpecError, match=r"or at least --data$"):
        specs.resolve_spec(None, {"layers": "2,1"}, names)
    with pytest.raises(SpecError, match="neither a spec file nor a built-in network"):
        specs.resolve_spec("xorr", {}, names)


# -- data sets ----------------------------------------------------------------------------


def test_builtin_data_sets() -> None:
    xor = datasets.load(datasets.DataSpec("xor"))
    assert xor.X.tolist() == [[0, 0], [0, 1], [1, 0], [1, 1]]
    assert xor.Y.tolist() == [0, 1, 1, 0]
    assert datasets.load(datasets.DataSpec("and")).Y.tolist() == [0, 0, 0, 1]
    assert datasets.load(datasets.DataSpec("or")).Y.tolist() == [0, 1, 1, 1]
    circle = datasets.load(datasets.DataSpec("circle", size=500, seed=3))
    assert circle.X.shape == (500, 2) and np.all(np.abs(circle.X) <= 1.5)
    inside = np.sum(circle.X**2, axis=1) < 1
    assert np.array_equal(circle.Y == 1, inside)
    assert 0.25 < circle.Y.mean() < 0.45  # π/9 ≈ 0.35 of the square
    again = datasets.load(datasets.DataSpec("circle", size=500, seed=3))
    assert np.array_equal(circle.X, again.X)
    other = datasets.load(datasets.DataSpec("circle", size=500, seed=4))
    assert not np.array_equal(circle.X, other.X)
    for name in ("moons", "spiral"):
        d = datasets.load(datasets.DataSpec(name, size=101))
        assert d.X.shape == (101, 2) and set(d.Y.tolist()) == {0.0, 1.0}


@pytest.mark.parametrize("seed", [0, 1, 3, 2**32 + 5, 2**63 - 1])
def test_circle_points_are_numpys_draws(seed: int) -> None:
    """`default_rng(seed).uniform(-1.5, 1.5, (n, 2))` bit for bit, labelled by the circle."""
    for size in (1, 2, 7, 80, 10_001):
        circle = datasets.load(datasets.DataSpec("circle", size=size, seed=seed))
        wanted = np.random.default_rng(seed).uniform(-1.5, 1.5, size=(size, 2))
        assert circle.X.dtype == np.float64 and circle.X.shape == (size, 2)
        assert circle.X.tobytes() == wanted.tobytes()
        assert np.array_equal(circle.Y == 1, np.sum(wanted**2, axis=1) < 1)


def test_csv_with_header_and_label_column(tmp_path: Path) -> None:
    path = tmp_path / "points.csv"
    path.write_text("a,label,b\n1,0,2\n3,1,4.5\n")
    d = datasets.read_csv(path, label="label")
    assert d.feature_names == ("a", "b")
    assert d.X.tolist() == [[1, 2], [3, 4.5]] and d.Y.tolist() == [0, 1]
    path.write_text("1,2,0\n3,4,1\n")  # no header: the last column is the label
    d = datasets.read_csv(path)
    assert d.feature_names == ("x0", "x1") and d.Y.tolist() == [0, 1]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("x,y,label\n1,2,0\n1,oops,1\n", "line 3: 'oops' in column 'y' is not a number"),
        ("x,y,label\n1,2,0\n1,2\n", "line 3: 2 fields, expected 3"),
        ("x,y,label\n1,2,0\n1,2,3\n", "line 3: label '3' in column 'label' is not 0 or 1"),
        ("x,y,label\n1,nan,0\n", "line 2: 'nan' in column 'y' is not finite"),
        ("", "has no rows"),
        ("x,y,label\n", "has a header but no data rows"),
        ('x,y,label\n"1,2,0\n', "invalid CSV|fields"),
    ],
)
def test_csv_mistakes_name_the_line(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(DataError, match=expected):
        datasets.read_csv(path)


def test_csv_missing_and_not_utf8(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no such CSV file"):
        datasets.read_csv(tmp_path / "missing.csv")
    path = tmp_path / "latin.csv"
    path.write_bytes(b"x,\xe9t\xe9,label\n1,2,0\n")
    with pytest.raises(DataError, match="not UTF-8"):
        datasets.read_csv(path)


@pytest.mark.parametrize(
    ("reader", "error", "what"),
    [
        (lambda p: datasets.read_csv(p), DataError, "CSV file"),
        (lambda p: specs.load_spec(p), SpecError, "spec file"),
        (lambda p: __import__("gradviz.model").model.load_model(p), InputError, "model file"),
    ],
)
def test_every_file_is_read_through_one_capped_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader, error, what: str
) -> None:
    """CSV, spec and model files: one reader (`gradviz.files.read_capped`), one set of
    messages; a file larger than its limit is refused by its size before it is read."""
    from gradviz import files

    limits: list[int] = []
    real = files.read_capped

    def spy(path, limit, error_class, name):
        limits.append(limit)
        return real(path, 10, error_class, name)  # every limit 10 bytes, to test it

    for module in ("gradviz.data", "gradviz.spec", "gradviz.schema"):
        monkeypatch.setattr(f"{module}.read_capped", spy)
    with pytest.raises(error, match=f"no such {what}"):
        reader(tmp_path / "missing")
    big = tmp_path / "big"
    big.write_bytes(b"x" * 11)
    with pytest.raises(error, match=f"11 bytes is larger than the 10 allowed for a {what}"):
        reader(big)
    with pytest.raises(error, match=f"is a folder, not a {what}"):
        reader(tmp_path)
    assert len(limits) == 3


def test_a_file_that_goes_on_is_cut_at_the_limit() -> None:
    from gradviz.files import read_capped

    with pytest.raises(DataError, match="more than the 1,000 bytes allowed for a CSV file"):
        read_capped(Path("/dev/zero"), 1000, DataError, "CSV file")  # size 0, endless


def test_one_json_encoding_of_non_finite_numbers() -> None:
    from gradviz import numbers, stats
    from gradviz.render import json as graph_json

    assert graph_json.number is numbers.json_number
    assert [numbers.json_number(x) for x in (1.5, math.nan, math.inf, -math.inf)] == [
        1.5, "nan", "inf", "-inf",
    ]  # fmt: skip
    for x in (0.1, -2.0, math.inf, -math.inf):
        assert numbers.from_json_number(numbers.json_number(x)) == x
    assert math.isnan(numbers.from_json_number("nan"))  # type: ignore[arg-type]
    for bad in ("NaN", "abc", True, None, [1.0]):
        assert numbers.from_json_number(bad) is None
    assert numbers.from_json_number(10**400) == math.inf
    nested = {"a": [np.float64("nan"), (np.int64(3), np.bool_(True))], 2: np.array([1.0, np.inf])}
    assert numbers.json_safe(nested) == {"a": ["nan", [3, True]], "2": [1.0, "inf"]}
    layer = stats.diagnose(
        nn.layer_samples(nn.Network([1, 1], ["sigmoid"]), np.array([[0.0]]), np.array([1.0]))
    ).layers[0]
    layer.act_std = math.nan
    assert layer.to_dict()["act_std"] == "nan"


# -- networks -----------------------------------------------------------------------------


def test_parameters_are_named_leaves_in_a_fixed_order() -> None:
    net = nn.Network((2, 3, 1), ("tanh", "sigmoid"))
    names = [p.label for p in net.parameters()]
    assert names[:3] == ["L1.N1.w0", "L1.N1.w1", "L1.N1.b"]
    assert names[-4:] == ["L2.N1.w0", "L2.N1.w1", "L2.N1.w2", "L2.N1.b"]
    assert len(names) == len(set(names)) == net.n_parameters == 13
    assert all(p.is_leaf for p in net.parameters())


@pytest.mark.parametrize("init", specs.INITS)
def test_initialisation_is_deterministic_and_scaled(init: str) -> None:
    a = nn.Network((8, 50, 1), ("relu", "sigmoid"))
    b = nn.Network((8, 50, 1), ("relu", "sigmoid"))
    a.initialise(init, seed=7)
    b.initialise(init, seed=7)
    assert a.flat() == b.flat()
    b.initialise(init, seed=8)
    assert a.flat() != b.flat()
    W, biases = a.weights()[0]
    if init == "default":
        assert np.max(np.abs(W)) <= math.sqrt(2 / 8) and np.all(biases == 0)
        assert np.max(np.abs(W)) > 0.9 * math.sqrt(2 / 8)
    if init == "xavier":
        assert np.max(np.abs(W)) <= math.sqrt(6 / 58)
    if init == "he":
        assert abs(np.std(W) - math.sqrt(2 / 8)) < 0.1
    if init == "uniform1":
        assert np.max(np.abs(W)) <= 1 and np.any(biases != 0)


def numpys_initial_weights(
    sizes: tuple[int, ...], scheme: str, seed: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The initial weights as the schemes define them, drawn by numpy's generator (spawn key
    0 of the seed): a layer's weights, then uniform1's biases."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0,)))
    weights = []
    for n_in, n_out in itertools.pairwise(sizes):
        if scheme == "he":
            W = rng.normal(0.0, math.sqrt(2.0 / n_in), size=(n_out, n_in))
        else:
            bound = {"default": math.sqrt(2 / n_in), "xavier": math.sqrt(6 / (n_in + n_out))}
            W = rng.uniform(-bound.get(scheme, 1.0), bound.get(scheme, 1.0), size=(n_out, n_in))
        b = rng.uniform(-1.0, 1.0, size=n_out) if scheme == "uniform1" else np.zeros(n_out)
        weights.append((W, b))
    return weights


SPECS = {
    **{f"preset {name}": specs.preset(name) for name in specs.PRESETS},
    **{f"samples/{path.name}": specs.load_spec(path) for path in sorted(SAMPLES.glob("*.toml"))},
}


def assert_weights_are(net: nn.Network, wanted: list[tuple[np.ndarray, np.ndarray]]) -> None:
    for (W, b), (W0, b0) in zip(net.weights(), wanted, strict=True):
        assert W.shape == W0.shape and W.tobytes() == W0.tobytes()
        assert b.shape == b0.shape and b.tobytes() == b0.tobytes()


@pytest.mark.parametrize("init", specs.INITS)
@pytest.mark.parametrize("name", SPECS)
def test_initial_weights_are_numpys_draws_for_every_spec_and_scheme(name: str, init: str) -> None:
    """Every preset and sample's network, in every init scheme."""
    spec = SPECS[name]
    net = nn.Network(spec.layers, spec.activations, spec.loss, spec.l2)
    net.initialise(init, spec.seed)
    assert_weights_are(net, numpys_initial_weights(spec.layers, init, spec.seed))


@pytest.mark.parametrize("seed", [1, 7, 2**32, 2**63 - 1])
def test_initial_weights_are_numpys_draws_for_other_seeds(seed: int) -> None:
    for init in specs.INITS:
        net = nn.Network((3, 5, 1, 4, 1), ("tanh", "relu", "sigmoid", "linear"))
        net.initialise(init, seed)
        assert_weights_are(net, numpys_initial_weights((3, 5, 1, 4, 1), init, seed))


def test_a_neuron_computes_micrograds_sum_order_and_the_loss() -> None:
    net = nn.Network((2, 1), ("sigmoid",))
    net.set_weights([(np.array([[0.5, -2.0]]), np.array([0.25]))])
    built = nn.example_graph(net, [1.5, 0.75], 1.0)
    z = (0.25 + 0.5 * 1.5) + -2.0 * 0.75
    out = 1 / (1 + math.exp(-z))
    assert built.pre[0][0].data == pytest.approx(z)
    assert built.output.data == pytest.approx(out)
    assert built.loss.data == pytest.approx((out - 1.0) ** 2)
    # by hand: dL/dw0 = 2(out - y) σ'(z) x0
    w0 = net.layers[0].neurons[0].weights[0]
    assert w0.grad == pytest.approx(2 * (out - 1) * out * (1 - out) * 1.5)
    labels = {v.label for v in topological_order(built.loss) if v.label}
    assert {"x0", "x1", "y", "L1.N1.w0", "L1.N1.b", "L1.N1.z", "L1.N1.a", "loss"} <= labels


@pytest.mark.parametrize(
    ("activations", "loss"),
    [
        (("sigmoid", "sigmoid", "sigmoid"), "mse"),
        (("tanh", "relu", "linear"), "mse"),
        (("relu", "tanh", "sigmoid"), "bce"),
    ],
)
def test_whole_network_gradients_match_finite_differences(activations, loss) -> None:
    net = nn.Network((3, 4, 3, 1), activations, loss)
    net.initialise("xavier", seed=2)
    built = nn.example_graph(net, [0.3, -0.7, 1.1], 1.0)
    rows = gradcheck(built.loss, wrt=net.parameters())
    assert len(rows) == net.n_parameters
    assert not [r.name for r in rows if r.failed]
    assert sum(r.status == "pass" for r in rows) >= net.n_parameters - 2  # relu kinks aside


def test_layer_samples_are_the_mean_gradient_of_the_batch() -> None:
    spec = specs.preset("circle")
    net = nn.Network.from_spec(spec)
    d = datasets.load(spec.data)
    X, Y = d.X[:7], d.Y[:7]
    samples = nn.layer_samples(net, X, Y)
    assert [s.name for s in samples] == ["L1", "L2"]
    assert [s.is_output for s in samples] == [False, True]
    assert samples[0].weights.shape == (8, 2) and samples[0].pre_activations.shape == (7, 8)
    assert samples[1].activations.shape == (7, 1) and samples[1].previous_weights is None
    # the same numbers, one example at a time through the engine, summed in order
    totals = [-0.0] * net.n_parameters
    for x, y in zip(X.tolist(), Y.tolist(), strict=True):
        nn.example_graph(net, x, y)
        totals = [t + p.grad for t, p in zip(totals, net.parameters(), strict=True)]
    flat = np.concatenate(
        [np.concatenate([s.weight_grads, s.bias_grads[:, None]], axis=1).ravel() for s in samples]
    )
    # within rounding: a batch's exp runs through numpy, one example's through math
    np.testing.assert_allclose(flat, [t / 7 for t in totals], rtol=1e-12, atol=0)
    # and against a finite difference of the mean loss for one weight
    mean_loss = _mean_loss(net, X, Y)
    w = net.parameters()[3]
    h = 1e-6
    w.data += h
    up = _mean_loss(net, X, Y)
    w.data -= 2 * h
    down = _mean_loss(net, X, Y)
    w.data += h
    assert mean_loss > 0
    assert samples[0].weight_grads[1, 0] == pytest.approx((up - down) / (2 * h), rel=1e-5)


def _mean_loss(net: nn.Network, X: np.ndarray, Y: np.ndarray) -> float:
    inputs = [Value(X[:, j].copy()) for j in range(X.shape[1])]
    return float(np.mean(net.build(inputs, Value(Y.copy())).loss.data))


def test_layer_samples_in_chunks_give_the_same_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    net = nn.Network.from_spec(specs.preset("moons"))
    d = datasets.load(specs.preset("moons").data)
    whole = nn.layer_samples(net, d.X, d.Y)
    monkeypatch.setattr(nn, "GRAPH_BUDGET", 5000)  # a few rows per chunk
    chunked = nn.layer_samples(net, d.X, d.Y, previous=net.flat())
    for a, b in zip(whole, chunked, strict=True):
        assert np.array_equal(a.weight_grads, b.weight_grads)
        assert np.array_equal(a.activations, b.activations)
        assert np.array_equal(b.previous_weights, a.weights)


def test_layer_samples_rejects_wrong_shapes() -> None:
    net = nn.Network((2, 1), ("sigmoid",))
    with pytest.raises(InputError):
        nn.layer_samples(net, np.zeros((3, 3)), np.zeros(3))


def test_the_spec_names_the_activations_the_network_knows() -> None:
    """spec.py checks names only (it needs no engine); nn.ACTIVATIONS gives their ops."""
    assert tuple(nn.ACTIVATIONS) == specs.ACTIVATION_NAMES
