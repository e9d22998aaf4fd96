"""Python written by gradviz (from the op table and our templates, never user text) and
compiled, registered in `linecache` so that a traceback shows it under real names:
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
    """A file name for `source` (`<gradviz LABEL>`, then numbered), its text in `linecache`."""
    filename = f"<gradviz {label}>"
    held = linecache.cache.get(filename)
    if held is not None and held[2] != source.splitlines(True):  # another text, same label
        filename = f"<gradviz {label} #{next(_NUMBERS)}>"
    # (size, mtime, lines, name): mtime None, so `linecache.checkcache` leaves it alone
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return filename


def compiled(source: str, label: str) -> CodeType:
    """`source` compiled under its registered file name (nothing runs yet)."""
    return compile(source, registered(source, label), "exec")


def identifier(name: str) -> str:
    # a function name for `name` (`pow0.5` -> `pow0_5`)
    name = _NOT_NAME.sub("_", name)
    return name if name.isidentifier() else f"_{name}"


@lru_cache(maxsize=512)
def _code_object(name: str, params: str, body: str) -> CodeType:
    source = f"def {name}({params}):\n    {body}\n"
    module = compiled(source, name)
    return next(c for c in module.co_consts if isinstance(c, CodeType))


def generated(params: str, body: str, namespace: dict[str, Any], name: str) -> Callable:
    """`body` (from templates, never user text) as the function `name(params)`, with
    `namespace` as its globals."""
    function_name = identifier(name)
    return FunctionType(_code_object(function_name, params, body), namespace, function_name)
