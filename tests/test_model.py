"""Saved models: plain JSON that round-trips exactly, strict loading with one clear error
per problem, and one example's loss graph drawn at three levels (checked by `dot`)."""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from graphviz_support import system_dot

from gradviz import drawings, nn, stats
from gradviz import model as M
from gradviz import train as T
from gradviz.cli import flag
from gradviz.drawn import network_diagram, to_dot
from gradviz.engine import topological_order
from gradviz.errors import InputError, ModelError
from gradviz.numbers import fmt
from gradviz.render import network as RN
from gradviz.render.diagram import preferred_rankdir
from gradviz.spec import PRESETS, spec_from_mapping


@pytest.fixture(scope="module")
def trained() -> T.Result:
    return T.train(spec_from_mapping({**PRESETS["xor"], "epochs": 300}))


@pytest.fixture
def saved(tmp_path: Path, trained: T.Result) -> Path:
    path = tmp_path / "xor.json"
    M.save(M.from_result(trained), path)
    return path


def test_save_and_load_round_trip_exactly(saved: Path, trained: T.Result) -> None:
    text = saved.read_text()
    raw = json.loads(text)  # plain JSON
    assert raw["format"] == "gradviz-model" and raw["version"] == 1
    assert raw["layers"][0]["weights"][0][0] == trained.network.weights()[0][0][0, 0]
    model = M.load_model(saved)
    assert model.spec == trained.spec
    for (W, b), (W2, b2) in zip(model.weights, trained.network.weights(), strict=True):
        assert np.array_equal(W, W2) and np.array_equal(b, b2)
    assert model.history["loss"] == trained.history.loss
    assert model.history["epochs_run"] == 300
    epochs = [g["epoch"] for g in model.history["gradients"]]
    assert epochs[0] == 0 and epochs[-1] == 300
    assert {"rms", "status", "update_data"} <= set(model.history["gradients"][-1]["layers"][0])
    assert model.network().flat() == trained.network.flat()
    assert T.evaluate(model.network(), model.dataset()).outputs == trained.final.outputs


def test_saving_is_atomic_and_leaves_no_temporary_files(saved: Path, trained: T.Result) -> None:
    M.save(M.from_result(trained), saved)  # over an existing file
    assert sorted(p.name for p in saved.parent.iterdir()) == ["xor.json"]


def test_nonfinite_history_is_saved_as_strings(tmp_path: Path) -> None:
    spec = spec_from_mapping(
        {
            **PRESETS["circle"],
            "activation": "relu",
            "output_activation": "linear",
            "learning_rate": 1e6,
            "epochs": 2,
        }
    )
    result = T.train(spec, keep_going=True)
    path = tmp_path / "nan.json"
    M.save(M.from_result(result), path)
    raw = json.loads(path.read_text(), parse_constant=_refuse)  # strict JSON: no NaN literal
    assert raw["history"]["loss"] == ["nan", "nan"]
    assert raw["history"]["stopped"].startswith("training diverged at epoch 1")
    # A model that says it diverged loads with its NaN weights, shown as they are...
    model = M.load_model(path)
    saved = [x for W, b in model.weights for x in (*W.ravel(), *b)]
    trained = [x for W, b in result.network.weights() for x in (*W.ravel(), *b)]
    assert np.array_equal(saved, trained, equal_nan=True) and np.isnan(saved).any()
    loss, _, _ = model.curves()
    assert all(np.isnan(loss))
    last = stats.diagnose(model.layer_samples())
    assert "NaN" in [layer.status for layer in last.layers]
    # ...one that does not say so is damaged
    raw["history"]["stopped"] = None
    path.write_text(json.dumps(raw))
    with pytest.raises(ModelError, match=r"is not finite \(the model diverged\)"):
        M.load_model(path)


def _refuse(constant: str) -> None:
    raise AssertionError(f"non-standard JSON constant {constant}")


def _mutate(saved: Path, change) -> Path:
    raw = json.loads(saved.read_text())
    change(raw)
    saved.write_text(json.dumps(raw))
    return saved


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda r: r.pop("layers"), "layers: missing"),
        (lambda r: r.pop("history"), "history: missing"),
        (lambda r: r.update(format="other"), "not a gradviz model"),
        (lambda r: r.update(version=99), "version: 99 is not a version"),
        (lambda r: r["layers"].pop(), "layers: expected 2 layers"),
        (
            lambda r: r["layers"][0]["weights"].pop(),
            r"layers\[0\] \(L1\)\.weights: expected 4 rows",
        ),
        (
            lambda r: r["layers"][1]["weights"][0].append(1.0),
            r"layers\[1\] \(L2\)\.weights\[0\]: expected 4 numbers",
        ),
        (
            lambda r: r["layers"][0]["weights"][2].__setitem__(1, "x"),
            r"weights\[2\]\[1\]: L1\.N3\.w1 = \"x\" is not a number",
        ),
        (lambda r: r["layers"][0]["weights"][0].__setitem__(0, True), "is not a number"),
        (
            lambda r: r["layers"][1]["biases"].__setitem__(0, "nan"),
            r"biases\[0\]: L2\.N1\.b = \"nan\" is not finite",
        ),
        (lambda r: r["layers"][0].update(activation="relu"), "activation: does not match the spec"),
        (lambda r: r["spec"].update(layers=[2, 0, 1]), r"spec\.layers\[1\]: 0 is not a positive"),
        (lambda r: r["spec"].update(colour=1), r"spec\.colour: unknown key"),
        (lambda r: r["history"].update(loss="high"), "history.loss: expected a list of numbers"),
        # the recorded statistics, field by field (they were a TypeError or ValueError)
        (
            lambda r: r["history"]["gradients"][0]["layers"][0].update(rms="abc"),
            r'history\.gradients\[0\]\.layers\[0\]\.rms: expected a number ≥ 0, got "abc"',
        ),
        (
            lambda r: r["history"]["gradients"][0].update(epoch="zz"),
            r'history\.gradients\[0\]\.epoch: expected a whole number ≥ 0, got "zz"',
        ),
        (
            lambda r: r["history"]["gradients"][1]["layers"][1].update(hop=-1),
            r"history\.gradients\[1\]\.layers\[1\]\.hop: expected a number ≥ 0, got -1",
        ),
        (
            lambda r: r["history"]["gradients"][0].update(at_rest="no"),
            r'history\.gradients\[0\]\.at_rest: expected true or false, got "no"',
        ),
        (
            lambda r: r["history"]["gradients"][0]["layers"][0].update(status="fine"),
            r'history\.gradients\[0\]\.layers\[0\]\.status: "fine" is not a status',
        ),
        (
            lambda r: r["history"]["gradients"][0]["layers"][0].update(name="L1\x1b[2J"),
            r"layers\[0\]\.name: expected a short line of text",
        ),
        (
            lambda r: r["history"]["gradients"][0]["layers"][0].pop("dead"),
            r"history\.gradients\[0\]\.layers\[0\]\.dead: missing",
        ),
        (
            lambda r: r["history"]["gradients"][0]["layers"][0].update(is_output=True),
            r"history\.gradients\[0\]\.layers\[0\]: expected layer 1, the output layer last",
        ),
        (
            lambda r: r["history"]["gradients"][0].update(first_nonfinite={"layer": "x"}),
            r"history\.gradients\[0\]\.first_nonfinite\.layer: expected a whole number",
        ),
        (lambda r: r["history"]["gradients"].append(7), r"history\.gradients\[\d+\]: expected an"),
        (lambda r: r["history"].update(every=0), "history.every: expected a whole number ≥ 1"),
        (lambda r: r["history"].update(epochs_run="9"), "history.epochs_run: expected a whole"),
        # read as every other text of the file (it named no value before)
        (
            lambda r: r["history"].update(stopped=3),
            "history.stopped: expected a short line of text, got 3",
        ),
        (lambda r: r.update(final={"loss": "low"}), "final: expected an object with the numbers"),
    ],
)
def test_malformed_models_are_one_clear_error(saved: Path, change, expected: str) -> None:
    _mutate(saved, change)
    with pytest.raises(ModelError, match=expected) as info:
        M.load_model(saved)
    assert info.value.exit_code == 2
    assert "\n" not in info.value.render()


def test_nan_literal_and_truncated_and_missing_files(saved: Path, tmp_path: Path) -> None:
    text = saved.read_text()
    raw = json.loads(text)
    raw["layers"][0]["biases"][0] = float("nan")
    saved.write_text(json.dumps(raw))  # Python writes the non-standard NaN literal
    with pytest.raises(ModelError, match=r"L1\.N1\.b = \"NaN\" is not finite"):
        M.load_model(saved)
    saved.write_text(text[: len(text) // 2])
    with pytest.raises(ModelError, match="truncated"):
        M.load_model(saved)
    saved.write_text("not json at all")
    with pytest.raises(ModelError, match="not valid JSON"):
        M.load_model(saved)
    with pytest.raises(ModelError, match="no such model file"):
        M.load_model(tmp_path / "missing.json")
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ModelError, match="not UTF-8"):
        M.load_model(tmp_path / "binary.json")


# -- one example's graph ------------------------------------------------------------------


def test_network_loss_graph_has_named_params_and_layer_clusters(saved: Path) -> None:
    model = M.load_model(saved)
    graph = M.network_loss_graph(model, (0.0, 1.0))
    assert graph.y == 1.0  # looked up in the data set
    nodes = topological_order(graph.loss)
    labels = {v.label for v in nodes if v.label}
    assert {"L1.N1.w0", "L1.N4.b", "L2.N1.w3", "x0", "x1", "y", "loss"} <= labels
    assert {graph.clusters.get(v) for v in nodes} == {None, "L1", "L2", "loss"}
    assert all(graph.clusters.get(v) is None for v in graph.built.inputs)
    outputs = T.evaluate(model.network(), model.dataset()).outputs
    assert graph.built.output.data == outputs[1]
    w = next(v for v in nodes if v.label == "L2.N1.w0")
    assert w.grad != 0  # backward was run
    with pytest.raises(InputError, match="not in the data set"):
        M.network_loss_graph(model, (0.5, 0.5))
    assert M.network_loss_graph(model, (0.5, 0.5), y=1.0).y == 1.0
    with pytest.raises(InputError, match="takes 2 inputs"):
        M.network_loss_graph(model, (0.5,), y=1.0)


def test_parse_input() -> None:
    assert M.parse_input("0, 1", 2) == (0.0, 1.0)
    for bad in ("0", "a,b", "1,nan", "1,2,3"):
        with pytest.raises(InputError, match=r"^input ") as info:
            M.parse_input(bad, 2)
        assert info.value.render(flag).startswith("--input ")


def _svg(dot_text: str) -> ET.Element:
    svg = subprocess.run(
        [system_dot(), "-Tsvg"], input=dot_text.encode(), capture_output=True, check=True
    ).stdout
    return ET.fromstring(svg)


@pytest.mark.parametrize("level", RN.LEVELS)
def test_diagrams_at_every_level_render_with_dot(saved: Path, level: str) -> None:
    model = M.load_model(saved)
    graph = M.network_loss_graph(model, (1.0, 0.0))
    diagram = network_diagram(graph, level)
    ids = {n.id for n in diagram.nodes}
    assert all(e.source in ids and e.target in ids for e in diagram.edges)
    svg = _svg(to_dot(diagram))
    text = " ".join(t for t in svg.itertext())
    assert "loss" in text
    if level == "scalar":
        assert "L1.N1.w0" in text and set(diagram.clusters) == {"L1", "L2", "loss"}
    if level == "neuron":
        assert [n.label for n in diagram.nodes if n.kind == "group"] == [
            "L1.N1",
            "L1.N2",
            "L1.N3",
            "L1.N4",
            "L2.N1",
        ]
        assert len(diagram.edges) == 2 * 4 + 4 + 2
        assert "∂L/∂z" in text
    if level == "layer":
        assert [n.label for n in diagram.nodes if n.kind == "group"] == ["inputs", "L1", "L2"]
        assert "status" in text


def _graph(layers: list[int]) -> M.LossGraph:
    acts = ["relu"] * (len(layers) - 2) + ["sigmoid"]
    return M.network_loss_graph(nn.Network(layers, acts, "mse"), (0.0,) * layers[0], y=1.0)


def test_big_networks_collapse_by_themselves() -> None:
    """Nodes first (every scalar up to 400), then the neuron view's edges: a weight
    each, every unit wired to every unit of the next layer, so a 10-layer net of 16
    units (2,098 edges) goes straight to one node per layer."""
    deep = _graph([2, *[16] * 9, 1])
    assert RN.neuron_view_size(deep.network) == (149, 2098)
    level, note = RN.choose_level(deep)
    assert (level, note) == (
        "layer",
        "6,583 scalar nodes is more than 40, and one node per neuron would take 2,098 edges "
        "(more than 100): drawn one node per layer (level)",
    )
    assert RN.choose_level(deep, words=flag)[1].endswith("drawn one node per layer (--level)")
    assert RN.choose_level(deep, "neuron") == ("neuron", None)  # asked for: drawn so
    assert RN.choose_level(deep, edge_limit=5000)[0] == "neuron"
    assert RN.choose_level(deep, limit=100, edge_limit=5000)[1] == (
        "6,583 scalar nodes is more than 40, and one node per neuron would take 149 nodes "
        "(more than 100): drawn one node per layer (level)"
    )
    assert RN.choose_level(_graph([2, 8, 8, 1]), limit=300) == (
        "neuron",  # 90 edges
        "303 scalar nodes is more than 40: drawn one node per neuron (level)",
    )
    assert RN.choose_level(_graph([2, 8, 8, 8, 1]))[0] == "layer"  # 154 edges
    assert RN.choose_level(_graph([2, 16, 16, 1]))[0] == "layer"  # 306 edges
    # every scalar reads at docs width only for the smallest nets (XOR's 2-4-1: 3,800 pt)
    assert RN.choose_level(_graph([2, 4, 1]))[0] == "neuron"
    assert RN.choose_level(_graph([2, 1])) == ("scalar", None)


@pytest.fixture(scope="module")
def xor_model() -> M.Model:
    """XOR after 2000 epochs: for the input (0, 1) every hidden sigmoid sits near 0 or 1,
    which on this one example looks like a dead layer; on the data set it is fine."""
    return M.from_result(T.train(spec_from_mapping(PRESETS["xor"])))


def test_the_layer_view_takes_statuses_from_the_whole_data_set(xor_model: M.Model) -> None:
    graph = M.network_loss_graph(xor_model, (0.0, 1.0))
    one = stats.diagnose(nn.layer_samples(graph.network, np.array([graph.x]), np.array([1.0])))
    assert [layer.status for layer in one.layers] == ["dead", "ok"]  # what it used to show
    statuses = M.data_set_status(graph)  # the caller's: the model's whole data set
    diagram = network_diagram(graph, "layer", title="xor", statuses=statuses)
    assert diagram.node("L1").extra_lines == (
        "4 sigmoid, 12 params",
        _max_rel(graph, 0),
        "status ok",
    )
    assert diagram.node("L1").detail == "L1: ok on the 4 examples of xor"
    assert diagram.title == (
        "xor — per layer: grad = rms ∂L/∂w, max = max |∂L/∂w|, rel = grad ÷ largest (this "
        "example); status on all 4 examples"
    )
    grads = stats.diagnose(xor_model.layer_samples())  # what `gradviz grads` says
    assert [layer.status for layer in grads.layers] == ["ok", "ok"]
    assert preferred_rankdir(diagram) == "TB"
    assert preferred_rankdir(network_diagram(graph, "neuron")) == "LR"


def _max_rel(graph: M.LossGraph, index: int) -> str:
    layer = stats.diagnose(
        nn.layer_samples(graph.network, np.array([graph.x]), np.array([graph.y]))
    ).layers[index]
    return f"max {fmt(layer.max_abs)}  rel {fmt(layer.rel)}"


def test_the_layer_view_without_a_data_set_shows_no_status() -> None:
    graph = _graph([2, 4, 1])
    diagram = network_diagram(graph, "layer")
    assert all("status" not in line for n in diagram.nodes for line in n.extra_lines)
    assert (diagram.title or "").endswith(
        "; no status (dead units show on a data set only: gradviz grads)"
    )


@pytest.mark.parametrize("target", [float("nan"), float("inf"), -float("inf")])
def test_a_target_that_is_not_finite_is_refused(saved: Path, target: float) -> None:
    # the library names the option by its keyword; the CLI says --target (cli.flag)
    with pytest.raises(InputError, match=r"^target (nan|inf|-inf): expected a finite number$"):
        M.network_loss_graph(M.load_model(saved), (0.0, 1.0), target)


def test_old_keep_going_advice_in_a_saved_model_is_not_repeated(saved: Path) -> None:
    """Only a run that trained on is saved; a file may still hold the advice to pass
    --keep-going that training gave before it knew which run it was."""
    raw = json.loads(saved.read_text())
    old = ", or pass --keep-going to train on regardless."  # word for word, as it was
    raw["history"]["stopped"] = "training diverged at epoch 3: … (clip_norm = 1)" + old
    saved.write_text(json.dumps(raw))
    assert M.load_model(saved).stopped == "training diverged at epoch 3: … (clip_norm = 1)."


@pytest.mark.parametrize("level", RN.LEVELS)
def test_no_grad_drawings_show_no_gradient_anywhere(saved: Path, level: str) -> None:
    """`draw --model … --no-grad`: data only, also in the text of collapsed nodes."""
    from gradviz.drawn import to_mermaid

    graph = M.network_loss_graph(M.load_model(saved), (0.0, 1.0))
    diagram, _ = drawings.model_diagrams(graph, level=level, grad=False)[False]
    assert not diagram.has_grad and all(n.grad is None for n in diagram.nodes)
    texts = [to_dot(diagram), to_mermaid(diagram)]
    texts.append(" ".join(_svg(texts[0]).itertext()))
    for text in texts:
        assert "∂L" not in text and "rel " not in text
        assert not re.search(r"grad(?!viz)", text)
        assert "loss" in text and "data" in text
    with_grad, _ = drawings.model_diagrams(graph, level=level)[False]
    assert re.search(r"grad(?!viz)", to_dot(with_grad))  # what the check looks for
    if level == "neuron":
        assert "z " in texts[0] and "sigmoid(z)" in texts[0]
    if level == "layer":
        assert "status" not in texts[0] and "outputs" in texts[0]


# -- the data a model file may read ---------------------------------------------------------

GATE = "a,b,label\n0,0,0\n0,1,1\n1,0,1\n1,1,0\n"


def _csv_model(folder: Path, data: Path) -> Path:
    """A model trained on `data` (a CSV file), saved in `folder`."""
    spec = spec_from_mapping(
        {"layers": [2, 2, 1], "data": {"csv": str(data)}, "epochs": 3}, base_dir=str(folder)
    )
    path = folder / "model.json"
    M.save(M.from_result(T.train(spec)), path)
    return path


def test_csv_data_is_saved_relative_to_the_model(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "gate.csv").write_text(GATE)
    path = _csv_model(tmp_path, tmp_path / "data" / "gate.csv")
    assert json.loads(path.read_text())["spec"]["data"]["csv"] == "data/gate.csv"
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    (moved / "data").mkdir()
    path.rename(moved / "model.json")  # the pair moves together
    (tmp_path / "data" / "gate.csv").rename(moved / "data" / "gate.csv")
    assert M.load_model(moved / "model.json").dataset().Y.tolist() == [0, 1, 1, 0]


@pytest.mark.parametrize("where", ["parent", "absolute", "symlink"])
def test_a_model_may_not_read_data_outside_its_folder(tmp_path: Path, where: str) -> None:
    """A model file someone sends you must not make gradviz read (and quote in its
    errors) another file of yours: data outside the model's folder is refused."""
    from gradviz.measure import model_data

    secret = tmp_path / "secret.csv"
    secret.write_text(GATE)
    folder = tmp_path / "received"
    folder.mkdir()
    path = _csv_model(folder, secret)
    raw = json.loads(path.read_text())
    assert raw["spec"]["data"]["csv"] == str(secret)  # outside: kept absolute
    if where == "parent":
        raw["spec"]["data"]["csv"] = "../secret.csv"
    if where == "symlink":
        (folder / "link.csv").symlink_to(secret)
        raw["spec"]["data"]["csv"] = "link.csv"
    path.write_text(json.dumps(raw))
    model = M.load_model(path)  # loading alone reads nothing
    with pytest.raises(ModelError, match="is outside the model's folder") as info:
        model.dataset()
    assert info.value.exit_code == 2 and info.value.options == ("data",)
    assert "--data" in info.value.render(flag) and "--data" not in info.value.message
    with pytest.raises(ModelError, match="outside the model's folder"):
        M.network_loss_graph(model, (0.0, 1.0))  # its target would be read from the data
    assert M.network_loss_graph(model, (0.0, 1.0), y=1.0).y == 1.0  # given: nothing read
    assert model_data(model, str(secret)).Y.tolist() == [0, 1, 1, 0]  # named by the user
    # a model just trained (not read from a file) reads its data where the spec said
    assert M.from_result(T.train(model.spec)).dataset().size == 4


def test_model_persistence_imports_no_renderer_and_no_cli() -> None:
    """The import flow: engine → expr → nn/data → stats → train → model → measure,
    trace → render → output → cli. A module imports only what comes earlier."""
    import ast

    root = Path(M.__file__).parent
    later = {
        "data": ("gradviz.nn", "gradviz.stats", "gradviz.train", "gradviz.model"),
        "nn": ("gradviz.stats", "gradviz.train", "gradviz.model"),
        "stats": ("gradviz.train", "gradviz.model"),
        "train": ("gradviz.model", "gradviz.measure"),
        "model": ("gradviz.measure", "gradviz.tracing"),
        "measure": (),
    }
    for module, forbidden in later.items():
        tree = ast.parse((root / f"{module}.py").read_text())
        names = [
            node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
        ] + [a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names]
        bad = [n for n in names if n.startswith((*forbidden, "gradviz.render", "gradviz.cli"))]
        bad += [n for n in names if n in ("click", "rich") or n.startswith("rich.")]
        assert bad == [], (module, bad)
