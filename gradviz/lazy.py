"""numpy on demand: imported the first time something is asked of it.

Why: importing numpy is most of what `gradviz draw "(a+b)*c"` would cost to start, and a
graph of plain floats never needs it. Modules that use numpy only inside functions write
`from gradviz.lazy import np` and use `np.exp(...)` as before: the first attribute asked
for imports numpy, and every attribute is then cached on the stand-in. Asking whether a
value is an array must not import numpy: no array can exist before numpy is imported, so
`is_array` asks `sys.modules` instead.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any


class _Numpy:
    """Stands in for the numpy module until its first use."""

    def __getattr__(self, name: str) -> Any:
        import numpy  # lazy: start-up

        value = getattr(numpy, name)
        setattr(self, name, value)  # found directly from now on
        return value


if TYPE_CHECKING:
    import numpy as np
else:
    np = _Numpy()


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
