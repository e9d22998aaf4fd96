"""gradviz: see backpropagation.

Build a computation graph out of scalar `Value` nodes, run it forward and
backward, and look at it: terminal trees, Graphviz and Mermaid diagrams, traces
of the backward pass, and per-layer gradient tables for small networks.

    >>> from gradviz import Value
    >>> a, b = Value(2.0, label="a"), Value(-3.0, label="b")
    >>> L = a * b + a
    >>> L.backward()
    >>> a.grad, b.grad
    (-2.0, 2.0)

The public API (`__all__`):

- the engine: `Value`, `Constant` (a number in an expression: no gradient), `Graph` (a
  built graph re-evaluated in place), `Op` (an op of the table, `gradviz.ops`),
  `topological_order`, `no_grad()` (build without recording a graph), and the ops as
  functions `exp log tanh sigmoid relu sin cos abs sqrt detach`;
- `parse(text, **values)`: an expression (statements separated by `;`) to its output Value;
- pictures: `draw` (a `graphviz.Digraph`), `to_mermaid`, `to_json` (more in `gradviz.render`);
  `explore(value)`: the live HTML page, shown inline in notebooks (`.save(path)` writes it);
- `trace(value)`: the backward pass as steps; `gradcheck(value)`: analytic gradients against
  finite differences. `gradviz.trace` and `gradviz.gradcheck` are modules (`import
  gradviz.trace as t` gives the module); calling the module calls its function;
- `GradvizError`, the root of every error gradviz raises; `__version__`.

Other modules (`gradviz.nn`, `gradviz.train`, `gradviz.stats`, ...) are imported by name.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# The public API, by the module that defines it. Each name is imported the first time it
# is used (module `__getattr__`), so `import gradviz` costs almost nothing and the command
# line pays only for what a command uses. `trace` and `gradcheck` are the modules
# `gradviz.trace` and `gradviz.gradcheck`; calling either module calls its function.
_API: dict[str, str] = {
    **dict.fromkeys(
        [
            "Constant",
            "Graph",
            "Op",
            "Value",
            "abs",
            "cos",
            "detach",
            "exp",
            "log",
            "no_grad",
            "relu",
            "sigmoid",
            "sin",
            "sqrt",
            "tanh",
            "topological_order",
        ],
        "gradviz.engine",
    ),
    "GradvizError": "gradviz.errors",
    "parse": "gradviz.expr",
    "draw": "gradviz.notebook",
    "explore": "gradviz.notebook",
    "to_json": "gradviz.render",
    "to_mermaid": "gradviz.render",
}
_MODULES = ("gradcheck", "trace")  # callable modules (see above)

__all__ = [
    "Constant",
    "GradvizError",
    "Graph",
    "Op",
    "Value",
    "abs",
    "cos",
    "detach",
    "draw",
    "exp",
    "explore",
    "gradcheck",
    "log",
    "no_grad",
    "parse",
    "relu",
    "sigmoid",
    "sin",
    "sqrt",
    "tanh",
    "to_json",
    "to_mermaid",
    "topological_order",
    "trace",
]

if TYPE_CHECKING:
    from gradviz import gradcheck, trace
    from gradviz.engine import (
        Constant,
        Graph,
        Op,
        Value,
        abs,
        cos,
        detach,
        exp,
        log,
        no_grad,
        relu,
        sigmoid,
        sin,
        sqrt,
        tanh,
        topological_order,
    )
    from gradviz.errors import GradvizError
    from gradviz.expr import parse
    from gradviz.notebook import draw, explore
    from gradviz.render import to_json, to_mermaid

    __version__: str


def __getattr__(name: str) -> object:
    """Imports a public name on first use, and keeps it (the next lookup is direct)."""
    if name in _MODULES:
        return importlib.import_module(f"gradviz.{name}")  # binds itself on the package
    if name == "__version__":
        value: object = _version()
    elif name in _API:
        value = getattr(importlib.import_module(_API[name]), name)
    else:
        raise AttributeError(f"module 'gradviz' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, "__version__"})


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # lazy: start-up

    try:
        return version("gradviz")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0.0.0+unknown"
