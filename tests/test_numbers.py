"""gradviz.numbers.fmt, pinned as literal text: every other test builds its expected
labels with fmt, so only this table would notice a change in the rule itself.

The rule: `precision` significant digits (Python's `g`), trailing zeros dropped;
scientific notation when the decimal exponent is below -4 or at least `precision`,
written without `+` or leading zeros (1e-7, 1.234e4); nan, inf and -inf spelled out;
zero of either sign is `0`; a batch shows its mean and its size.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from gradviz.numbers import DEFAULT_PRECISION, fmt, fmt_full

NAN, INF = math.nan, math.inf

TABLE = [
    # value, precision, text
    (1e-7, 4, "1e-7"),  # the vanishing gradient that %.4f would print as 0.0000
    (-2.5e-10, 4, "-2.5e-10"),
    (1.234e-5, 4, "1.234e-5"),
    (0.0001, 4, "0.0001"),  # exponent -4: still plain
    (0.00012345, 4, "0.0001234"),
    (1 / 3, 4, "0.3333"),
    (2.0, 4, "2"),  # no trailing zeros
    (-8, 4, "-8"),
    (1000, 4, "1000"),
    (9999, 4, "9999"),
    (12345, 4, "1.234e4"),  # 5 digits > precision: scientific (the tie rounds to even)
    (12346, 4, "1.235e4"),
    (9999.5, 4, "1e4"),  # rounding up carries into the exponent
    (123456789, 4, "1.235e8"),
    (1e21, 4, "1e21"),
    (1.7976931348623157e308, 4, "1.798e308"),
    (5e-324, 4, "4.941e-324"),  # the smallest subnormal
    (0, 4, "0"),
    (0.0, 4, "0"),
    (-0.0, 4, "0"),  # the sign of a zero is noise to a reader
    (NAN, 4, "nan"),
    (INF, 4, "inf"),
    (-INF, 4, "-inf"),
    (0.15, 1, "0.1"),  # 0.15 is 0.1499999… in binary
    (12345, 1, "1e4"),
    (-2.5e-10, 1, "-3e-10"),
    (1000, 1, "1e3"),
    (NAN, 1, "nan"),
    (0.1, 17, "0.10000000000000001"),  # 17 digits: every float64 reads back exactly
    (1e-7, 17, "9.9999999999999995e-8"),
    (12345, 17, "12345"),
    (1 / 3, 17, "0.33333333333333331"),
    (-INF, 17, "-inf"),
]


@pytest.mark.parametrize(("value", "precision", "text"), TABLE)
def test_fmt_table(value, precision, text):
    assert fmt(value, precision) == text


def test_fmt_default_precision_is_four_digits():
    assert DEFAULT_PRECISION == 4
    assert fmt(math.pi) == "3.142"
    assert fmt(1e-7) == "1e-7"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (np.float64(1e-7), "1e-7"),
        (np.float32(0.5), "0.5"),
        (np.int64(-3), "-3"),
        (np.array(2.5), "2.5"),  # a 0-d array is one number
        (np.array([1.0, 2.0, 4.0]), "2.333 (mean of 3)"),
        (np.array([1e-7, 3e-7]), "2e-7 (mean of 2)"),
        (np.array([NAN, 1.0]), "nan (mean of 2)"),  # one NaN sample is not averaged away
        (np.array([INF, 1.0]), "inf (mean of 2)"),
        (np.array([[1.0, 3.0], [5.0, 7.0]]), "4 (mean of 4)"),
    ],
)
def test_fmt_numpy_scalars_and_batches(value, text):
    assert fmt(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.1, "0.1"),  # shortest text that reads back as the same float64
        (1 / 3, "0.3333333333333333"),
        (1e-7, "1e-07"),
        (-0.0, "-0.0"),
        (NAN, "nan"),
        (-INF, "-inf"),
        (np.array([0.1, INF, -2.0]), "[0.1, inf, -2.0]"),
    ],
)
def test_fmt_full_keeps_every_digit(value, text):
    assert fmt_full(value) == text
    if isinstance(value, float) and math.isfinite(value):
        assert float(fmt_full(value)) == value
