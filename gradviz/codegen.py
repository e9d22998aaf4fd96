"""Python written by gradviz and compiled: where it is made readable when it fails.

Code is generated in two places, both from the op table's own expressions (`gradviz.ops`)
and this package's templates, never from user text: the op table's callables (`forward`,
`local`, one short function per row) and the trainer's straight-line network code
(`gradviz.train`, which pays: see bench/README.md). The engine (`gradviz.engine`) has none.

Every text compiled here is registered with `linecache` under a file name that says what
it is (`<gradviz mul>`, `<gradviz network 2-4-1: run>`), and every function is defined
under its real name, so a traceback through generated code reads like one through a file:
`File "<gradviz network 2-4-1: run>", line 12, in run`, then the line itself.
"""

from __future__ import annotations

import itertools
import linecache
import re
from collections.abc import Callable
from functools import lru_cache
from types import CodeType, FunctionType
from typing import Any

_NUMBERS = itertools.count(1)
_NOT_NAME = re.compile(r"\W")


def registered(source: str, label: str) -> str:
    """A file name for `source` (`<gradviz LABEL>`, numbered after the first of a label),
    with the text put in `linecache`, where tracebacks and `inspect` look for lines."""
    filename = f"<gradviz {label}>"
    held = linecache.cache.get(filename)
    if held is not None and held[2] != source.splitlines(True):  # another text, same label
        filename = f"<gradviz {label} #{next(_NUMBERS)}>"
    # (size, mtime, lines, name): mtime None marks a text linecache cannot reload, and
    # `linecache.checkcache` leaves it alone
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return filename


def compiled(source: str, label: str) -> CodeType:
    """`source` compiled under its registered file name (nothing runs yet)."""
    return compile(source, registered(source, label), "exec")


def identifier(name: str) -> str:
    """A function name for `name` (`pow0.5` -> `pow0_5`)."""
    name = _NOT_NAME.sub("_", name)
    return name if name.isidentifier() else f"_{name}"


@lru_cache(maxsize=512)
def _code_object(name: str, params: str, body: str) -> CodeType:
    """A function's code from one of the templates, compiled once per text."""
    source = f"def {name}({params}):\n    {body}\n"
    module = compiled(source, name)
    return next(c for c in module.co_consts if isinstance(c, CodeType))


def generated(params: str, body: str, namespace: dict[str, Any], name: str) -> Callable:
    """`body` (statements built from templates, never from user text) as the function
    `name(params)`, whose globals are `namespace` itself."""
    function_name = identifier(name)
    return FunctionType(_code_object(function_name, params, body), namespace, function_name)


def on_first_call(
    owner: object, field: str, params: str, body: str, namespace: dict[str, Any], name: str
) -> Callable:
    """A stand-in for `owner.field`, the function `generated(params, body, namespace,
    name)`: compiled when first called, then put in the stand-in's place. Most ops'
    functions are never called by a command, and compiling them all at import was a good
    part of `gradviz draw`'s start-up."""
    function: Callable | None = None

    def first_call(*args: Any) -> Any:
        nonlocal function
        if function is None:
            function = generated(params, body, namespace, name)
            object.__setattr__(owner, field, function)
        return function(*args)

    first_call.__name__ = identifier(name)
    return first_call
