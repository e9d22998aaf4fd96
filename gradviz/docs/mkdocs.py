"""The `gradviz` fence in MkDocs: a SuperFences custom fence and the plugin beside it.

mkdocs.yml:

    markdown_extensions:
      - pymdownx.superfences:
          custom_fences:
            - name: gradviz
              class: gradviz
              format: !!python/name:gradviz.docs.mkdocs.fence_format
              validator: !!python/name:gradviz.docs.mkdocs.fence_validator
    plugins:
      - gradviz          # cache_dir: …, base: … (where the commands run; mkdocs.yml's folder)

SuperFences renders a block as plain code when its formatter raises, so the formatter
never raises: it returns an error box and records the error with its page and line, and
the plugin reports it (a warning; under `mkdocs build --strict`, an error that stops the
build). The line comes from the plugin's own scan of the page's Markdown.
"""

from __future__ import annotations

import logging
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from mkdocs.config import config_options
from mkdocs.config.base import Config
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin

from gradviz.docs.fence import Cache, FenceError, default_cache_dir, error_box, render_fence

log = logging.getLogger("mkdocs.plugins.gradviz")

FENCE_NAME = "gradviz"
# An opening fence line: indentation (or blockquote marks), ``` or ~~~, the name.
_OPENING = re.compile(r"^(?P<indent>[ \t>]*)(?P<fence>`{3,}|~{3,})[ \t]*\{?\.?gradviz\b")
_SETUP = (
    "add the gradviz fence to pymdownx.superfences in mkdocs.yml:\n"
    "  markdown_extensions:\n"
    "    - pymdownx.superfences:\n"
    "        custom_fences:\n"
    "          - name: gradviz\n"
    "            class: gradviz\n"
    "            format: !!python/name:gradviz.docs.mkdocs.fence_format\n"
    "            validator: !!python/name:gradviz.docs.mkdocs.fence_validator"
)


# Any fenced block's opening line (its info string after the fence), and its closing.
_ANY_OPENING = re.compile(r"^(?P<indent>[ \t>]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_NAMED = re.compile(r"[ \t]*\{?\.?gradviz\b")


def fence_lines(markdown: str) -> dict[str, deque[int]]:
    """Where each gradviz fence of a page starts (1-based lines), by its
    body as SuperFences hands it over (lines stripped): fences come to the formatter in
    page order, so equal bodies take their lines in turn. A fence quoted inside another
    block (```` ```markdown ```` showing how to write one) is the outer block's text,
    not a fence."""
    found: dict[str, deque[int]] = {}
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        opening = _ANY_OPENING.match(lines[i])
        if not opening or (opening.group("fence")[0] == "`" and "`" in opening.group("info")):
            i += 1
            continue
        fence = opening.group("fence")
        body = []
        j = i + 1
        while j < len(lines) and not _closes(lines[j], fence):
            body.append(lines[j])
            j += 1
        if _NAMED.match(opening.group("info")):
            found.setdefault(_key(body), deque()).append(i + 1)
        i = j + 1
    return found


def _closes(line: str, fence: str) -> bool:
    """A closing fence: the opening's character, at least as many, nothing after."""
    text = line.strip(" \t>")
    return text.startswith(fence) and not text.strip(fence[0])


_BARE_VALUE = re.compile(r"(?<=[ \t])([a-zA-Z]\w*)=([^\s\"']+)")


def quote_options(markdown: str) -> str:
    """`format=mermaid` in a gradviz fence's header as SuperFences reads options,
    `format="mermaid"` (unquoted, it would not see a fence at all and show the block as
    text)."""
    lines = markdown.split("\n")
    for i, line in enumerate(lines):
        opening = _OPENING.match(line)
        if opening:
            head, rest = line[: opening.end()], line[opening.end() :]
            lines[i] = head + _BARE_VALUE.sub(r'\1="\2"', rest)
    return "\n".join(lines)


def _key(body: list[str] | str) -> str:
    lines = body.splitlines() if isinstance(body, str) else body
    return "\n".join(line.strip(" \t>") for line in lines).strip()


@dataclass
class _Page:
    """The page being rendered: its path as errors name it, and its fences' lines."""

    path: str = "?"
    lines: dict[str, deque[int]] = field(default_factory=dict)
    folder: Path | None = None  # where its fences' relative paths are looked for first
    drawn: int = 0
    errors: list[str] = field(default_factory=list)

    def line_of(self, body: str) -> int | None:
        waiting = self.lines.get(_key(body))
        if not waiting:
            return None
        return waiting.popleft() if len(waiting) > 1 else waiting[0]


class GradvizConfig(Config):
    cache = config_options.Type(bool, default=True)
    cache_dir = config_options.Optional(config_options.Type(str))
    base = config_options.Optional(config_options.Type(str))


class GradvizPlugin(BasePlugin[GradvizConfig]):
    """The fence's cache, where its commands run from, and its errors by page and line."""

    def __init__(self) -> None:
        self.page = _Page()
        self.cache = Cache(None)
        self.base = Path.cwd()
        self.root = Path.cwd()
        self.strict = False
        self.mermaid = True

    def on_config(self, config):
        global _ACTIVE
        fences = config.mdx_configs.get("pymdownx.superfences", {}).get("custom_fences", [])
        if not any(fence.get("name") == FENCE_NAME for fence in fences):
            raise PluginError(f"gradviz plugin: {_SETUP}")
        root = Path(config.config_file_path or ".").resolve().parent
        self.base = (root / self.config.base).resolve() if self.config.base else root
        if not self.base.is_dir():
            what = "is not a folder" if self.base.exists() else "does not exist"
            raise PluginError(
                f"gradviz plugin: base {self.config.base} {what}: it is the folder the "
                "fences' commands run from (plugins: gradviz: base, in "
                f"{Path(config.config_file_path or 'mkdocs.yml').name}). Create it before "
                "building (gradviz's own docs: make docs, or make docs-serve), or change base"
            )
        folder = Path(self.config.cache_dir).expanduser() if self.config.cache_dir else None
        self.cache = Cache(
            (root / folder if folder else default_cache_dir()) if self.config.cache else None
        )
        self.root = root
        self.strict = bool(config.strict)
        self.mermaid = _loads_mermaid(config)
        _ACTIVE = self
        return config

    def on_page_markdown(self, markdown, page, config, files):
        path = Path(page.file.abs_src_path or page.file.src_uri)
        try:
            shown = str(path.resolve().relative_to(self.root))
        except ValueError:
            shown = page.file.src_uri
        # lines as the file has them: MkDocs took the front matter (and the blank lines
        # after it) off the Markdown the plugins see
        source = _source(path)
        lines = fence_lines(source if source is not None else markdown)
        self.page = _Page(path=shown, lines=lines, folder=path.parent)
        return quote_options(markdown)

    def on_page_content(self, html, page, config, files):
        errors, self.page.errors = self.page.errors, []
        if errors and self.strict:
            raise PluginError("gradviz fence failed:\n" + "\n".join(errors))
        for error in errors:
            log.warning(f"gradviz fence failed: {error}")
        return html

    def on_post_build(self, config):
        global _ACTIVE
        log.info(f"gradviz fences: {self.cache.hits} from the cache, {self.cache.misses} drawn")
        _ACTIVE = None


def _loads_mermaid(config) -> bool:
    """Whether the site's pages load mermaid.js: a script of extra_javascript named so,
    or mkdocs-material's own Mermaid (a SuperFences fence of class mermaid)."""
    if any("mermaid" in str(script).lower() for script in config.extra_javascript or []):
        return True
    fences = config.mdx_configs.get("pymdownx.superfences", {}).get("custom_fences", [])
    theme = getattr(config.theme, "name", "")
    return theme == "material" and any(f.get("class") == "mermaid" for f in fences)


def _source(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None


_ACTIVE: GradvizPlugin | None = None  # the plugin of the build under way, if any


def fence_validator(language, inputs, options, attrs, md) -> bool:
    """Every gradviz fence is ours: its header's options are checked when it is drawn (an
    error box then), never refused here (SuperFences would show it as plain code)."""
    options.update(inputs)
    return True


def fence_format(source, language, class_name, options, md, **kwargs) -> str:
    """The fence's HTML: the picture, or an error box (never an exception, which
    SuperFences would swallow and show the block as plain code)."""
    plugin = _ACTIVE
    page = plugin.page if plugin else _Page()
    line = page.line_of(source)
    page.drawn += 1
    try:
        return render_fence(
            source,
            options,
            base=plugin.base if plugin else Path.cwd(),
            page=page.folder,
            roots=(plugin.root, plugin.base) if plugin else (),
            mermaid_loaded=plugin.mermaid if plugin else True,
            cache=plugin.cache if plugin else Cache(default_cache_dir()),
            prefix=f"gv{page.drawn}-",
        )
    except FenceError as error:
        error.line = line
        where, message = error.where(page.path), error.message
    except Exception as error:  # a bug: the page says so, the build reports it
        where = f"{page.path}:{line}" if line else page.path
        message = f"internal error: {type(error).__name__}: {error}"
    report = f"{where}: {message}"
    if plugin:
        page.errors.append(report)
    else:  # no plugin: still a warning, so that --strict fails
        log.warning(f"gradviz fence failed: {report}")
    return error_box(message, where, source)
