"""A sequence of frames kept as one drawing and what each frame changes on it.

The frames of a backward pass are the same graph, one step further each time. Kept as
whole diagrams, n steps of an n-node graph hold n² nodes (a network of 6,583 steps passed
5 GB); kept as changes they hold the graph once, and a frame is made when asked for.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, overload

from gradviz.render.diagram import Diagram, Edge, Node

if TYPE_CHECKING:
    from gradviz.engine import Number

EdgeKey = tuple[str, str, int]  # (source, target, index): one edge, as `Edge` names it


@dataclass(frozen=True, slots=True)
class Change:
    """What one frame changes on the drawing: the nodes lit in it (`current`; the nodes
    lit in earlier frames are `done`), the grads it sets (each one the credit received so
    far: it stays for the later frames), the edges it emphasises between (source, target)
    and the labels it writes on edges (in this frame only), and its title."""

    current: tuple[str, ...]
    title: str | None
    emphasis: tuple[tuple[str, str], ...] = ()
    grads: tuple[tuple[str, Number], ...] = ()
    labels: tuple[tuple[EdgeKey, str], ...] = ()


class Frames(Sequence[Diagram]):
    """Frames as `base` (the drawing before the first frame: its own node states, such as
    `dim`, hold where no frame changes them) and one `Change` per frame. Iterating makes
    each frame from the one before; nodes no change touches are the base's own, shared."""

    __slots__ = ("base", "changes", "_node_at", "_edges_between", "_edge_at", "_emphasised")

    def __init__(self, base: Diagram, changes: Sequence[Change]) -> None:
        self.base = base
        self.changes = tuple(changes)
        self._node_at = {n.id: i for i, n in enumerate(base.nodes)}
        self._edge_at = {(e.source, e.target, e.index): i for i, e in enumerate(base.edges)}
        self._emphasised = [i for i, e in enumerate(base.edges) if e.emphasis]
        self._edges_between: dict[tuple[str, str], list[int]] = {}
        for i, e in enumerate(base.edges):
            self._edges_between.setdefault((e.source, e.target), []).append(i)

    def __len__(self) -> int:
        return len(self.changes)

    @overload
    def __getitem__(self, index: int) -> Diagram: ...
    @overload
    def __getitem__(self, index: slice) -> list[Diagram]: ...
    def __getitem__(self, index: int | slice) -> Diagram | list[Diagram]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if not -len(self) <= index < len(self):
            raise IndexError(f"frame {index} of {len(self)}")
        index %= len(self)
        done: set[str] = set()
        grads: dict[str, Number] = {}
        for change in self.changes[:index]:
            done.update(change.current)
            grads.update(change.grads)
        change = self.changes[index]
        grads.update(change.grads)
        current = set(change.current)
        nodes = list(self.base.nodes)
        for node_id in done | current | set(grads):
            i = self._node_at[node_id]
            n = nodes[i]
            state = "current" if node_id in current else "done" if node_id in done else n.state
            nodes[i] = replace(n, state=state, grad=grads.get(node_id, n.grad))
        return self._frame(nodes, change)

    def __iter__(self) -> Iterator[Diagram]:
        nodes = list(self.base.nodes)
        lit: tuple[str, ...] = ()
        for change in self.changes:
            for node_id in lit:  # the last frame's current nodes are done
                i = self._node_at[node_id]
                nodes[i] = replace(nodes[i], state="done")
            for node_id, grad in change.grads:
                i = self._node_at[node_id]
                nodes[i] = replace(nodes[i], grad=grad)
            for node_id in change.current:
                i = self._node_at[node_id]
                nodes[i] = replace(nodes[i], state="current")
            lit = change.current
            yield self._frame(nodes, change)

    @property
    def nodes_drawn(self) -> int:
        """Nodes drawn over every frame: what drawing them all costs (each is a layout)."""
        return len(self) * len(self.base.nodes)

    def _frame(self, nodes: list[Node], change: Change) -> Diagram:
        """The frame of `change` with these nodes: its edges emphasised and labelled."""
        edges: list[Edge] = list(self.base.edges)
        # emphasis belongs to a frame: none from the base
        changed: dict[int, dict] = {i: {"emphasis": False} for i in self._emphasised}
        for pair in change.emphasis:
            for i in self._edges_between.get(pair, ()):
                changed[i] = {"emphasis": True}
        for key, label in change.labels:
            if key in self._edge_at:
                changed.setdefault(self._edge_at[key], {})["label"] = label
        for i, fields in changed.items():
            edges[i] = replace(edges[i], **fields)
        return replace(self.base, nodes=tuple(nodes), edges=tuple(edges), title=change.title)
