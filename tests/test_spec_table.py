"""The spec's one table of keys (spec.SPEC_KEYS, DATA_KEYS) and the saved model's tables
of fields (HISTORY_FIELDS, CLIPPING_FIELDS): the known keys, the defaults, the reading and
Spec.to_dict all come from them, and every kind refuses a wrong value naming its path."""

from __future__ import annotations

import dataclasses

import pytest

from gradviz.errors import InputError, SpecError
from gradviz.schema import CLIPPING_FIELDS, HISTORY_FIELDS, LAYER_FIELDS, read_field, read_fields
from gradviz.spec import DATA_KEYS, PRESETS, SPEC_KEYS, Spec, spec_from_mapping

SMALLEST = {"layers": [2, 1], "data": "xor"}


def test_the_known_keys_are_the_tables() -> None:
    with pytest.raises(SpecError) as info:
        spec_from_mapping({**SMALLEST, "colour": 1})
    assert info.value.message.endswith(f"known keys: {', '.join(SPEC_KEYS)}")
    with pytest.raises(SpecError) as info:
        spec_from_mapping({**SMALLEST, "data": {"name": "circle", "colour": 1}})
    assert info.value.message.startswith("data.colour: unknown key")
    assert info.value.message.endswith(f"known: {', '.join(DATA_KEYS)}")


def test_the_defaults_are_the_tables_only() -> None:
    """Spec declares no default of its own: each comes from its key's entry."""
    own = [f.name for f in dataclasses.fields(Spec) if f.default is not dataclasses.MISSING]
    assert own == ["base_dir", "locate"]
    spec = spec_from_mapping(SMALLEST)
    for key in SPEC_KEYS.values():
        if key.missing is None and key.name in {f.name for f in dataclasses.fields(Spec)}:
            assert getattr(spec, key.name) == key.default, key.name
    assert spec.update_text == SPEC_KEYS["update"].default
    deeper = spec_from_mapping({**SMALLEST, "layers": [2, 3, 1]})
    assert deeper.activations[0] == SPEC_KEYS["activation"].default


def test_to_dict_writes_the_tables_keys_and_reads_back() -> None:
    spec = spec_from_mapping(SMALLEST)
    written = spec.to_dict()
    assert list(written) == [k.name for k in SPEC_KEYS.values() if k.always]
    full = spec_from_mapping({**PRESETS["moons"], "clip_norm": 2.0, "record_every": 10})
    assert list(full.to_dict()) == [
        k for k in SPEC_KEYS if k not in ("clip_value",)
    ]  # every optional key that is set, in the table's order
    for name in PRESETS:
        written = spec_from_mapping(PRESETS[name]).to_dict()
        assert spec_from_mapping(written).to_dict() == written, name


# A value of the wrong type for each key (the path the error must name first).
WRONG = {
    "name": ({"x": 1}, "name"),
    "layers": ([2, "x", 1], "layers[1]"),
    "activation": (7, "activation"),
    "output_activation": (7, "output_activation"),
    "init": (7, "init"),
    "loss": (7, "loss"),
    "data": (7, "data"),
    "epochs": ("7", "epochs"),
    "learning_rate": ("fast", "learning_rate"),
    "update": (7, "update"),
    "clip_value": ("x", "clip_value"),
    "clip_norm": ("x", "clip_norm"),
    "seed": (1.5, "seed"),
    "record_every": (True, "record_every"),
    "l2": ("x", "l2"),
    "lr_schedule": (7, "lr_schedule"),
    "lr_end": ("x", "lr_end"),
}


def test_every_key_has_a_wrong_value_here() -> None:
    assert set(WRONG) == set(SPEC_KEYS)


@pytest.mark.parametrize("key", list(WRONG))
def test_every_key_refuses_a_wrong_type_naming_it_and_its_line(key: str) -> None:
    value, path = WRONG[key]
    with pytest.raises(SpecError) as info:
        spec_from_mapping({**SMALLEST, key: value}, locate=lambda k: f"s.toml line 9: {k}")
    assert info.value.message.startswith(f"s.toml line 9: {path}: "), info.value.message
    assert info.value.exit_code == 2


@pytest.mark.parametrize(
    ("table", "path", "message"),
    [
        ({"name": "circle", "size": "many"}, "data.size", "expected a whole number"),
        ({"name": "circle", "seed": -1}, "data.seed", "out of range"),
        ({"name": "moons", "noise": "x"}, "data.noise", "must be a number from 0 to 10"),
        ({"name": "nowhere"}, "data.name", "unknown value"),
        ({"csv": 3}, "data.csv", "expected the path of a CSV file"),
        ({"csv": "a.csv", "label": 1.5}, "data.label", "expected a column name"),
        ({"csv": "a.csv", "features": "x"}, "data.features", "expected a list of column"),
        # true is no column (Python's bool is an int: it was read as the column 'True')
        ({"csv": "a.csv", "label": True}, "data.label", "expected a column name"),
        ({"csv": "a.csv", "features": [0, True]}, "data.features", "expected a list of column"),
        # where a key does not apply, before its value is read
        ({"name": "xor", "size": "many"}, "data.size", "the xor data set is fixed"),
        ({"name": "circle", "noise": 0.1}, "data.noise", "has no noise setting"),
        ({"name": "circle", "label": 0}, "data.label", "applies to CSV files only"),
        ({"csv": "a.csv", "size": 9}, "data.size", "applies to generated data sets"),
        # a CSV file has no seed (it was ignored before)
        ({"csv": "a.csv", "seed": 9}, "data.seed", "applies to generated data sets"),
    ],
)
def test_every_data_key_refuses_naming_its_path(table: dict, path: str, message: str) -> None:
    with pytest.raises(SpecError, match=message) as info:
        spec_from_mapping({**SMALLEST, "data": table})
    assert info.value.message.startswith(f"{path}: ")


def test_the_output_activation_defaults_to_the_loss_for_any_network() -> None:
    """One rule for the output's default: a network without hidden layers too (a single
    name for the hidden layers used to make its output sigmoid under hinge loss)."""
    spec = spec_from_mapping({**SMALLEST, "loss": "hinge", "activation": "relu"})
    assert spec.activations == ("linear",)
    spec = spec_from_mapping({**SMALLEST, "loss": "hinge", "activation": ["tanh"]})
    assert spec.activations == ("tanh",)  # a list of one per layer names the output too


@pytest.mark.parametrize(
    ("table", "where"),
    [(HISTORY_FIELDS, "history"), (CLIPPING_FIELDS, "history.clipping"), (LAYER_FIELDS, "l")],
)
def test_every_file_field_refuses_a_wrong_type_naming_its_path(table: dict, where: str) -> None:
    for key, kind in table.items():
        with pytest.raises(InputError) as info:
            read_field({"no": 1}, kind, f"{where}.{key}")
        assert info.value.message.startswith(f"{where}.{key}: expected "), key


def test_a_list_field_names_the_item() -> None:
    with pytest.raises(InputError, match=r'^h\.updates\[1\]: expected a whole number ≥ 0, got "x"'):
        read_field([1, "x"], "list of count", "h.updates")
    with pytest.raises(InputError, match=r"^h\.loss: expected a list of numbers$"):
        read_field("high", "list of signed", "h.loss")
    assert read_field([1, "nan", -2], "list of signed", "h.loss")[2] == -2.0


def test_optional_fields_may_be_absent_but_not_wrong() -> None:
    lists = {"loss": [], "accuracy": []}
    optional = ("epochs_run", "every", "stopped")
    assert read_fields(lists, HISTORY_FIELDS, "h", "x", optional) == lists
    with pytest.raises(InputError, match=r"^h\.epochs_run: missing"):
        read_fields(lists, HISTORY_FIELDS, "h", "x", ("every", "stopped"))
    with pytest.raises(InputError, match=r"^h\.every: expected a whole number ≥ 1, got 0"):
        read_fields({**lists, "every": 0}, HISTORY_FIELDS, "h", "x", optional)


def test_no_two_presets_share_a_table_or_a_list() -> None:
    """A variant is written as the preset it is like: changing one preset's `data` table
    or `layers` list in place must not change another."""
    from gradviz.spec import PRESETS

    values = [value for preset in PRESETS.values() for value in preset.values()]
    nested = [value for value in values if isinstance(value, dict | list)]
    assert len({id(v) for v in nested}) == len(nested)
