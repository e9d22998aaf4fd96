"""Two checkouts' torch drawings against each other and torchviz, in one run (issue 30).

Two worker processes, one a checkout (its PYTHONPATH), each with the five models of
`gradviz.torch.examples` recorded once; this driver asks them for one drawing at a time
(module view, op view, torchviz's `make_dot(...).render()`), alternating which goes first
each round. CPU time, each worker's own and its children's (the layout), medians. Each
checkout lays out with the program `GRADVIZ_DOT_BEFORE` / `GRADVIZ_DOT_AFTER` chooses
(`system`, the default, or `auto`: what a user gets); torchviz always with the system `dot`.
torchviz is timed in both workers, its figure the median of both.

Usage: `python bench/torch_draw_ab.py BEFORE_CHECKOUT AFTER_CHECKOUT [ROUNDS]` (needs torch
and torchviz).
"""

import os
import statistics
import subprocess
import sys

WORKER = r"""
import os, resource, sys, time, tempfile
from pathlib import Path
import torch
torch.set_num_threads(1)
import gradviz.torch as gt
from gradviz.layout import find_dot
from gradviz.output import render
from gradviz.render.diagram import preferred_rankdir
from gradviz.torch.examples import MODELS
from torchviz import make_dot
program = None if os.environ["GRADVIZ_DOT"] == "auto" else find_dot("svg")
folder = Path(tempfile.mkdtemp())
works = {}
for name, make in MODELS.items():
    net, loss_of = make()
    with gt.record(net) as rec:
        loss = loss_of(); loss.backward()
    def ours(level, rec=rec):
        d = rec.diagram(level=level)
        render(d, "svg", rankdir=preferred_rankdir(d), program=program)
    params = dict(net.named_parameters())
    works[(name, "module")] = lambda ours=ours: ours("module")
    works[(name, "op")] = lambda ours=ours: ours("op")
    def torchviz(loss=loss, params=params, out=folder / name):
        make_dot(loss, params=params).render(out, format="svg")
    works[(name, "tv")] = torchviz
def cpu():
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + c.ru_utime + c.ru_stime
print("ready", flush=True)
for line in sys.stdin:
    name, level = line.split()
    a = cpu(); works[(name, level)](); b = cpu()
    print(b - a, flush=True)
"""
if len(sys.argv) < 3:
    raise SystemExit("usage: python bench/torch_draw_ab.py BEFORE AFTER [ROUNDS]")
paths = {"before": sys.argv[1], "after": sys.argv[2]}
procs = {}
for tag, path in paths.items():
    dot = os.environ.get(f"GRADVIZ_DOT_{tag.upper()}", "system")
    env = dict(os.environ, PYTHONPATH=path, GRADVIZ_DOT=dot)
    procs[tag] = subprocess.Popen(
        [sys.executable, "-c", WORKER],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=path,
    )
    assert procs[tag].stdout.readline().strip() == "ready"
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 21
models = ["mlp", "deep", "cnn", "transformer", "lstm"]
times = {}
print("load average before: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()), flush=True)
for r in range(ROUNDS):
    for m in models:
        order = list(paths) if r % 2 == 0 else list(reversed(paths))
        for level in ("module", "op", "tv"):
            for tag in order:
                p = procs[tag]
                p.stdin.write(f"{m} {level}\n")
                p.stdin.flush()
                times.setdefault((tag, m, level), []).append(float(p.stdout.readline()))
print("load average after: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
for p in procs.values():
    p.stdin.close()
    p.wait()
med = {k: 1000 * statistics.median(v) for k, v in times.items()}
print(
    "| model | level | before | after | torchviz (before's / after's worker) "
    "| before / torchviz | after / torchviz |"
)
print("|---|---|---|---|---|---|---|")
for m in models:
    tv = statistics.median(times[("before", m, "tv")] + times[("after", m, "tv")]) * 1000
    for level in ("module", "op"):
        b, a = med[("before", m, level)], med[("after", m, level)]
        tv_b, tv_a = med[("before", m, "tv")], med[("after", m, "tv")]
        print(
            f"| {m} | {level} | {b:.1f} ms | {a:.1f} ms | {tv:.1f} ms ({tv_b:.1f} / {tv_a:.1f}) "
            f"| {b / tv:.2f} | {a / tv:.2f} |"
        )
