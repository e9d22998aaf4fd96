"""Deferred numpy. The package's one way to defer an import is an import where it is used,
tagged `# lazy: start-up` (tests/test_imports.py checks that the module it names is not
loaded anyway). The one stand-in left is `np` for the op table (gradviz.ops): its
expressions name `np.` and run on plain floats too, so a graph of floats that needs no
numpy op never imports it. `loaded_numpy` and `is_array` never import numpy: no array can
exist before it is imported.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any


class _Numpy:
    """Stands in for numpy until its first use; an attribute found once is cached (20 ns
    a use against 80 ns for an import statement, on the engine's hot paths)."""

    def __getattr__(self, name: str) -> Any:
        value = getattr(importlib.import_module("numpy"), name)
        setattr(self, name, value)
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
