"""numpy's default generator, `numpy.random.default_rng`, in plain Python, number for number.

Why: numpy.random's import (its extension modules, and `secrets` and `hashlib` behind them)
costs more than a few thousand draws. An expression's default leaf values are one
permutation of 58 items, so `gradviz draw` on a scalar graph does not import numpy at all;
and the uniform initial weights and circle data of a small network are drawn here, so a
full-batch training that needs no other randomness never imports numpy.random.
The algorithms are numpy's own: `SeedSequence` (its entropy mixing, spawn keys included),
`PCG64` (the 128-bit LCG with the XSL-RR output; a 32-bit draw is the low half of a 64-bit
one and its high half is kept for the next), `Generator.shuffle` (Fisher-Yates from the
end, each index by rejection under a bit mask) and `Generator.uniform` (low + (high − low)
times a double made of a draw's top 53 bits). tests/test_seeded.py checks them against
numpy itself over many seeds, spawn keys, sizes and bounds.
"""

from __future__ import annotations

import math
import operator
import sys
from collections.abc import Sequence
from itertools import cycle

_MASK32 = 0xFFFFFFFF
_MASK64 = 0xFFFFFFFFFFFFFFFF
_MASK128 = (1 << 128) - 1

# SeedSequence's hash constants (numpy/random/bit_generator.pyx).
_INIT_A = 0x43B0D7E5
_MULT_A = 0x931E8875
_INIT_B = 0x8B51F9DD
_MULT_B = 0x58F38DED
_MIX_MULT_L = 0xCA01F9DD
_MIX_MULT_R = 0x4973F715
_XSHIFT = 16
_POOL_SIZE = 4

# PCG64's multiplier (pcg64.h: PCG_DEFAULT_MULTIPLIER_128).
_PCG_MULT = (2549297995355413924 << 64) + 4865540595714422341
_TWO_TO_MINUS_53 = 1.0 / 9007199254740992.0  # next_double: the top 53 bits times 2**-53

# Up to this many uniform draws, drawing them here costs less CPU than numpy.random's
# import and draws: numpy's cost 14-18 ms whatever the count (nearly all of it the first
# import), these 0.65-0.95 us a draw, so numpy's are cheaper past 18,000-22,500 draws
# (bench/draws.py, 2026-12-02, two runs at load averages 1 and 3: fresh processes, medians
# of 11 interleaved rounds). Every network's initial weights are below it
# (spec.MAX_PARAMETERS is 5,000); circle data sets of more than 10,000 points are above it.
PYTHON_DRAWS_UP_TO = 20_000


def _words(value: int) -> list[int]:
    """A non-negative int as 32-bit words, least significant first (0 is one word)."""
    words = [value & _MASK32]
    value >>= 32
    while value:
        words.append(value & _MASK32)
        value >>= 32
    return words


def _entropy(seed: int, spawn_key: Sequence[int]) -> list[int]:
    """SeedSequence's assembled entropy: the seed's words, then each spawn key's. With a
    spawn key the seed's words are first padded with zeros to the pool size (numpy 1.19,
    gh-16539: so that seed 1 with key (0,) is not the seed [1, 0])."""
    entropy = _words(seed)
    if spawn_key:
        entropy += [0] * (_POOL_SIZE - len(entropy))
        for key in spawn_key:
            entropy += _words(key)
    return entropy


def _pool(entropy: list[int]) -> list[int]:
    """SeedSequence.pool: the entropy mixed into four 32-bit words."""
    hash_const = _INIT_A

    def hashmix(value: int) -> int:
        nonlocal hash_const
        value = (value ^ hash_const) & _MASK32
        hash_const = (hash_const * _MULT_A) & _MASK32
        value = (value * hash_const) & _MASK32
        return value ^ (value >> _XSHIFT)

    def mix(x: int, y: int) -> int:
        result = (_MIX_MULT_L * x - _MIX_MULT_R * y) & _MASK32
        return result ^ (result >> _XSHIFT)

    pool = [hashmix(entropy[i] if i < len(entropy) else 0) for i in range(_POOL_SIZE)]
    for i_src in range(_POOL_SIZE):
        for i_dst in range(_POOL_SIZE):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hashmix(pool[i_src]))
    for word in entropy[_POOL_SIZE:]:
        for i_dst in range(_POOL_SIZE):
            pool[i_dst] = mix(pool[i_dst], hashmix(word))
    return pool


def _state_words64(pool: list[int], n: int) -> list[int]:
    """SeedSequence.generate_state(n, np.uint64) from its pool."""
    hash_const = _INIT_B
    words = []
    source = cycle(pool)
    for _ in range(2 * n):
        value = (next(source) ^ hash_const) & _MASK32
        hash_const = (hash_const * _MULT_B) & _MASK32
        value = (value * hash_const) & _MASK32
        words.append(value ^ (value >> _XSHIFT))
    return [words[2 * i] | (words[2 * i + 1] << 32) for i in range(n)]


def cheaper_here(count: int) -> bool:
    """Whether `count` uniform draws cost less here than numpy's: only while numpy.random
    is not loaded (once it is, numpy's draws are the cheaper ones at any count)."""
    return count <= PYTHON_DRAWS_UP_TO and "numpy.random" not in sys.modules


class Generator:
    """`default_rng(SeedSequence(seed, spawn_key=spawn_key))`: its 64-bit and 32-bit draws,
    `permutation` and `uniform`, in numpy's order (they can be mixed, as on numpy's)."""

    def __init__(self, seed: int, spawn_key: Sequence[int] = ()) -> None:
        seed, spawn_key = operator.index(seed), [operator.index(key) for key in spawn_key]
        if seed < 0 or any(key < 0 for key in spawn_key):
            raise ValueError("the seed and the spawn key must be non-negative")
        s_hi, s_lo, i_hi, i_lo = _state_words64(_pool(_entropy(seed, spawn_key)), 4)
        self._inc = ((((i_hi << 64) | i_lo) << 1) | 1) & _MASK128
        # pcg64_set_seed: state 0, one step (state = inc), add the seed, one step.
        state = (self._inc + ((s_hi << 64) | s_lo)) & _MASK128
        self._state = (state * _PCG_MULT + self._inc) & _MASK128
        self._high_half: int | None = None  # a 64-bit draw's half kept for the next 32-bit one

    def uint64s(self, count: int) -> list[int]:
        """The next `count` 64-bit draws (next_uint64; numpy's `bit_generator.random_raw`)."""
        state, inc = self._state, self._inc
        out = []
        for _ in range(count):
            state = (state * _PCG_MULT + inc) & _MASK128
            x = ((state >> 64) ^ state) & _MASK64
            rot = state >> 122
            out.append(((x >> rot) | (x << (64 - rot))) & _MASK64)
        self._state = state
        return out

    def uint32(self) -> int:
        """The next 32-bit draw (next_uint32): a 64-bit draw's low half, then its high half."""
        if self._high_half is not None:
            value, self._high_half = self._high_half, None
            return value
        (draw,) = self.uint64s(1)
        self._high_half = draw >> 32
        return draw & _MASK32

    def permutation(self, n: int) -> list[int]:
        """The order in which `permutation(n)` puts 0 … n-1 (n < 2**32)."""
        if not 0 <= n <= _MASK32:
            raise ValueError("n must be from 0 to 2**32 - 1")
        items = list(range(n))
        for i in range(n - 1, 0, -1):
            mask = (1 << i.bit_length()) - 1  # the smallest all-ones mask >= i
            j = self.uint32() & mask
            while j > i:
                j = self.uint32() & mask
            items[i], items[j] = items[j], items[i]
        return items

    def uniform(self, low: float, high: float, size: int | tuple[int, ...]) -> list[float]:
        """`uniform(low, high, size)`'s numbers, flat in C order: low + (high − low) · u,
        u = (next_uint64 >> 11) · 2**-53 in [0, 1). Refuses what numpy refuses."""
        count = size if isinstance(size, int) else math.prod(size)
        if count < 0 or (not isinstance(size, int) and min(size, default=0) < 0):
            raise ValueError("negative dimensions are not allowed")
        low, high = float(low), float(high)
        span = high - low
        if not math.isfinite(span):
            raise OverflowError("high - low range exceeds valid bounds")
        if span < 0:
            raise ValueError("high - low < 0")
        scale = _TWO_TO_MINUS_53
        return [low + span * ((draw >> 11) * scale) for draw in self.uint64s(count)]


def permutation(seed: int, n: int) -> list[int]:
    """The order in which `default_rng(seed).permutation(n)` puts 0 … n-1 (n < 2**32)."""
    return Generator(seed).permutation(n)
