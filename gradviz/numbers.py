"""One way to print a number everywhere, so a gradient of 1e-7 never shows as 0.0000."""

from __future__ import annotations

import math

import numpy as np

DEFAULT_PRECISION = 4


def fmt(x: object, precision: int = DEFAULT_PRECISION) -> str:
    """Format a float with `precision` significant digits, scientific when tiny or huge.

    NaN and infinities print as `nan`, `inf`, `-inf`; a batch (numpy array) prints
    as its mean with the batch size, since one label has room for one number.
    """
    if isinstance(x, np.ndarray):
        if x.ndim == 0:
            return fmt(float(x), precision)
        return f"{fmt(float(np.mean(x)), precision)} (mean of {x.size})"
    value = float(x)  # type: ignore[arg-type]
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "0"
    text = f"{value:.{precision}g}"
    if "e" in text:  # 1e-07 -> 1e-7: shorter, and what people write
        mantissa, exponent = text.split("e")
        text = f"{mantissa}e{int(exponent)}"
    return text


def fmt_full(x: object) -> str:
    """Every digit a float64 has (for tooltips and JSON-like detail)."""
    if isinstance(x, np.ndarray):
        return "[" + ", ".join(fmt_full(v) for v in x.ravel().tolist()) + "]"
    return fmt(x, 17) if not math.isfinite(float(x)) else repr(float(x))  # type: ignore[arg-type]
