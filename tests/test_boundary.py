"""gradviz.boundary: the network's output over the input plane, from one batched pass of
the engine, checked against the sigmoid written out by hand and against training's own
(compiled) predictions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from plot_cases import diagonal_network, square_data, trained

from gradviz.boundary import (
    FLOAT_BUDGET,
    affordable_grid,
    boundary,
    decision_threshold,
    graph_nodes,
    predicted_positive,
)
from gradviz.errors import InputError
from gradviz.nn import Network, example_graph


def test_one_neuron_output_is_the_hand_written_sigmoid_on_every_grid_cell() -> None:
    b = boundary(diagonal_network(sharpness=4.0), square_data(), columns=30, rows=20)
    assert b.output.shape == (20, 30) and b.xs.shape == (30,) and b.ys.shape == (20,)
    # the plane: the corners' box with 10% margins, grid points at the cell centres
    assert b.extent == pytest.approx((-0.1, 1.1, -0.1, 1.1))
    assert b.xs[0] == pytest.approx(-0.1 + 1.2 / 60) and b.ys[-1] == pytest.approx(1.1 - 1.2 / 40)
    for i, y in enumerate(b.ys):
        for j, x in enumerate(b.xs):
            assert b.output[i, j] == pytest.approx(1 / (1 + math.exp(-4.0 * (x - y))), rel=1e-12)
    assert b.hidden == [] and b.hidden_activation is None


def test_threshold_is_the_midpoint_of_the_labels() -> None:
    assert decision_threshold(Network((2, 1), ("sigmoid",), "mse")) == 0.5
    assert decision_threshold(Network((2, 1), ("tanh",), "mse")) == 0.5  # 0/1 targets still
    assert decision_threshold(Network((2, 1), ("sigmoid",), "bce")) == 0.5
    assert decision_threshold(Network((2, 1), ("linear",), "hinge")) == 0.0  # ±1 labels
    assert predicted_positive(np.array([0.5, 0.51, math.nan]), 0.5).tolist() == [
        False,
        True,
        False,
    ]


def test_misclassified_points_and_nan_outputs_are_wrong() -> None:
    # (1,0) has target 0 but σ(4·(1−0)) > 0.5: wrong; the others are right
    b = boundary(diagonal_network(), square_data(targets=(0.0, 0.0, 0.0, 0.0)))
    assert b.wrong.tolist() == [False, False, True, False]
    nan = diagonal_network()
    nan.set_weights([(np.array([[1.0, -1.0]]), np.array([math.nan]))])
    assert boundary(nan, square_data()).wrong.all()


@pytest.mark.parametrize("name", ["xor", "circle"])
def test_outputs_at_the_points_are_the_network_s_and_the_grid_agrees(name: str) -> None:
    result = trained(name)
    b = boundary(result.network, result.dataset)
    # each point through the plain scalar graph of Values (not the compiled evaluation)
    scalar = [
        example_graph(result.network, x, y).output.data
        for x, y in zip(result.dataset.X.tolist(), result.dataset.Y.tolist(), strict=True)
    ]
    assert b.point_outputs.tolist() == pytest.approx(scalar, rel=1e-12, abs=1e-15)
    assert b.wrong.sum() == round((1 - result.final.accuracy) * result.dataset.size)
    # read the grid cell each point falls in: same side of the threshold as the point,
    # except a point so near the boundary that its own cell straddles it
    for (x, y), out in zip(b.points.tolist(), b.point_outputs.tolist(), strict=True):
        i, j = b.cell(x, y)
        if predicted_positive(b.output[i, j], 0.5) != predicted_positive(out, 0.5):
            near = b.output[max(0, i - 1) : i + 2, max(0, j - 1) : j + 2]
            assert near.min() <= 0.5 < near.max(), (x, y, out)
    # given training's own outputs, the marks are those of its predictions table
    given = boundary(result.network, result.dataset, 20, 20, outputs=result.final.outputs)
    assert given.point_outputs.tolist() == result.final.outputs


def test_a_big_network_gets_a_coarser_grid_within_the_memory_budget() -> None:
    small = Network((2, 8, 1), ("sigmoid", "sigmoid"))
    assert affordable_grid(small, 200, 200) == (200, 200)
    mid = Network((2, 32, 32, 1), ("relu", "relu", "sigmoid"))  # 1,185 parameters
    columns, rows = affordable_grid(mid, 200, 200)
    assert columns == rows and 48 < columns < 200
    assert columns * rows * graph_nodes(mid) <= FLOAT_BUDGET
    big = Network((2, 64, 64, 1), ("relu", "relu", "sigmoid"))  # 4,417 parameters
    columns, rows = affordable_grid(big, 200, 200)
    assert (columns, rows) == (48, 48)  # never below the terminal map's grid
    big.initialise("he", 0)
    b = boundary(big, square_data())
    assert b.output.shape == (rows, columns) and np.isfinite(b.output).all()


def test_first_hidden_layer_maps_are_the_units_outputs() -> None:
    result = trained("xor")
    b = boundary(result.network, result.dataset, columns=7, rows=5)
    (W, bias), _ = result.network.weights()
    assert len(b.hidden) == 4 and b.hidden_activation == "sigmoid"
    x, y = b.xs[3], b.ys[2]
    for k in range(4):
        z = bias[k] + W[k, 0] * x + W[k, 1] * y
        assert b.hidden[k][2, 3] == pytest.approx(1 / (1 + math.exp(-z)), rel=1e-12)


def test_a_network_without_two_inputs_is_refused() -> None:
    network = Network((3, 1), ("sigmoid",))
    with pytest.raises(InputError, match="needs a network with 2 inputs; this one has 3"):
        boundary(network, square_data())
    assert InputError.exit_code == 2
