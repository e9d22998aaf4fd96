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
"""

from importlib.metadata import PackageNotFoundError, version

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
from gradviz.gradcheck import gradcheck  # the function (the module stays importable by name)
from gradviz.render import draw, to_json, to_mermaid
from gradviz.trace import trace  # the function (the module stays importable by name)

try:
    __version__ = version("gradviz")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

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
