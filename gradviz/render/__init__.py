"""Renderers: pure functions from a `Diagram` to text, pictures or a rich renderable.

render/ draws the data it is handed and never prints or writes files; a Value's graph is
turned into a Diagram in `gradviz.drawn` (whose `to_dot`, `to_mermaid`, ... take a Value
or a Diagram).
"""

from __future__ import annotations

from gradviz.render.diagram import Diagram, Edge, Node

__all__ = ["Diagram", "Edge", "Node"]
