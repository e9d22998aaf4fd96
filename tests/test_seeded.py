"""gradviz.seeded against numpy itself: the default values of an expression's leaves are
numpy's `default_rng(seed).permutation`, drawn without importing numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradviz import expr, seeded

SEEDS = [*range(64), 2**31 - 1, 2**32 - 1, 2**32, 2**63 + 12345, 2**64, 2**128 + 7, 10**40]


@pytest.mark.parametrize("seed", SEEDS)
def test_permutation_is_numpys_for_many_seeds_and_sizes(seed: int) -> None:
    for n in (0, 1, 2, 3, 5, 16, 17, 58, 257, 1000):
        assert seeded.permutation(seed, n) == np.random.default_rng(seed).permutation(n).tolist()


@given(st.integers(min_value=0, max_value=2**70), st.integers(min_value=0, max_value=300))
def test_permutation_is_numpys_for_any_seed(seed: int, n: int) -> None:
    assert seeded.permutation(seed, n) == np.random.default_rng(seed).permutation(n).tolist()


def test_shuffling_values_moves_them_as_the_indices_move() -> None:
    """expr shuffles its table of tenths: numpy permutes an array the way it permutes
    its indices."""
    table = np.array(expr._DEFAULT_TENTHS)
    for seed in range(20):
        order = seeded.permutation(seed, len(table))
        assert table[order].tolist() == np.random.default_rng(seed).permutation(table).tolist()


def test_refuses_what_numpy_refuses() -> None:
    with pytest.raises(ValueError):
        seeded.permutation(-1, 3)
    with pytest.raises(ValueError):
        np.random.default_rng(-1)


@pytest.mark.parametrize("seed", [0, 1, 7, 12345, 2**40])
@pytest.mark.parametrize(
    ("count", "positive"),
    [(0, 0), (1, 0), (3, 1), (10, 5), (29, 29), (30, 30), (58, 0), (59, 0), (80, 40)],
)
def test_default_values_are_those_numpy_draws(seed: int, count: int, positive: int) -> None:
    """Including the cases where the pool runs out (more leaves, or more positive leaves,
    than distinct values): then numpy itself draws the repeats."""
    names = [f"x{i}" for i in range(count)]
    wanted = set(names[:positive])
    assert expr._default_values(names, wanted, seed) == expr._default_values_numpy(
        names, wanted, seed
    )
