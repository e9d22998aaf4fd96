"""gradviz.torch's drawings against torchviz's, on the five models of
`gradviz.torch.examples` (an MLP, a 10-layer sigmoid stack, a small CNN, a transformer
block, an LSTM), in one run.

For each model, after one recorded forward and backward pass (`gradviz.torch.record`):
gradviz's diagram and SVG at the module level and at the op level, against torchviz's
`make_dot(loss, params).render(format="svg")` of the same loss and torchview's
`draw_graph(model, input_data, expand_nested=True).visual_graph.render(format="svg")` (a
module view, which runs the forward pass itself). All three lay out with the same program:
the system Graphviz `dot` by default (what a user has: torchviz's `graphviz` package runs
`dot` from PATH), or graphviz-pure with `pure` (torchviz then finds it as `dot` on a PATH
made here). The time is CPU time, this process's and its children's (the layout runs in a
child process; the Python part alone is printed after): on a shared machine the wall clock
also counts the time other jobs held the core (the load average is printed before and
after). The three run interleaved in ROUNDS rounds; medians, torch on one thread. Also the
recording's own cost: the forward and backward pass recorded against plain (medians of as
many).

With `mixed`, gradviz
lays out with graphviz-pure (a dependency of gradviz, what the docs' pictures are drawn
with) and torchviz and torchview with the system `dot` (theirs: they need one).

Usage: `python bench/torch_draw.py [system|pure|mixed]` (needs torch, and
`pip install torchviz torchview`).
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROUNDS = 15


def _cpu() -> tuple[float, float]:
    """CPU seconds so far: this process's, and its finished children's (the layout)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time(), children.ru_utime + children.ru_stime


def _timed(work) -> tuple[float, float]:
    """The CPU time `work` takes, in this process (Python) and in its children."""
    own, children = _cpu()
    work()
    own_after, children_after = _cpu()
    return own_after - own, children_after - children


# The medians of the last `_medians`' Python part (this process's CPU), work by work.
PYTHON_PART: list[float] = []


def _medians(*works) -> list[float]:
    """Each work's median time over ROUNDS rounds, the works interleaved in each (and in
    PYTHON_PART, the median of its Python part)."""
    times: list[list[tuple[float, float]]] = [[] for _ in works]
    for _ in range(ROUNDS):
        for spent, work in zip(times, works, strict=True):
            spent.append(_timed(work))
    PYTHON_PART[:] = [statistics.median(own for own, _ in spent) for spent in times]
    return [statistics.median(own + child for own, child in spent) for spent in times]


def main() -> None:
    import torch

    torch.set_num_threads(1)
    import gradviz.torch as gt
    from gradviz.layout import find_dot
    from gradviz.output import render
    from gradviz.render.diagram import preferred_rankdir
    from gradviz.torch.examples import MODELS

    kind = sys.argv[1] if len(sys.argv) > 1 else "system"
    if kind not in ("system", "pure", "mixed"):
        raise SystemExit("usage: python bench/torch_draw.py [system|pure|mixed]")
    # mixed: gradviz on graphviz-pure (its own dependency), the others on the system dot
    os.environ["GRADVIZ_DOT"] = "pure" if kind == "mixed" else kind
    program = find_dot("svg")
    folder = Path(tempfile.mkdtemp(prefix="gradviz-bench-"))
    if kind == "pure":  # torchviz's `graphviz` package runs `dot`: graphviz-pure as `dot`
        (folder / "dot").symlink_to(program.path)
        os.environ["PATH"] = f"{folder}{os.pathsep}{os.environ['PATH']}"
    others = shutil.which("dot") if kind == "mixed" else "the same"
    print(f"layout: gradviz {program.path} ({kind}); torchviz and torchview: {others}")
    print("load average before: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    try:
        from torchviz import make_dot
    except ImportError:
        make_dot = None
    try:
        from torchview import draw_graph
    except ImportError:
        draw_graph = None
    print(
        "| model | gradviz module | gradviz op | torchviz | torchview | module / torchviz "
        "| op / torchviz | module / torchview | recorded fwd+bwd / plain |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    python_parts: dict[str, list[float]] = {}
    for name, make in MODELS.items():
        net, loss_of = make()
        with gt.record(net) as rec:
            loss = loss_of()
            loss.backward()

        def ours(level: str) -> None:
            d = rec.diagram(level=level)
            render(d, "svg", rankdir=preferred_rankdir(d), program=program)

        params = dict(net.named_parameters())
        out = folder / name

        def torchviz(loss=loss, params=params, out=out) -> None:
            if make_dot is not None:
                make_dot(loss, params=params).render(out, format="svg")

        seen: dict[str, tuple] = {}  # the model's input, for torchview (it runs the forward)
        hook = net.register_forward_pre_hook(lambda m, args, seen=seen: seen.setdefault("x", args))
        loss_of()
        hook.remove()

        def torchview(net=net, x=seen["x"], out=out) -> None:
            if draw_graph is not None:
                drawn = draw_graph(net, input_data=list(x), expand_nested=True)
                drawn.visual_graph.render(f"{out}-view", format="svg")

        module, op, theirs, view = _medians(
            lambda: ours("module"), lambda: ours("op"), torchviz, torchview
        )
        python_parts[name] = PYTHON_PART[:3]
        theirs = theirs if make_dot is not None else float("nan")
        view = view if draw_graph is not None else float("nan")

        def plain(loss_of=loss_of) -> None:
            loss_of().backward()

        def recorded(net=net, loss_of=loss_of) -> None:
            with gt.record(net):
                loss_of().backward()

        recorded_time, plain_time = _medians(recorded, plain)
        overhead = recorded_time / plain_time
        print(
            f"| {name} | {1000 * module:.0f} ms | {1000 * op:.0f} ms | "
            f"{1000 * theirs:.0f} ms | {1000 * view:.0f} ms | {module / theirs:.2f} | "
            f"{op / theirs:.2f} | {module / view:.2f} | {overhead:.1f}× |"
        )
    print("load average after: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    print("\nThe Python part of each (this process's CPU, medians; the rest is the layout's):")
    print("| model | gradviz module | gradviz op | torchviz |\n|---|---|---|---|")
    for name, parts in python_parts.items():
        print(f"| {name} | " + " | ".join(f"{1000 * t:.1f} ms" for t in parts) + " |")
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
