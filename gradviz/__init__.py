"""gradviz: see backpropagation. Build a graph of scalar `Value` nodes, run it forward and
backward, and look at it: terminal trees, Graphviz and Mermaid diagrams, traces of the
backward pass, and per-layer gradient tables for small networks.

    >>> from gradviz import Value
    >>> a, b = Value(2.0, label="a"), Value(-3.0, label="b")
    >>> L = a * b + a
    >>> L.backward()
    >>> a.grad, b.grad
    (-2.0, 2.0)

The public API (`__all__`): the engine (`Value`, `Constant`, `Graph`, `Op`,
`topological_order`, `no_grad()` and every one-input op as a function: `exp`, `tanh`, ...);
`parse(text, **values)`: an expression to its output Value; pictures: `draw` (a
`graphviz.Digraph`), `to_mermaid`, `to_json`, `explore(value)` (the live page, inline in
notebooks); `trace(value)` and `gradcheck(value)` (from `gradviz.tracing` and
`gradviz.checking`); `GradvizError`, the root of every error gradviz raises; `__version__`. Other
modules (`gradviz.nn`, `gradviz.train`, ...) are imported by name.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# The public API, by the module that defines it, each imported on first use (module
# `__getattr__`): `import gradviz` costs almost nothing, a command pays for what it uses.
_API: dict[str, str] = {
    **dict.fromkeys(
        ["Constant", "Graph", "Op", "Value", "no_grad", "topological_order"], "gradviz.engine"
    ),
    "GradvizError": "gradviz.errors",
    "gradcheck": "gradviz.checking",
    "trace": "gradviz.tracing",
    "parse": "gradviz.expr",
    "draw": "gradviz.notebook",  # (defined below: a tensor goes to gradviz.torch)
    "explore": "gradviz.notebook",
    "to_json": "gradviz.drawn",
    "to_mermaid": "gradviz.drawn",
}
# What pip calls gradviz (pyproject.toml's name): `gradviz` on PyPI is another project.
DISTRIBUTION = "gradviz-backprop"

if TYPE_CHECKING:  # the names for type checkers (re-exported by `__getattr__`)
    import graphviz

    from gradviz.checking import gradcheck  # noqa: F401
    from gradviz.drawn import to_json, to_mermaid  # noqa: F401
    from gradviz.engine import Constant, Graph, Op, Value, no_grad, topological_order  # noqa: F401
    from gradviz.errors import GradvizError  # noqa: F401
    from gradviz.expr import parse  # noqa: F401
    from gradviz.notebook import explore  # noqa: F401
    from gradviz.tracing import trace  # noqa: F401

    __version__: str
    __all__: list[str]


def draw(graph: object, **options: object) -> graphviz.Digraph:
    """A `graphviz.Digraph` of a Value's graph (`gradviz.notebook.draw`) or of a PyTorch
    loss's (`gradviz.torch.draw`): a tensor is told by its type's module, so a Value never
    loads torch."""
    if type(graph).__module__.partition(".")[0] == "torch":
        from gradviz.torch.graph import draw as draw_tensor  # lazy: start-up (torch)

        return draw_tensor(graph, **options)  # type: ignore[arg-type]
    from gradviz.notebook import draw as draw_value  # lazy: start-up

    return draw_value(graph, **options)  # type: ignore[arg-type]


def _functions() -> tuple[str, ...]:
    """The op table's one-input ops, read when first asked for (as every name here)."""
    return tuple(importlib.import_module("gradviz.ops").UNARY_OPS)


def __getattr__(name: str) -> object:
    """Imports a public name on first use, and keeps it (the next lookup is direct)."""
    if name == "__version__":
        value: object = _version()
    elif name == "__all__":  # `from gradviz import *`, and dir()
        value = sorted([*_API, *_functions()])
    elif name in _API:
        value = getattr(importlib.import_module(_API[name]), name)
    elif not name.startswith("_") and name in _functions():
        value = getattr(importlib.import_module("gradviz.engine"), name)
    else:
        raise AttributeError(f"module 'gradviz' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__getattr__("__all__"), "__version__"})  # type: ignore[misc]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # lazy: start-up

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0.0.0+unknown"
