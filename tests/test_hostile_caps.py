"""Every documented cap (docs/manual/limits.md), just under and just over: the input at the
cap is accepted, one more is refused with the cap's own message. Each row runs through
the same contract as the hostile-input table (exit status, one short error line, no
traceback, no Python warning).

Size caps in bytes that would need a 50 MB or 100 MB file here are checked with the cap
set lower (monkeypatch): the comparison under test is the same line of code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_hostile_inputs import Case, check, invoke, make_files
from test_trace_limits import AT_ANIMATION_LIMIT as ANIMATED
from test_trace_limits import AT_FRAME_LIMIT, OVER_FRAME_LIMIT
from test_trace_limits import OVER_ANIMATION_LIMIT as OVER_ANIMATED

from gradviz import data as data_module
from gradviz import schema as model_module

GRADS = "Gradients per layer"  # `grads SPEC` measures at initialisation: no training


def spec_text(layers: list[int], extra: str = "", data: str = '"xor"') -> str:
    return f"layers = {json.dumps(layers)}\ndata = {data}\n{extra}"


def grads(text: str, status: int, fragment: str, *, files=None, id: str):
    return pytest.param(
        Case(("grads", "s.toml"), status, fragment, {"s.toml": text, **(files or {})}), id=id
    )


def draw(expr: str, *values: str, status: int, fragment: str, id: str):
    return pytest.param(Case(("draw", expr, *values, "-f", "json"), status, fragment), id=id)


def sum_of(n: int) -> str:
    return " + ".join(f"x{i}" for i in range(n))


def columns(n: int, rows: int = 2) -> str:
    """A CSV of n feature columns and a label column."""
    header = ",".join([*(f"c{i}" for i in range(n)), "y"])
    return header + "\n" + "".join(",".join(["0"] * n + [str(r % 2)]) + "\n" for r in range(rows))


CSV_SPEC = '{csv = "d.csv"}'

CAPS = [
    # expressions
    draw("x" + " " * 9_999, "x=1", status=0, fragment='"data": 1', id="length-10000"),
    draw("x" + " " * 10_000, status=2, fragment="expression too long: 10001", id="length-10001"),
    draw("(" * 100 + "x" + ")" * 100, "x=1", status=0, fragment='"data": 1', id="depth-100"),
    draw("(" * 101 + "x" + ")" * 101, status=2, fragment="nested too deeply", id="depth-101"),
    draw("x" + "+x" * 999, "x=1", status=0, fragment='"data": 1000', id="nodes-1999"),
    draw("x" + "+x" * 1000, status=2, fragment="more than 2000", id="nodes-2001"),
    draw(
        "".join(f"t{i} = 1\n" for i in range(499)) + "t0",
        status=0,
        fragment='"data": 1',
        id="statements-500",
    ),
    draw(
        "".join(f"t{i} = 1\n" for i in range(500)) + "t0",
        status=2,
        fragment="too many statements: 501 (the limit is 500)",
        id="statements-501",
    ),
    draw("1" * 100, status=0, fragment='"data": 1.111111111111111', id="number-100"),
    draw("1" * 101, status=2, fragment="number too long: 101 characters", id="number-101"),
    draw("v" * 100, "v" * 100 + "=1", status=0, fragment='"label": "' + "v" * 100, id="name-100"),
    draw("v" * 101, status=2, fragment="name too long: 101 characters", id="name-101"),
    draw("a", "v" * 101 + "=1", status=2, fragment="name too long: 101", id="value-name-101"),
    draw("x**1000000", "x=1", status=0, fragment='"data": 1', id="exponent-1e6"),
    draw("x**-1000000", "x=1", status=0, fragment='"data": 1', id="exponent--1e6"),
    draw("x**1000001", status=2, fragment="1000001 is outside -1e6 to 1e6", id="exponent-1e6+1"),
    draw("x**-1000001", status=2, fragment="-1000001 is outside -1e6", id="exponent--1e6-1"),
    # networks (checked when the spec is read: nothing is trained)
    grads(spec_text([2] * 64 + [1]), 0, GRADS, id="layers-64"),
    grads(spec_text([2] * 65 + [1]), 2, "65 layers is more than the 64 allowed", id="layers-65"),
    grads(spec_text([2, 1024, 1]), 0, GRADS, id="units-1024"),
    grads(spec_text([2, 1025, 1]), 2, "1025 units is more than the 1024", id="units-1025"),
    grads(spec_text([2, 33, 140, 1]), 0, GRADS, id="parameters-5000"),
    grads(spec_text([3, 1000, 1]), 2, "5,001 parameters is more than the 5,000", id="params-5001"),
    grads(spec_text([2, 2, 1], "epochs = 1000000\n"), 0, GRADS, id="epochs-1e6"),
    grads(spec_text([2, 2, 1], "epochs = 1000001\n"), 2, "out of range", id="epochs-1e6+1"),
    grads(spec_text([2, 2, 1], "epochs = 0\n"), 2, "out of range", id="epochs-0"),
    grads(spec_text([2, 2, 1], "learning_rate = 1e6\n"), 0, GRADS, id="lr-1e6"),
    grads(spec_text([2, 2, 1], "learning_rate = 1.000001e6\n"), 2, "at most 1e6", id="lr-over"),
    grads(spec_text([2, 2, 1], "clip_norm = 1e6\n"), 0, GRADS, id="clip-1e6"),
    grads(spec_text([2, 2, 1], "clip_norm = 1.000001e6\n"), 2, "at most 1e6", id="clip-over"),
    grads(spec_text([2, 2, 1], f"seed = {2**63 - 1}\n"), 0, GRADS, id="seed-max"),
    grads(spec_text([2, 2, 1], f"seed = {2**63}\n"), 2, "seed: ", id="seed-over"),
    grads(spec_text([2, 2, 1], "epochs = 1000\nrecord_every = 1\n"), 0, GRADS, id="records-1000"),
    grads(
        spec_text([2, 2, 1], "epochs = 1001\nrecord_every = 1\n"),
        2,
        "more than 1,000 records",
        id="records-1001",
    ),
    grads(spec_text([2, 2, 1], data="{name = 'circle', size = 100000}"), 0, GRADS, id="size-1e5"),
    grads(
        spec_text([2, 2, 1], data="{name = 'circle', size = 100001}"),
        2,
        "data.size",
        id="size-1e5+1",
    ),
    # spec file: 1,000,000 bytes
    grads(spec_text([2, 2, 1]).ljust(999_999, "#") + "\n", 0, GRADS, id="spec-1e6-bytes"),
    grads(
        spec_text([2, 2, 1]).ljust(1_000_000, "#") + "\n",
        2,
        "1,000,001 bytes is larger than the 1,000,000 allowed for a spec file",
        id="spec-1e6+1-bytes",
    ),
    # CSV: 1,000 feature columns
    grads(
        spec_text([1000, 1, 1], data=CSV_SPEC), 0, GRADS, files={"d.csv": columns(1000)}, id="f1000"
    ),
    grads(
        spec_text([1001, 1, 1], data=CSV_SPEC),
        2,
        "more than 1000 feature columns",
        files={"d.csv": columns(1001)},
        id="features-1001",
    ),
    # CSV: a field of 131,072 characters (Python's csv module)
    grads(
        spec_text([2, 2, 1], data=CSV_SPEC),
        2,
        "in column 'b' is not finite",  # read whole, then refused as a number
        files={"d.csv": "a,b,y\n1," + "9" * 131_072 + ",0\n"},
        id="field-131072",
    ),
    grads(
        spec_text([2, 2, 1], data=CSV_SPEC),
        2,
        "field larger than field limit (131072)",
        files={"d.csv": "a,b,y\n1," + "9" * 131_073 + ",0\n"},
        id="field-131073",
    ),
    # expression file: 1,000,000 bytes (read, then refused for its length as an expression)
    pytest.param(
        Case(("draw", "@e.expr"), 2, "expression too long", {"e.expr": "x" * 1_000_000}),
        id="expr-file-1e6",
    ),
    pytest.param(
        Case(
            ("draw", "@e.expr"), 2, "too large for an expression file", {"e.expr": "x" * 1_000_001}
        ),
        id="expr-file-1e6+1",
    ),
    # Mermaid: 500 edges (Mermaid's own limit)
    draw(f"exp({sum_of(167)})", status=0, fragment='"edges"', id="mermaid-500-json"),
    pytest.param(
        # (a 167-term chain is deep: drawn top to bottom by default)
        Case(("draw", f"exp({sum_of(167)})", "-f", "mermaid"), 0, "flowchart TB"),
        id="mermaid-500",
    ),
    pytest.param(
        Case(("draw", sum_of(168), "-f", "mermaid"), 1, "the graph has 501 edges"),
        id="mermaid-501",
    ),
    # trace --frames: 100,000 nodes drawn over all frames; --animate: 500 steps
    pytest.param(
        Case(("trace", AT_FRAME_LIMIT, "x=0.5", "--frames", "f", "--format", "mmd"), 0, "200/200"),
        id="frame-nodes-100000",
    ),
    pytest.param(
        Case(("trace", OVER_FRAME_LIMIT, "x=0.5", "--frames", "f"), 2, "100,902 nodes to draw"),
        id="frame-nodes-100902",
    ),
    pytest.param(
        # (-o prints no text trace: the document's last step is the 500th)
        Case(
            ("trace", ANIMATED[0], *ANIMATED[1], "-o", "b.svg", "--animate", "--json"),
            0,
            '"index": 499,',
        ),
        id="animated-steps-500",
    ),
    pytest.param(
        Case(
            ("trace", OVER_ANIMATED[0], *OVER_ANIMATED[1], "-o", "b.svg", "--animate"),
            2,
            "501 steps are more than the 500 an animation may have",
        ),
        id="animated-steps-501",
    ),
]


@pytest.mark.parametrize("expected", CAPS)
def test_each_cap_just_under_and_just_over(expected: Case, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    make_files(tmp_path, expected.files, "")
    result, caught = invoke(expected)
    check(result, expected, caught)


@pytest.mark.slow
def test_csv_rows_100000_and_100001(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    body = "0,0,0\n0,1,1\n" * 50_000
    spec = spec_text([2, 2, 1], data=CSV_SPEC)
    under = Case(("grads", "s.toml"), 0, GRADS, {"s.toml": spec, "d.csv": "a,b,y\n" + body})
    make_files(tmp_path, under.files, "")
    check(*_run(under))
    over = Case(("grads", "s.toml"), 2, "100,001 rows is more than the 100,000 allowed")
    (tmp_path / "d.csv").write_text("a,b,y\n" + body + "1,1,0\n")
    check(*_run(over))


def _run(case: Case):
    result, caught = invoke(case)
    return result, case, caught


@pytest.mark.parametrize(
    ("module", "name", "file", "what"),
    [
        (data_module, "MAX_CSV_BYTES", "d.csv", "CSV file"),
        (model_module, "MAX_MODEL_BYTES", "m.json", "model file"),
    ],
)
def test_byte_caps_of_data_and_model_files(
    module, name: str, file: str, what: str, tmp_path: Path, monkeypatch
) -> None:
    """The 50 MB and 100 MB caps, lowered to the size of a small file: at the cap the
    file is read (and its own content judged), one byte more is refused by its size."""
    monkeypatch.chdir(tmp_path)
    text = "a,b,y\n0,0,0\n0,1,1\n" if file.endswith(".csv") else '{"format": "x"}'
    (tmp_path / file).write_text(text)
    (tmp_path / "s.toml").write_text(spec_text([2, 2, 1], data=CSV_SPEC))
    args = ("grads", "s.toml") if file.endswith(".csv") else ("inspect", "m.json")
    monkeypatch.setattr(module, name, len(text))
    at_cap = Case(
        args,
        0 if file.endswith(".csv") else 2,
        GRADS if file.endswith(".csv") else "not a gradviz model",
    )
    check(*_run(at_cap))
    monkeypatch.setattr(module, name, len(text) - 1)
    over = Case(
        args, 2, f"{len(text):,} bytes is larger than the {len(text) - 1:,} allowed for a {what}"
    )
    check(*_run(over))
