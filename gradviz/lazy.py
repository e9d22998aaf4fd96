"""Deferred imports. The package's one way is an import where it is used, tagged
`# lazy: start-up` (tests/test_imports.py checks that the module it names is not loaded
anyway). A stand-in from here serves where a module is asked for on hot paths or in many
branches: numpy in the engine's ops (`from gradviz.lazy import np`: a graph of plain
floats never imports it; an attribute found once is cached, 20 ns a use against 80 ns for
an import statement), and a command's optional parts (`on_demand("gradviz.cli.pictures")`:
`gradviz train --quiet` loads no renderer). `is_array` never imports numpy: no array can
exist before it is imported.
"""

from __future__ import annotations

import importlib
import sys
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
