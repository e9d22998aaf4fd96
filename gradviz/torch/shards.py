"""The size of a tensor that torch.distributed shards (a DTensor: FSDP2's `fully_shard`
parameters and gradients, tensor parallelism), read through each process's local shard.

A norm of a DTensor does not work today: `torch._foreach_norm` over FSDP2's gradients
fails with "Redistribution from one partial type (P(sum)) to another (_NormP(2)) is
unsupported", and `_foreach_max` fails on an empty shard (a weight with fewer rows than
processes). So the recorder reads each shard's own numbers and adds them up across the
processes that hold the shards, the exact reduction of each:

    ‖t‖₂² = Σ over shards of ‖shard‖₂²    (all_reduce SUM, then √)
    Σ|t|  = Σ over shards of Σ|shard|      (all_reduce SUM)
    max|t| = max over shards of max|shard| (all_reduce MAX; an empty shard gives 0,
                                            which never wins: |t| ≥ 0)
    NaN/inf count = Σ over shards          (all_reduce SUM)

A mesh dimension over which the tensor is `Replicate`d holds the same values on each of
its processes: nothing is added over it. A `Partial` placement (values still to be summed)
cannot be read shard by shard: a ValueError says so. A plain tensor is read as it is,
with no collective. Every process must call these functions with the same tensors, in
the same order (they run collectives), as every DDP/FSDP rank records the same steps.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.distributed as dist

try:
    from torch.distributed.tensor import DTensor
except ImportError:  # (a torch without DTensor: nothing is ever sharded)
    DTensor = None  # type: ignore[assignment,misc]


def is_sharded(t: torch.Tensor) -> bool:
    """Whether `t` is a DTensor (its values spread over processes)."""
    return DTensor is not None and isinstance(t, DTensor)


def local(t: torch.Tensor) -> torch.Tensor:
    """The part of `t` this process holds (all of it for a plain tensor)."""
    return t.to_local() if is_sharded(t) else t


def _shard_groups(t: torch.Tensor) -> tuple:
    """The process groups over which `t`'s shards are to be added up: one per mesh
    dimension on which it is sharded."""
    if not is_sharded(t):
        return ()
    groups = []
    for dim, placement in enumerate(t.placements):
        if placement.is_shard():
            groups.append(t.device_mesh.get_group(dim))
        elif placement.is_partial():
            raise ValueError(
                f"a DTensor with a Partial placement ({placement}) cannot be read shard by "
                "shard: its values are still to be summed"
            )
    return tuple(groups)


def _reduce(rows: list[torch.Tensor], groups_of: list[tuple], op: dist.ReduceOp) -> None:
    """All-reduce, in place, the rows that share the same groups: one collective per
    group for all of them."""
    by_groups: dict[tuple, list[int]] = {}
    for i, groups in enumerate(groups_of):
        if groups:
            by_groups.setdefault(groups, []).append(i)
    for groups, members in by_groups.items():
        flat = torch.stack([rows[i] for i in members])
        for group in groups:
            dist.all_reduce(flat, op=op, group=group)
        for k, i in enumerate(members):
            rows[i] = flat[k]


def sizes(tensors: Sequence[torch.Tensor]) -> torch.Tensor:
    """(‖t‖₂, Σ|t|, max|t|) of each whole tensor, as a float64 tensor of shape (n, 3) on
    the tensors' device; DTensors through their shards (see the module's docstring)."""
    if not tensors:
        return torch.zeros((0, 3), dtype=torch.float64)
    sums, maxima, groups_of = [], [], []
    for t in tensors:
        part = local(t).detach()
        magnitude = part.abs().to(torch.float64)
        top = magnitude.max() if part.numel() else magnitude.new_zeros(())
        sums.append(torch.stack([(magnitude * magnitude).sum(), magnitude.sum()]))
        maxima.append(top.reshape(1))
        groups_of.append(_shard_groups(t))
    _reduce(sums, groups_of, dist.ReduceOp.SUM)
    _reduce(maxima, groups_of, dist.ReduceOp.MAX)
    squares = torch.stack([s[0] for s in sums])
    return torch.stack(
        [squares.sqrt(), torch.stack([s[1] for s in sums]), torch.cat(maxima)], dim=1
    )


def nonfinite_counts(tensors: Sequence[torch.Tensor]) -> list[int]:
    """The number of NaN/inf entries of each whole tensor (shards added up)."""
    counts, groups_of = [], []
    for t in tensors:
        part = local(t).detach()
        counts.append((~torch.isfinite(part)).sum().to(torch.float64).reshape(1))
        groups_of.append(_shard_groups(t))
    _reduce(counts, groups_of, dist.ReduceOp.SUM)
    return [round(float(c)) for c in counts]
