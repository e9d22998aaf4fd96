"""Modules on demand: imported the first time something is asked of them.

Why: importing numpy is most of what `gradviz draw "(a+b)*c"` would cost to start, and a
graph of plain floats never needs it. Modules that use numpy only inside functions write
`from gradviz.lazy import np` and use `np.exp(...)` as before: the first attribute asked
for imports numpy, and every attribute is then cached on the stand-in. Asking whether a
value is an array must not import numpy: no array can exist before numpy is imported, so
`is_array` asks `sys.modules` instead.

The same for a command's optional parts (`on_demand("gradviz.cli.pictures")`): what only
an output option or the terminal view needs (rich, the renderers, the report) is not
imported by `gradviz train --quiet`, one stand-in at the top of the module instead of an
import inside every function that needs it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any


class _OnDemand:
    """Stands in for a module until its first use."""

    def __init__(self, name: str) -> None:
        self.__name = name

    def __getattr__(self, name: str) -> Any:
        value = getattr(importlib.import_module(self.__name), name)
        setattr(self, name, value)  # found directly from now on
        return value


def on_demand(name: str) -> Any:
    """A stand-in for the module `name` that imports it on the first attribute asked for
    (the module itself when it is already imported)."""
    return sys.modules.get(name) or _OnDemand(name)


if TYPE_CHECKING:
    import numpy as np
else:
    np = _OnDemand("numpy")


def loaded_numpy() -> ModuleType | None:
    """The numpy module if something has imported it, else None (never imports it)."""
    return sys.modules.get("numpy")


def is_array(x: object) -> bool:
    """True for a numpy array, without importing numpy."""
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(x, numpy.ndarray)


def callable_module(name: str, function: Callable[..., Any]) -> None:
    """Lets the module `name` be called as `function` (`gradviz.trace(L)`), while
    `import gradviz.trace as t` still gives the module: the function's name is the module's."""

    class CallableModule(ModuleType):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return function(*args, **kwargs)

    CallableModule.__call__.__doc__ = function.__doc__
    sys.modules[name].__class__ = CallableModule
