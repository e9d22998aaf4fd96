"""`numpy.random.default_rng(seed).permutation(n)` in plain Python, number for number.

Why: an expression's default leaf values are drawn that way, and `gradviz draw` on a scalar
graph should not pay numpy's import (most of its start-up) for one permutation of 58 items.
The algorithms are numpy's own: `SeedSequence` (its entropy mixing), `PCG64` (the 128-bit
LCG with the XSL-RR output, 32-bit draws taken from the halves of a 64-bit one), and
`Generator.shuffle` (Fisher-Yates from the end, each index by rejection under a bit mask).
tests/test_seeded.py checks them against numpy itself over many seeds and sizes.
"""

from __future__ import annotations

from collections.abc import Iterator
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


def _seed_words(seed: int) -> list[int]:
    """A non-negative int as 32-bit words, least significant first (0 is one word)."""
    words = [seed & _MASK32]
    seed >>= 32
    while seed:
        words.append(seed & _MASK32)
        seed >>= 32
    return words


def _pool(seed: int) -> list[int]:
    """SeedSequence(seed).pool: the entropy mixed into four 32-bit words."""
    entropy = _seed_words(seed)
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


def _state_words64(seed: int, n: int) -> list[int]:
    """SeedSequence(seed).generate_state(n, np.uint64)."""
    hash_const = _INIT_B
    words = []
    source = cycle(_pool(seed))
    for _ in range(2 * n):
        value = (next(source) ^ hash_const) & _MASK32
        hash_const = (hash_const * _MULT_B) & _MASK32
        value = (value * hash_const) & _MASK32
        words.append(value ^ (value >> _XSHIFT))
    return [words[2 * i] | (words[2 * i + 1] << 32) for i in range(n)]


def _uint32s(seed: int) -> Iterator[int]:
    """The 32-bit draws of PCG64(SeedSequence(seed)): low half of each 64-bit output, then
    its high half."""
    s_hi, s_lo, i_hi, i_lo = _state_words64(seed, 4)
    inc = ((((i_hi << 64) | i_lo) << 1) | 1) & _MASK128
    # pcg64_set_seed: state 0, one step (state = inc), add the seed, one step.
    state = (inc + ((s_hi << 64) | s_lo)) & _MASK128
    state = (state * _PCG_MULT + inc) & _MASK128
    while True:
        state = (state * _PCG_MULT + inc) & _MASK128
        rot = state >> 122
        x = ((state >> 64) ^ state) & _MASK64
        out = ((x >> rot) | (x << (64 - rot))) & _MASK64
        yield out & _MASK32
        yield out >> 32


def permutation(seed: int, n: int) -> list[int]:
    """The order in which `default_rng(seed).permutation(n)` puts 0 … n-1 (n < 2**32)."""
    if seed < 0 or not 0 <= n <= _MASK32:
        raise ValueError("seed must be non-negative and n below 2**32")
    items = list(range(n))
    draws = _uint32s(seed)
    for i in range(n - 1, 0, -1):
        mask = (1 << i.bit_length()) - 1  # the smallest all-ones mask >= i
        j = next(draws) & mask
        while j > i:
            j = next(draws) & mask
        items[i], items[j] = items[j], items[i]
    return items
