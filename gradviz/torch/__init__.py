"""gradviz for PyTorch: watch a training loop's gradients layer by layer (`watch`,
`Recorder`), draw a loss's autograd graph with its data and gradients (`draw`,
`diagram`; every op's, kept by `record`, a `Recording`), and move an MLP between gradviz
and `torch.nn` (`to_module`, `from_module`).

Imported only when used (`import gradviz` never imports torch); torch is the optional
extra `pip install 'gradviz-backprop[torch]'`. Each name loads its module on first use; no
module here is named like a function it exports (`recorder`, `graph`, `recording`,
`convert`), so `from gradviz.torch import watch, draw, record, Recorder` gives the
functions in any order.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

_API = {
    "watch": "gradviz.torch.recorder",
    "Recorder": "gradviz.torch.recorder",
    "draw": "gradviz.torch.graph",
    "diagram": "gradviz.torch.graph",
    "record": "gradviz.torch.recording",
    "Recording": "gradviz.torch.recording",
    "to_module": "gradviz.torch.convert",
    "from_module": "gradviz.torch.convert",
}
__all__ = sorted(_API)

if TYPE_CHECKING:
    from gradviz.torch.convert import from_module as from_module
    from gradviz.torch.convert import to_module as to_module
    from gradviz.torch.graph import diagram as diagram
    from gradviz.torch.graph import draw as draw
    from gradviz.torch.recorder import Recorder as Recorder
    from gradviz.torch.recorder import watch as watch
    from gradviz.torch.recording import Recording as Recording
    from gradviz.torch.recording import record as record


def __getattr__(name: str) -> object:
    if name not in _API:
        raise AttributeError(f"module 'gradviz.torch' has no attribute {name!r}")
    value = getattr(importlib.import_module(_API[name]), name)
    globals()[name] = value
    return value
