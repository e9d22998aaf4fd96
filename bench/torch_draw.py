"""gradviz.torch's drawings against torchviz's, on the five models of the tests (an MLP,
a 10-layer sigmoid stack, a small CNN, a transformer block, an LSTM), in one run.

For each model, after one recorded forward and backward pass (`gradviz.torch.record`):
gradviz's diagram and SVG at the module level and at the op level, against torchviz's
`make_dot(loss, params).render(format="svg")` of the same loss. Both lay out with the
same program: graphviz-pure (torchviz's `graphviz` package finds it as `dot` on a PATH
made here). Medians of 7 wall-clock runs, torch on one thread. Also the recording's own
cost: the forward and backward pass recorded against plain.

Usage: `python bench/torch_draw.py` (needs torch and `pip install torchviz`).
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

RUNS = 7


def _median(work) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    import torch

    torch.set_num_threads(1)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from torch_models import MODELS

    import gradviz.torch as gt
    from gradviz.output import render
    from gradviz.render.diagram import preferred_rankdir
    from gradviz.tools.samples import docs_program

    program = docs_program()
    folder = Path(tempfile.mkdtemp(prefix="gradviz-bench-"))
    (folder / "dot").symlink_to(shutil.which("graphviz-pure") or program.path)
    os.environ["PATH"] = f"{folder}{os.pathsep}{os.environ['PATH']}"
    try:
        from torchviz import make_dot
    except ImportError:
        make_dot = None
    print("| model | gradviz module | gradviz op | torchviz | recorded fwd+bwd / plain |")
    print("|---|---|---|---|---|")
    for name, make in MODELS.items():
        net, loss_of = make()
        with gt.record(net) as rec:
            loss = loss_of()
            loss.backward()

        def ours(level: str) -> None:
            d = rec.diagram(level=level)
            render(d, "svg", rankdir=preferred_rankdir(d), program=program)

        module, op = _median(lambda: ours("module")), _median(lambda: ours("op"))
        theirs = float("nan")
        if make_dot is not None:
            params = dict(net.named_parameters())
            out = folder / name
            theirs = _median(
                lambda loss=loss, params=params, out=out: make_dot(loss, params=params).render(
                    out, format="svg"
                )
            )

        def plain(loss_of=loss_of) -> None:
            loss_of().backward()

        def recorded(net=net, loss_of=loss_of) -> None:
            with gt.record(net):
                loss_of().backward()

        overhead = _median(recorded) / _median(plain)
        print(
            f"| {name} | {1000 * module:.0f} ms | {1000 * op:.0f} ms | "
            f"{1000 * theirs:.0f} ms | {overhead:.1f}× |"
        )
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
