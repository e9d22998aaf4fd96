"""gradviz for PyTorch: watch a training loop's gradients layer by layer (`watch`), draw a
loss's autograd graph with its data and gradients (`draw`; every op's, kept by `record`),
and move an MLP between gradviz and `torch.nn` (`to_module`, `from_module`).

Imported only when used (`import gradviz` never imports torch); torch is the optional
extra `pip install 'gradviz[torch]'`. Each name loads its own module on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

_API = {
    "watch": "gradviz.torch.watch",
    "Recorder": "gradviz.torch.watch",
    "draw": "gradviz.torch.draw",
    "diagram": "gradviz.torch.draw",
    "record": "gradviz.torch.record",
    "Recording": "gradviz.torch.record",
    "to_module": "gradviz.torch.convert",
    "from_module": "gradviz.torch.convert",
}
__all__ = sorted(_API)

if TYPE_CHECKING:
    from gradviz.torch.convert import from_module as from_module
    from gradviz.torch.convert import to_module as to_module
    from gradviz.torch.draw import diagram as diagram
    from gradviz.torch.draw import draw as draw
    from gradviz.torch.record import Recording as Recording
    from gradviz.torch.record import record as record
    from gradviz.torch.watch import Recorder as Recorder
    from gradviz.torch.watch import watch as watch


def __getattr__(name: str) -> object:
    if name not in _API:
        raise AttributeError(f"module 'gradviz.torch' has no attribute {name!r}")
    value = getattr(importlib.import_module(_API[name]), name)
    globals()[name] = value
    return value
