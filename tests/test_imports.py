"""The package's import graph, read from the source (ast over gradviz/**/*.py).

- No cycle among module-level imports (`if TYPE_CHECKING:` blocks do not count: they never
  run). A cycle works only as long as the order of imports happens to be right.
- An import inside a function says why it is there: `# lazy: start-up` (kept out of the
  start-up of commands that do not need it; see bench/startup.py), or it is listed in
  UNTANGLE below: an import that avoids a cycle or an upward import (a lower layer reaching
  into a higher one), still to be untangled. The list may shrink, never grow.
- Downward only: every module sits in one layer of LAYERS (data flows one way: text or
  spec → graph → forward/backward → statistics → pictures and tables → files → CLI) and
  imports, at module level or inside a function, only modules of its own layer or an
  earlier one. Exceptions are listed in UPWARD with a reason.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

import gradviz

ROOT = Path(gradviz.__file__).parent
LAZY_MARK = "# lazy: start-up"

# Imports inside functions that dodge a cycle or an upward import: (module, imported) -> why.
# (model.save's import of output.write_atomic was the last: write_atomic is in files.py now.)
UNTANGLE: dict[tuple[str, str], str] = {}


def module_files() -> dict[str, Path]:
    files = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path
    return files


MODULES = module_files()


def imported(node: ast.Import | ast.ImportFrom, module: str) -> list[str]:
    """The gradviz modules an import statement loads (`from a import b`: a.b when b is a
    module, else a)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in MODULES]
    base = node.module or ""
    if node.level:  # relative: from the module's package
        package = (
            module.split(".") if MODULES[module].name == "__init__.py" else module.split(".")[:-1]
        )
        base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
    found = []
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        if sub in MODULES:
            found.append(sub)
        elif base in MODULES:
            found.append(base)
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


@cache  # (each test walks every module: read and parsed once a worker)
def source(module: str) -> tuple[str, ast.Module]:
    """The module's text and its syntax tree."""
    text = MODULES[module].read_text(encoding="utf-8")
    return text, ast.parse(text)


@cache
def module_level_imports(module: str) -> frozenset[str]:
    """What importing `module` imports at once: statements outside functions and classes'
    methods, `if`/`try` blocks included, `if TYPE_CHECKING:` excluded."""
    _, tree = source(module)
    found: set[str] = set()
    body = list(tree.body)
    while body:
        node = body.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.update(imported(node, module))
        elif isinstance(node, ast.If):
            if not _is_type_checking(node):
                body.extend(node.body)
            body.extend(node.orelse)
        elif isinstance(node, ast.Try):
            body.extend([*node.body, *node.orelse, *node.finalbody])
            for handler in node.handlers:
                body.extend(handler.body)
        elif isinstance(node, ast.ClassDef):
            body.extend(n for n in node.body if not isinstance(n, ast.FunctionDef))
        elif isinstance(node, ast.With):
            body.extend(node.body)
    found.discard(module)
    return frozenset(found)


@cache
def function_level_imports(module: str) -> tuple[tuple[int, str, tuple[str, ...]], ...]:
    """(line number, source line, gradviz modules) of every import inside a function."""
    text, tree = source(module)
    lines = text.splitlines()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Import | ast.ImportFrom):
                    targets = tuple(imported(inner, module))
                    found.add((inner.lineno, lines[inner.lineno - 1], targets))
    return tuple(sorted(found))


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_walker_sees_the_imports_it_should() -> None:
    """The checks below are only as good as the walk: pin a few known edges."""
    assert "gradviz.engine" in module_level_imports("gradviz.expr")
    assert "gradviz.errors" in module_level_imports("gradviz.expr")  # from gradviz.errors import
    assert "gradviz.render.diagram" in module_level_imports("gradviz.render")
    assert "gradviz.engine" not in module_level_imports("gradviz")  # TYPE_CHECKING only
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_at_module_level() -> None:
    graph = {module: module_level_imports(module) for module in MODULES}
    assert cycles(graph) == []


def test_every_import_inside_a_function_says_why() -> None:
    unexplained = []
    dodges_seen = set()
    for module in MODULES:
        for number, line, targets in function_level_imports(module):
            dodges = {(module, t) for t in targets} & set(UNTANGLE)
            dodges_seen |= dodges
            if LAZY_MARK not in line and not dodges:
                unexplained.append(f"{module}:{number}: {line.strip()}")
    assert unexplained == [], "mark start-up imports with '# lazy: start-up'"
    assert dodges_seen == set(UNTANGLE), "one was untangled: take it off UNTANGLE"


def outside_names(node: ast.Import | ast.ImportFrom) -> set[str]:
    """The modules outside gradviz an import statement names (`from rich.console import
    Console`: rich.console), stdlib and third-party alike."""
    if isinstance(node, ast.Import):
        names = {a.name for a in node.names}
    else:
        names = {node.module or ""} if not node.level else set()
    return {n for n in names if n and n.split(".")[0] != "gradviz"}


@cache
def loaded_on_import(module: str) -> frozenset[str]:
    """The modules importing `module` loads for certain: the gradviz modules it imports at
    module level, theirs in turn, and the outside modules any of them imports so."""
    seen, todo, outside = set(), [module], set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        todo.extend(module_level_imports(current))
        _, tree = source(current)
        typing_only = {
            id(inner)
            for node in tree.body
            if isinstance(node, ast.If) and _is_type_checking(node)
            for inner in ast.walk(node)
        }
        for node in tree.body:  # (top-level statements: what surely runs)
            if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in typing_only:
                outside |= outside_names(node)
    return frozenset((seen - {module}) | outside)


def test_a_lazy_import_is_of_a_module_not_loaded_already() -> None:
    """`# lazy: start-up` keeps a module out of start-up: false for one that the module
    importing it loads anyway (then the import goes to the top of the file)."""
    false = []
    for module in MODULES:
        text, tree = source(module)
        lines = text.splitlines()
        loaded = None
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for inner in ast.walk(node):
                if not isinstance(inner, ast.Import | ast.ImportFrom):
                    continue
                if LAZY_MARK not in lines[inner.lineno - 1]:
                    continue
                loaded = loaded_on_import(module) if loaded is None else loaded
                targets = set(imported(inner, module)) | outside_names(inner)
                if targets and targets <= loaded:
                    false.append(f"{module}:{inner.lineno}: {lines[inner.lineno - 1].strip()}")
    assert false == [], "loaded when the module is: import it at the top"


def test_the_lazy_check_would_catch_a_module_loaded_already() -> None:
    assert "gradviz.errors" in loaded_on_import("gradviz.expr")
    assert "numpy" in loaded_on_import("gradviz.stats")
    assert "numpy" not in loaded_on_import("gradviz.engine")  # numpy on first use


# -- layers: a module imports only its own layer or earlier ones ---------------------------
# docs/development.md ("How the code is laid out") shows the same list.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("errors", "text", "numbers", "files")),
    # ops.py: the op table the engine reads (issue 10 item 1); codegen.py: registers the
    # code generated from the table and by the trainer (issue 32 item 2)
    ("engine", ("codegen", "ops", "engine")),
    ("graphs and specs", ("expr", "names", "data", "spec", "nn")),
    # what is measured, as data (computing nothing): what render/ draws
    ("records", ("records",)),
    (
        "computations",
        (
            *("batched", "compile", "train", "stats", "tracing", "checking", "schema", "model"),
            *("measure", "boundary", "report"),
        ),
    ),
    ("render", ("render",)),  # render and render.*: pure, data in, text or pictures out
    # formats; the Graphviz program; the pages it draws; what a notebook shows
    # drawn: a Value's graph turned into the Diagram render/ draws
    ("output", ("output", "drawn", "layout", "pages", "drawings", "notebook")),
    ("bridges", ("torch",)),  # gradviz.torch: PyTorch at the edge (imported only when used)
    ("cli", ("cli", "__main__")),
    ("docs tools", ("docs",)),  # the fence and directive: run the CLI's commands in-process
    ("package", ("",)),  # gradviz/__init__.py: the public API, names loaded on first use
)

# Imports that go up a layer, each with its reason: (module, imported) -> why.
UPWARD: dict[tuple[str, str], str] = {}


def layer_of(module: str) -> int:
    """The index in LAYERS of a module (`gradviz.render.dot` is in layer "render")."""
    name = module.removeprefix("gradviz").removeprefix(".")
    top = name.split(".")[0]
    for i, (_, members) in enumerate(LAYERS):
        if top in members:
            return i
    raise AssertionError(f"{module} is in no layer: add it to LAYERS (and docs/development.md)")


def all_imports(module: str) -> set[str]:
    inside = {t for _, _, targets in function_level_imports(module) for t in targets}
    return module_level_imports(module) | inside


def test_every_module_has_a_layer() -> None:
    for module in MODULES:
        layer_of(module)


def test_imports_go_downward_only() -> None:
    upward = []
    for module in MODULES:
        for target in sorted(all_imports(module)):
            if layer_of(target) > layer_of(module) and (module, target) not in UPWARD:
                upward.append(
                    f"{module} ({LAYERS[layer_of(module)][0]}) imports {target} "
                    f"({LAYERS[layer_of(target)][0]})"
                )
    assert upward == []


def test_the_layer_check_would_catch_an_upward_import() -> None:
    assert layer_of("gradviz.model") < layer_of("gradviz.output")  # model.save once did this
    assert layer_of("gradviz.render.network") > layer_of("gradviz.model")
    assert layer_of("gradviz.spec") < layer_of("gradviz.train") < layer_of("gradviz.cli.grads")


# -- render/ is pure: it imports what it draws, never what loads files or computes ---------
# The modules a renderer may not import: they load files, compute or write (the report's
# numbers are computed in gradviz.report; files are read in model/data/files; dot runs in
# gradviz.layout; a Value's graph is walked into a Diagram in gradviz.drawn, never here).
# `if TYPE_CHECKING:` imports are allowed: they name a type, never run.
IMPURE_FOR_RENDER = frozenset(
    {
        "boundary",
        "cli",
        "compile",
        "data",
        "drawings",
        "drawn",
        "engine",
        "expr",
        "files",
        "checking",
        "layout",
        "measure",
        "model",
        "nn",
        "notebook",
        "output",
        "pages",
        "report",
        "schema",
        "spec",
        "stats",
        "tracing",
        "train",
    }
)


def impure_imports(module: str, text: str) -> list[str]:
    """The imports of `text` (the source of `module`) that a renderer may not make, as
    `line: statement`: of IMPURE_FOR_RENDER; anywhere in the file (functions too) but
    `if TYPE_CHECKING:` blocks."""
    tree = ast.parse(text)
    lines = text.splitlines()
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and _is_type_checking(node)
        for inner in ast.walk(node)
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom) or id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            targets = [(a.name, None) for a in node.names]
        else:
            base = node.module or ""  # (render/ imports absolutely)
            targets = [
                (f"{base}.{a.name}", None) if f"{base}.{a.name}" in MODULES else (base, a.name)
                for a in node.names
            ]
        for target, _ in targets:
            parts = target.split(".")
            if parts[0] != "gradviz" or len(parts) < 2 or parts[1] not in IMPURE_FOR_RENDER:
                continue
            found.append(f"{module}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    return sorted(set(found))


RENDER_MODULES = [m for m in MODULES if m == "gradviz.render" or m.startswith("gradviz.render.")]


def test_render_modules_import_no_computing_or_loading_module() -> None:
    impure = []
    for module in RENDER_MODULES:
        impure += impure_imports(module, MODULES[module].read_text(encoding="utf-8"))
    assert impure == [], "render/ draws data it is handed: compute or load it elsewhere"


# gradviz.names walks Values (and imports the engine): render/ takes a name from
# gradviz.text or from the records it is handed.
REACH_FORBIDDEN = IMPURE_FOR_RENDER | {"names"}


def test_render_modules_reach_no_computing_module_through_another() -> None:
    """Stricter than the rule above: nor through the modules they import (module-level
    imports onward, the render module's own lazy ones too)."""
    reached = []
    for module in RENDER_MODULES:
        seen: set[str] = set()
        todo = [module]
        while todo:
            current = todo.pop()
            imports = all_imports(current) if current == module else module_level_imports(current)
            todo += sorted(imports - seen)
            seen |= imports
        reached += [
            f"{module} reaches {target}"
            for target in sorted(seen)
            if target.split(".")[1:2] and target.split(".")[1] in REACH_FORBIDDEN
        ]
    assert reached == []


@pytest.mark.parametrize(
    ("source", "refused"),
    [
        ("from gradviz.train import is_correct", True),
        ("from gradviz.stats import diagnose, Diagnosis", True),
        ("import gradviz.model", True),
        ("from gradviz import spec", True),
        ("def f():\n    from gradviz.expr import parse_program  # lazy: start-up", True),
        ("from gradviz.stats import Diagnosis, series", True),
        ("from gradviz.records import Diagnosis, series", False),
        ("from gradviz.numbers import fmt", False),
        ("if TYPE_CHECKING:\n    from gradviz.report import Report", False),
        # a Value's graph is walked in gradviz.drawn: render/ takes the Diagram
        ("from gradviz.engine import Constant, topological_order", True),
        ("def f(v):\n    from gradviz.engine import topological_order  # lazy: start-up", True),
        ("import gradviz.engine", True),
        ("from gradviz.drawn import diagram_from_value", True),
        ("if TYPE_CHECKING:\n    from gradviz.engine import Number, Value", False),
    ],
)
def test_the_render_rule_would_catch_an_impure_import(source: str, refused: bool) -> None:
    assert bool(impure_imports("gradviz.render.example", source)) is refused


# -- docs/development.md's map is this file's --------------------------------------------

DEVELOPMENT = ROOT.parent / "docs" / "development.md"


def _development_blocks() -> list[str]:
    text = DEVELOPMENT.read_text(encoding="utf-8")
    start = text.index("## The map")
    return text[start:].split("```")[1::2][:2]


def test_the_developers_map_shows_these_layers() -> None:
    """The layers block of docs/development.md is LAYERS, in order, member for member."""
    shown = []
    for line in _development_blocks()[0].strip().splitlines():
        name, members = line.split("  ", 1)
        shown.append((name.strip(), tuple(m.strip() for m in members.split(","))))
    expected = [
        (name, members if members != ("",) else ("gradviz/__init__.py",))
        for name, members in LAYERS
    ]
    assert shown == expected


def test_the_developers_map_names_every_module() -> None:
    """A newcomer's map that forgets a module sends them looking: each file is named."""
    block = _development_blocks()[1]
    missing = [
        str(path.relative_to(ROOT))
        for path in sorted(ROOT.rglob("*.py"))
        if path.name != "__init__.py" and path.name != "__main__.py" and path.name not in block
    ]
    assert not missing, f"docs/development.md's map does not name {missing}"
