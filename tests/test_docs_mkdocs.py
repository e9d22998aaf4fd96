"""The MkDocs front end's own logic, without a build: where each fence of a page starts
(the line errors name), and the header options SuperFences would not read unquoted."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from docs_tools import require_docs_tools

PAGE = """# A page

```gradviz
draw "a*b" a=2 b=3
```

!!! note

    ```gradviz format=mermaid
    draw "a*b" a=2 b=3
    ```

> ```gradviz
> draw "a*b" a=2 b=3
> ```

~~~~gradviz height=600 format="html"
trace "x*x" x=3
~~~~
"""


@pytest.fixture(scope="module")
def front_end():
    require_docs_tools()
    from gradviz.docs import mkdocs

    return mkdocs


def test_each_fence_s_line_in_page_order(front_end) -> None:
    lines = front_end.fence_lines(PAGE)
    assert list(lines['draw "a*b" a=2 b=3']) == [3, 9, 13]
    assert list(lines['trace "x*x" x=3']) == [17]


def test_equal_bodies_take_their_lines_in_turn(front_end) -> None:
    page = front_end._Page(path="docs/p.md", lines=front_end.fence_lines(PAGE))
    body = 'draw "a*b" a=2 b=3\n'
    assert [page.line_of(body) for _ in range(4)] == [3, 9, 13, 13]
    assert page.line_of("draw x") is None


def test_header_options_are_quoted_for_superfences(front_end) -> None:
    quoted = front_end.quote_options(PAGE).splitlines()
    assert '    ```gradviz format="mermaid"' in quoted
    assert '~~~~gradviz height="600" format="html"' in quoted
    assert quoted[2] == "```gradviz"  # the others as they were


def test_the_validator_takes_every_fence_and_keeps_its_options(front_end) -> None:
    options: dict = {}
    assert front_end.fence_validator("gradviz", {"format": "oops"}, options, {}, None)
    assert options == {"format": "oops"}  # refused when drawn: an error box, not plain code


def test_the_formatter_never_raises(front_end) -> None:
    box = front_end.fence_format('draw "a*"', "gradviz", "gradviz", {}, None)
    assert 'class="gradviz-error"' in box and "syntax error" in box


QUOTED = """# How to write a fence

````markdown
```gradviz
draw "a*b" a=2 b=3
```
````

gives

```gradviz
draw "a*b" a=2 b=3
```

~~~text
```gradviz
trace "x*x" x=3
```
~~~
"""


def test_a_fence_quoted_inside_another_block_is_not_a_fence(front_end) -> None:
    """docs/fence.md shows a fence in a ````markdown block, then the fence itself: the
    error of the real one must name its own line (11), not the quote's (4)."""
    lines = front_end.fence_lines(QUOTED)
    assert {body: list(at) for body, at in lines.items()} == {'draw "a*b" a=2 b=3': [11]}


def test_an_unclosed_block_swallows_the_rest_of_the_page(front_end) -> None:
    assert front_end.fence_lines('```python\nx = 1\n```gradviz\ndraw "a"\n') == {}


DOCS = Path(__file__).resolve().parent.parent / "docs"


@pytest.mark.parametrize("page", sorted(p.name for p in (DOCS / "manual").glob("*.md")))
def test_no_code_in_a_table_shows_a_backslash_before_a_pipe(front_end, page: str) -> None:
    """Python-Markdown keeps `\\|` inside a code span as typed (GitHub does not): a table
    cell's code writes its pipes as &#124; in <code>, which both read as |."""
    import markdown

    text = (DOCS / "manual" / page).read_text("utf-8")
    html = markdown.markdown(text, extensions=["tables", "attr_list", "admonition"])
    codes = re.findall(r"<code>(.*?)</code>", html, re.DOTALL)
    assert not [code for code in codes if "\\|" in code]
