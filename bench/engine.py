"""gradviz's engine against micrograd (the PyPI package), side by side in one run.

Every timed figure is the median of RUNS runs, the two engines interleaved, with the
garbage collector ON (as users run) and `gc.collect()` before each run, so that one
engine's garbage is not collected on the other's clock. Node counts are the same for
both engines: the nodes of the graph as a walk over it lists them, constants included
(x*1.0001 has two). Both engines make a Value object for each (gradviz a Constant for a
number operand): nodes/s and bytes per node are per graph node.

micrograd sorts its graph recursively, so for the 1e5-step graphs (and only for
micrograd) it runs in a thread with a 512 MiB stack and a raised recursion limit,
restored afterwards. gradviz runs in the main thread at the default limit.

Memory is measured with tracemalloc on a 1e4-step chain for both engines: tracemalloc
walks the whole Python stack on every allocation, so under micrograd's recursion (one
frame per node) its cost grows with the square of the graph (1e4 steps: 4 s, 2e4: 18 s,
1e5: far too long). Bytes per node barely depend on the chain's length (from 2.5e3 to 2e4
steps: gradviz 84 at each, micrograd 669 at each but 722 at 5e3); the 1e6-step chain
adds an RSS figure for gradviz at full scale.

Run: `make bench`, or `python bench/engine.py` with the `bench` extra installed.
"""

from __future__ import annotations

import gc
import os
import statistics
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import version

from rich.console import Console
from rich.table import Table

from gradviz.engine import Value, topological_order

try:
    from micrograd.engine import Value as MicroValue
except ImportError:  # pragma: no cover - a bench-only dependency
    MicroValue = None

RUNS = 5
CHAIN_STEPS = 100_000  # x = x*1.0001 + 0.1: 4 nodes a step (2 constants, *, +), plus x
WIDE_TERMS = 100_000  # sum of x_i*y_i: 4 nodes a term (x_i, y_i, *, +), minus one +
MEMORY_STEPS = 10_000
LONG_CHAIN_STEPS = 1_000_000
DEFAULT_RECURSION_LIMIT = sys.getrecursionlimit()
BIG_STACK = 512 * 1024 * 1024

TARGET_SPEEDUP = 3.0
TARGET_BYTES_PER_NODE = 250.0


# -- workloads (the same code drives both engines) ------------------------------------------


def chain(value: type, steps: int):
    x = value(1.0)
    for _ in range(steps):
        x = x * 1.0001 + 0.1
    return x


def chain_nodes(steps: int) -> int:
    return 1 + 4 * steps


def wide_sum(value: type, terms: int):
    xs = [value((i % 100) / 100) for i in range(terms)]
    ys = [value(1.0 - (i % 37) / 37) for i in range(terms)]
    total = xs[0] * ys[0]
    for i in range(1, terms):
        total = total + xs[i] * ys[i]
    return total


def wide_nodes(terms: int) -> int:
    return 4 * terms - 1


def count_micrograd_nodes(root) -> int:
    """micrograd's graph size, walked iteratively (to check the formulas above)."""
    seen, stack = {id(root)}, [root]
    while stack:
        for child in stack.pop()._prev:
            if id(child) not in seen:
                seen.add(id(child))
                stack.append(child)
    return len(seen)


# -- running micrograd where its recursion fits ----------------------------------------------


def in_big_stack(work: Callable[[], object]) -> object:
    """Run `work` in a thread with a big stack and a raised recursion limit (micrograd only)."""
    result: list[object] = []
    failure: list[BaseException] = []

    def target() -> None:
        sys.setrecursionlimit(10_000_000)
        try:
            result.append(work())
        except BaseException as error:  # handed back to the caller
            failure.append(error)
        finally:
            sys.setrecursionlimit(DEFAULT_RECURSION_LIMIT)

    previous = threading.stack_size(BIG_STACK)
    try:
        thread = threading.Thread(target=target)
        thread.start()
        thread.join()
    finally:
        threading.stack_size(previous)
    if failure:
        raise failure[0]
    return result[0]


def run_ours(work: Callable[[], object]) -> object:
    assert sys.getrecursionlimit() == DEFAULT_RECURSION_LIMIT
    return work()


# -- measurements -----------------------------------------------------------------------------


def timed_build_and_backward(value: type, build: Callable, size: int) -> Callable[[], float]:
    def work() -> float:
        start = time.perf_counter()
        root = build(value, size)
        root.backward()
        elapsed = time.perf_counter() - start
        del root  # freed (or left to the collector) outside the clock
        return elapsed

    return work


@dataclass
class Timing:
    ours: list[float]
    micro: list[float]

    def median(self, which: str) -> float:
        return statistics.median(getattr(self, which))


def side_by_side(build: Callable, size: int) -> Timing:
    timing = Timing([], [])
    for run in range(RUNS):
        # Alternate who goes first, so drift on a shared machine hits both alike.
        order = ("ours", "micro") if run % 2 == 0 else ("micro", "ours")
        for who in order:
            gc.collect()
            if who == "ours":
                timing.ours.append(run_ours(timed_build_and_backward(Value, build, size)))
            else:
                work = timed_build_and_backward(MicroValue, build, size)
                timing.micro.append(in_big_stack(work))
    gc.collect()
    return timing


@dataclass
class Memory:
    retained: float  # bytes per node, graph alive after backward
    peak: float  # bytes per node, highest point during backward


def memory_per_node(value: type, steps: int) -> Callable[[], Memory]:
    def work() -> Memory:
        gc.collect()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            root = chain(value, steps)
            tracemalloc.reset_peak()
            root.backward()
            after, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        nodes = chain_nodes(steps)
        del root
        gc.collect()
        return Memory((after - base) / nodes, (peak - base) / nodes)

    return work


@dataclass
class Cycles:
    left_alive: int  # Values still alive after the last reference went: only gc can free them
    collected: int  # what gc.collect() then found


def cycles_after_drop(value: type, steps: int) -> Callable[[], Cycles]:
    def count() -> int:
        return sum(1 for o in gc.get_objects() if type(o) is value)

    def work() -> Cycles:
        gc.collect()
        gc.disable()
        try:
            before = count()
            root = chain(value, steps)
            root.backward()
            del root
            left = count() - before
            return Cycles(left, gc.collect())
        finally:
            gc.enable()

    return work


@dataclass
class LongChain:
    seconds: float
    relative_error: float
    rss_per_node: float  # resident memory growth per node, graph kept after backward


def resident_bytes() -> int:
    """This process's resident set size, from /proc (Linux); 0 elsewhere."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def long_chain_at_default_limit(steps: int) -> LongChain:
    """Our 1e6-step chain (4e6 nodes) at the default recursion limit, against its closed form:
    x_n = r^n·x_0 + 0.1·(r^n - 1)/(r - 1) with r = 1.0001, so dx_n/dx_0 = r^n."""
    assert sys.getrecursionlimit() == DEFAULT_RECURSION_LIMIT
    gc.collect()
    rss = resident_bytes()
    start = time.perf_counter()
    x0 = Value(1.0)
    x = x0
    for _ in range(steps):
        x = x * 1.0001 + 0.1
    x.backward()
    seconds = time.perf_counter() - start
    rss_per_node = (resident_bytes() - rss) / chain_nodes(steps)
    exact_grad = 1.0001**steps
    exact_data = exact_grad + 0.1 * (exact_grad - 1) / 0.0001
    error = max(abs(x0.grad / exact_grad - 1), abs(x.data / exact_data - 1))
    del x, x0
    gc.collect()
    return LongChain(seconds, error, rss_per_node)


def micrograd_recursion_limit() -> tuple[int, int]:
    """The longest chain micrograd backpropagates at the default limit, and the first it cannot."""
    assert sys.getrecursionlimit() == DEFAULT_RECURSION_LIMIT

    def works(steps: int) -> bool:
        try:
            chain(MicroValue, steps).backward()
        except RecursionError:
            return False
        return True

    low, high = 1, 10_000  # works(low), not works(high)
    assert works(low) and not works(high)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if works(mid) else (low, mid)
    return low, high


# -- report -------------------------------------------------------------------------------------


def rate(nodes: int, seconds: float) -> str:
    return f"{nodes / seconds / 1e6:.2f} M"


def met(ok: bool) -> str:
    return "[green]yes[/]" if ok else "[bold red]NO[/]"


def speed_table() -> Table:
    table = Table(
        title="Build + backward: nodes/s (median ms); ratio of medians (range of per-run ratios)",
        caption="chain: x = x*1.0001 + 0.1;  wide sum: x_0*y_0 + x_1*y_1 + ...",
    )
    for column in ("workload", "nodes", "gradviz", "micrograd", "ratio", "target"):
        table.add_column(column, justify="left" if column == "workload" else "right")
    workloads = (
        ("chain, 1e5 steps", chain, CHAIN_STEPS, chain_nodes(CHAIN_STEPS)),
        ("wide sum, 1e5 terms", wide_sum, WIDE_TERMS, wide_nodes(WIDE_TERMS)),
    )
    for name, build, size, nodes in workloads:
        timing = side_by_side(build, size)
        ours, micro = timing.median("ours"), timing.median("micro")
        ratio = micro / ours
        paired = [m / o for o, m in zip(timing.ours, timing.micro, strict=True)]
        table.add_row(
            name,
            f"{nodes:,}",
            f"{rate(nodes, ours)}/s ({ours * 1e3:.0f})",
            f"{rate(nodes, micro)}/s ({micro * 1e3:.0f})",
            f"{ratio:.2f}x ({min(paired):.1f}-{max(paired):.1f})",
            f">= {TARGET_SPEEDUP:g}x {met(ratio >= TARGET_SPEEDUP)}",
        )
    return table


def memory_table() -> Table:
    table = Table(title=f"Bytes per node (tracemalloc, chain of {MEMORY_STEPS:,} steps)")
    for column in ("measure", "gradviz", "micrograd", "ratio", "target"):
        table.add_column(column, justify="left" if column == "measure" else "right")
    ours = run_ours(memory_per_node(Value, MEMORY_STEPS))
    micro = in_big_stack(memory_per_node(MicroValue, MEMORY_STEPS))
    table.add_row(
        "graph kept after backward",
        f"{ours.retained:.0f}",
        f"{micro.retained:.0f}",
        f"{micro.retained / ours.retained:.1f}x less",
        f"<= {TARGET_BYTES_PER_NODE:g} {met(ours.retained <= TARGET_BYTES_PER_NODE)}",
    )
    table.add_row(
        "peak during backward", f"{ours.peak:.0f}", f"{micro.peak:.0f}", "", "(for information)"
    )
    return table


def cycles_table() -> Table:
    table = Table(title=f"Reference cycles: chain of {CHAIN_STEPS:,} steps, dropped after backward")
    for column in ("after `del root`", "gradviz", "micrograd", "target"):
        table.add_column(column, justify="left" if column == "after `del root`" else "right")
    ours = run_ours(cycles_after_drop(Value, CHAIN_STEPS))
    micro = in_big_stack(cycles_after_drop(MicroValue, CHAIN_STEPS))
    table.add_row(
        "nodes only gc can free",
        f"{ours.left_alive:,}",
        f"{micro.left_alive:,}",
        f"0 {met(ours.left_alive == 0)}",
    )
    table.add_row(
        "objects gc.collect() finds",
        f"{ours.collected:,}",
        f"{micro.collected:,}",
        f"0 {met(ours.collected == 0)}",
    )
    return table


def recursion_table() -> tuple[Table, LongChain]:
    table = Table(title=f"Deep graphs at the default recursion limit ({DEFAULT_RECURSION_LIMIT})")
    table.add_column("engine")
    table.add_column("result")
    long = long_chain_at_default_limit(LONG_CHAIN_STEPS)
    table.add_row(
        "gradviz",
        f"{LONG_CHAIN_STEPS:,}-step chain ({chain_nodes(LONG_CHAIN_STEPS):,} nodes): build + "
        f"backward {long.seconds:.1f} s ({rate(chain_nodes(LONG_CHAIN_STEPS), long.seconds)}/s), "
        f"relative error vs closed form {long.relative_error:.1e}, "
        f"RSS growth {long.rss_per_node:.0f} B/node",
    )
    longest, first_failure = micrograd_recursion_limit()
    table.add_row(
        "micrograd",
        f"RecursionError from a {first_failure:,}-step chain on (longest that works: {longest:,})",
    )
    return table, long


def main() -> None:
    console = Console(highlight=False)
    if not console.is_terminal:
        console.width = 110
    if MicroValue is None:
        raise SystemExit("micrograd is not installed: run `make bench` (pip install -e '.[bench]')")

    # The node counts used for nodes/s agree with both engines' actual graphs.
    assert len(topological_order(chain(Value, 50))) == chain_nodes(50)
    assert count_micrograd_nodes(chain(MicroValue, 50)) == chain_nodes(50)
    assert len(topological_order(wide_sum(Value, 50))) == wide_nodes(50)
    assert count_micrograd_nodes(wide_sum(MicroValue, 50)) == wide_nodes(50)

    console.print(
        f"gradviz vs micrograd {version('micrograd')}: median of {RUNS} interleaved runs, "
        f"gc on; Python {sys.version.split()[0]}, {os.cpu_count()} CPUs"
    )
    console.print(speed_table())
    console.print(memory_table())
    console.print(cycles_table())
    table, long = recursion_table()
    console.print(table)
    if long.relative_error > 1e-8:
        raise SystemExit("the 1e6-step chain disagrees with its closed form")


if __name__ == "__main__":
    main()
