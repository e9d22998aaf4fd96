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


# -- spawn keys, 64-bit draws and uniform: what the initial weights and circle data use --

SPAWN_KEYS = [(), (0,), (1,), (2, 3), (0, 0, 0, 0, 1), (2**32 - 1,), (2**32, 5), (2**70, 0, 9)]
BOUNDS = [
    (-1.0, 1.0),
    (-1.5, 1.5),
    (0.0, 1.0),
    (-0.3535533905932738, 0.3535533905932738),
    (-7.5, -2.25),  # both negative
    (3.0, 3.0),  # an empty range: low every time
    (1e-300, 1.0000000000000002e-300),  # a few ulps wide
    (5e-324, 1e-323),  # subnormal
    (-8.9e307, 8.9e307),  # a range near the largest double
    (123456.789, 123456.79),
]


def numpys(seed: int, spawn_key: tuple[int, ...] = ()) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=spawn_key))


@pytest.mark.parametrize("spawn_key", SPAWN_KEYS)
@pytest.mark.parametrize("seed", SEEDS)
def test_64_bit_draws_are_numpys_for_any_seed_and_spawn_key(
    seed: int, spawn_key: tuple[int, ...]
) -> None:
    draws = seeded.Generator(seed, spawn_key).uint64s(40)
    assert draws == numpys(seed, spawn_key).bit_generator.random_raw(40).tolist()


def test_a_spawn_key_is_not_more_seed_words() -> None:
    """numpy pads a seed of fewer words than the pool (four) with zeros before the spawn
    key's words (gh-16539): seed 1 with key (0,) is not the entropy [1, 0], which unpadded
    assembly would make it; a seed of four words or more is not padded."""
    keyed = seeded.Generator(1, (0,)).uint64s(4)
    assert keyed == numpys(1, (0,)).bit_generator.random_raw(4).tolist()
    unpadded = np.random.default_rng(np.random.SeedSequence([1, 0]))
    assert keyed != unpadded.bit_generator.random_raw(4).tolist()
    assert keyed != seeded.Generator(1).uint64s(4)
    padded = np.random.default_rng(np.random.SeedSequence([1, 0, 0, 0, 0]))
    assert keyed == padded.bit_generator.random_raw(4).tolist()
    long_seed = 2**128  # five words: the key's words simply follow
    keyed = seeded.Generator(long_seed, (7,)).uint64s(4)
    assert keyed == seeded.Generator(long_seed + (7 << 160)).uint64s(4)
    assert keyed == numpys(long_seed, (7,)).bit_generator.random_raw(4).tolist()


@pytest.mark.parametrize("spawn_key", [(), (0,), (1,), (4, 2**33)])
@pytest.mark.parametrize("seed", [0, 1, 2, 12345, 2**32 + 1, 2**64 + 5, 2**128 - 1, 3**90])
def test_uniform_is_numpys_bit_for_bit(seed: int, spawn_key: tuple[int, ...]) -> None:
    """Every bound pair and size in turn from one generator, as a network draws its layers."""
    ours, theirs = seeded.Generator(seed, spawn_key), numpys(seed, spawn_key)
    for low, high in BOUNDS:
        for size in (0, 1, 7, (3, 5), (16, 2), (0, 4), (1, 1, 3)):
            drawn = ours.uniform(low, high, size)
            wanted = theirs.uniform(low, high, size)
            assert np.reshape(drawn, np.shape(wanted)).tobytes() == wanted.tobytes()


@given(
    st.integers(min_value=0, max_value=2**130),
    st.lists(st.integers(min_value=0, max_value=2**40), max_size=3),
    st.floats(min_value=-1e6, max_value=1e6),
    st.floats(min_value=0.0, max_value=1e6),
    st.integers(min_value=0, max_value=300),
)
def test_uniform_is_numpys_for_any_seed_key_and_bounds(
    seed: int, spawn_key: list[int], low: float, width: float, n: int
) -> None:
    high = low + width
    drawn = seeded.Generator(seed, spawn_key).uniform(low, high, n)
    wanted = numpys(seed, tuple(spawn_key)).uniform(low, high, n)
    assert np.array(drawn, dtype=np.float64).tobytes() == wanted.tobytes()


def test_a_large_draw_is_numpys() -> None:
    drawn = seeded.Generator(2**63 - 1, (0,)).uniform(-1.5, 1.5, (25_000, 2))
    wanted = numpys(2**63 - 1, (0,)).uniform(-1.5, 1.5, (25_000, 2))
    assert np.reshape(drawn, (25_000, 2)).tobytes() == wanted.tobytes()


def test_uniform_is_the_top_53_bits_scaled() -> None:
    """The definition, by hand: low + (high − low) · (next_uint64 >> 11) · 2**-53."""
    raw = seeded.Generator(9, (0,)).uint64s(5)
    wanted = [-2.0 + 5.0 * ((r >> 11) / 2**53) for r in raw]
    assert seeded.Generator(9, (0,)).uniform(-2.0, 3.0, 5) == wanted
    assert all(-2.0 <= v < 3.0 for v in wanted)


def test_mixed_draws_follow_numpys_order() -> None:
    """A permutation's 32-bit draws take halves of 64-bit ones and keep the spare half;
    a 64-bit draw after them starts a fresh one, as numpy's PCG64 does."""
    for seed in (0, 3, 2**40):
        ours, theirs = seeded.Generator(seed, (1,)), numpys(seed, (1,))
        for n in (5, 16, 2, 9):
            assert ours.permutation(n) == theirs.permutation(n).tolist()
            assert ours.uniform(-1.0, 1.0, n) == theirs.uniform(-1.0, 1.0, n).tolist()


def test_uniform_refuses_what_numpy_refuses() -> None:
    for low, high, size, error in (
        (1.0, 0.0, 3, ValueError),  # high < low
        (-1e308, 1e308, 3, OverflowError),  # the range is not finite
        (0.0, float("nan"), 3, OverflowError),
        (0.0, 1.0, -1, ValueError),
        (0.0, 1.0, (2, -1), ValueError),
    ):
        with pytest.raises(error):
            numpys(0).uniform(low, high, size)
        with pytest.raises(error):
            seeded.Generator(0).uniform(low, high, size)
    for seed, key in ((-1, ()), (0, (-1,))):
        with pytest.raises(ValueError):
            numpys(seed, key)
        with pytest.raises(ValueError):
            seeded.Generator(seed, key)
    with pytest.raises(TypeError):
        seeded.Generator(1.5)  # type: ignore[arg-type]


def test_numpy_integers_are_seeds_as_ints_are() -> None:
    assert seeded.Generator(np.uint64(2**63 + 1), (np.int64(1),)).uniform(0.0, 1.0, 3) == (
        seeded.Generator(2**63 + 1, (1,)).uniform(0.0, 1.0, 3)
    )


def test_cheaper_here_up_to_the_threshold_and_only_before_numpy_random_loads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    monkeypatch.delitem(sys.modules, "numpy.random")
    assert seeded.cheaper_here(0) and seeded.cheaper_here(seeded.PYTHON_DRAWS_UP_TO)
    assert not seeded.cheaper_here(seeded.PYTHON_DRAWS_UP_TO + 1)
    monkeypatch.setitem(sys.modules, "numpy.random", np.random)
    assert not seeded.cheaper_here(1)
