"""The `gradviz` directive in Sphinx (reStructuredText, and MyST Markdown as
```` ```{gradviz} ````): conf.py says `extensions = ["gradviz.docs.sphinx"]`.

    .. gradviz::
       :format: mermaid

       draw "e = a*b; d = e + c; L = d*f" a=2 b=-3 c=10 f=-2

Settings: `gradviz_base` (where the commands run; default the folder of conf.py),
`gradviz_cache_dir` (default `gradviz.docs.fence.default_cache_dir()`), `gradviz_cache`
(False: draw every time). A fence that fails is a warning at `page:LINE` (an error under
`sphinx-build -W`) and an error box in the page.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from gradviz.docs.fence import (
    Cache,
    FenceError,
    default_cache_dir,
    error_box,
    gradviz_fingerprint,
    render_fence,
)

logger = logging.getLogger(__name__)


def _cache(app: Sphinx) -> Cache:
    if not app.config.gradviz_cache:
        return Cache(None)
    folder = app.config.gradviz_cache_dir
    return Cache(Path(app.confdir, folder).expanduser() if folder else default_cache_dir())


class GradvizDirective(SphinxDirective):
    """A gradviz command line (as typed after `gradviz`) drawn into the page."""

    has_content = True
    option_spec: ClassVar[dict[str, object]] = {
        "format": directives.unchanged,
        "height": directives.unchanged,
    }

    def run(self) -> list[nodes.Node]:
        body = "\n".join(self.content)
        app = self.env.app
        cache = getattr(app, "_gradviz_cache", None)
        if cache is None:
            cache = app._gradviz_cache = _cache(app)
        base = _base(app)
        serial = self.env.new_serialno("gradviz")
        source, line = self.get_source_info()
        page = Path(source).parent if source else None
        try:
            fragment = render_fence(
                body,
                self.options,
                base=base,
                cache=cache,
                prefix=f"gv{serial + 1}-",
                page=page,
                roots=(Path(app.confdir), Path(app.srcdir), base),
                mermaid_loaded=_loads_mermaid(app),
            )
        except Exception as error:  # a bug too: a warning at page:LINE, not a crash
            message = (
                error.message
                if isinstance(error, FenceError)
                else f"internal error: {type(error).__name__}: {error}"
            )
            try:
                shown = str(Path(source).resolve().relative_to(Path(app.srcdir).resolve()))
            except ValueError:
                shown = source
            where = f"{shown}:{line}"
            logger.warning(
                f"gradviz fence failed: {message}",
                location=(self.env.docname, line),
                type="gradviz",
            )
            fragment = error_box(message, where, body)
        return [nodes.raw("", fragment, format="html")]


def _loads_mermaid(app: Sphinx) -> bool:
    """Whether the pages load mermaid.js: sphinxcontrib-mermaid, or a script named so."""
    if "sphinxcontrib.mermaid" in app.extensions:
        return True
    scripts = [*app.config.html_js_files, *(name for name, _ in app.registry.js_files)]
    return any("mermaid" in str(script).lower() for script in scripts)


def _base(app: Sphinx) -> Path:
    return Path(app.confdir, app.config.gradviz_base or ".")


def _check_base(app: Sphinx, config: object) -> None:
    """A missing base is said once, in one line, before any page is read (an exception
    here would print Sphinx's traceback box); the build then stops."""
    base = _base(app)
    if not base.is_dir():
        what = "is not a folder" if base.exists() else "does not exist"
        logger.error(
            f"gradviz_base {app.config.gradviz_base!r} {what}: it is the folder the fences' "
            "commands run from (set in conf.py). Create it before building, or change it"
        )
        raise SystemExit(2)


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("gradviz", GradvizDirective)
    app.add_config_value("gradviz_base", None, "env")
    app.add_config_value("gradviz_cache_dir", None, "env")
    app.add_config_value("gradviz_cache", True, "env")
    app.connect("config-inited", _check_base)
    return {
        "version": gradviz_fingerprint(),
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
