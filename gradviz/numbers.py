"""One way to print a number everywhere, so a gradient of 1e-7 never shows as 0.0000."""

from __future__ import annotations

import math
import sys
from types import ModuleType

DEFAULT_PRECISION = 4


def loaded_numpy() -> ModuleType | None:
    """The numpy module if something has imported it, else None: no numpy value can exist
    before numpy is imported, so a float needs no numpy to be told from an array."""
    return sys.modules.get("numpy")


def is_array(x: object) -> bool:
    """True for a numpy array, without importing numpy."""
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(x, numpy.ndarray)


def fmt(x: object, precision: int = DEFAULT_PRECISION) -> str:
    """A float with `precision` significant digits: Python's `g` (scientific below 1e-4 or
    from 10**precision), the exponent written plainly (1e-7, 1.234e4); `nan`, `inf`, `-inf`,
    `0` for either zero; a batch as its mean with its size (a label holds one number)."""
    if is_array(x) and x.ndim:
        return f"{fmt(float(x.mean()), precision)} (mean of {x.size})"
    value = float(x)  # type: ignore[arg-type]
    if value == 0:
        return "0"
    text = f"{value:.{precision}g}"  # (`nan`, `inf`, `-inf` as they are)
    if "e" in text:  # 1e-07 -> 1e-7: shorter, and what people write
        mantissa, exponent = text.split("e")
        text = f"{mantissa}e{int(exponent)}"
    return text


def fmt_full(x: object) -> str:
    """Every digit a float64 has (for tooltips and JSON-like detail)."""
    if is_array(x):
        return "[" + ", ".join(fmt_full(v) for v in x.ravel().tolist()) + "]"
    return fmt(x, 17) if not math.isfinite(float(x)) else repr(float(x))  # type: ignore[arg-type]


# JSON has no NaN or infinity: gradviz writes them as these strings everywhere.
NONFINITE_STRINGS = ("nan", "inf", "-inf")


def json_number(x: float) -> float | str:
    """A float as JSON can hold it: NaN and infinities as "nan", "inf", "-inf"."""
    value = float(x)
    return value if math.isfinite(value) else fmt(value)


def from_json_number(value: object) -> float | None:
    """The inverse of `json_number`: a float, or None for anything else (a bool too)."""
    if isinstance(value, str):
        return float(value) if value in NONFINITE_STRINGS else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return float(value)
    except OverflowError:  # an integer beyond float range
        return math.inf if value > 0 else -math.inf


def json_safe(value: object) -> object:
    """Plain JSON types all the way down (numpy values, tuples, keys; floats by `json_number`)."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    numpy = loaded_numpy()  # None: then no numpy value can exist yet
    if numpy is not None and isinstance(value, numpy.ndarray | numpy.generic):
        return json_safe(value.tolist())  # Python's lists, bools, ints and floats
    if isinstance(value, float):
        return json_number(value)
    return value


def dumps(document: object) -> str:
    """The text every `--json` prints: one space of indent, `json_safe`, any reader takes it."""
    import json  # lazy: start-up (drawing an expression prints no JSON)

    return json.dumps(json_safe(document), indent=1, allow_nan=False)
