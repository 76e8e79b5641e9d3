"""Data conversion: what is data, and a clear error naming where what is not."""

import datetime
import decimal
import math

import pytest

from teleprompt import InputError, Prompt, RenderError

ECHO = Prompt("{{ v }}", name="t.j2")


def not_data(value, match):
    with pytest.raises(InputError, match=match) as caught:
        ECHO.render(v={"outer": [0, value]})
    assert caught.value.path == 'data["v"]["outer"][1]'
    return caught.value


def test_kinds_that_are_not_data_name_their_path():
    not_data({1, 2}, "type set is not data; pass sorted")
    not_data(object(), "type object is not data")
    not_data(b"bytes", "decode it")
    not_data(decimal.Decimal("1.5"), "type Decimal is not data")
    not_data(datetime.date(2026, 1, 1), "isoformat")


def test_a_pydantic_like_model_gets_a_hint():
    class Model:
        def model_dump(self, **kwargs):
            return {}

    not_data(Model(), "model_dump")


def test_a_dataclass_gets_a_hint():
    import dataclasses

    @dataclasses.dataclass
    class Issue:
        title: str

    not_data(Issue("x"), "dataclasses.asdict")


def test_big_ints_keep_their_digits():
    # As a data file's integer literal beyond 64 bits: its digits, as text.
    assert ECHO.render(v=2**64).text == "18446744073709551616"
    assert ECHO.render(v=-(2**63) - 1).text == "-9223372036854775809"
    assert ECHO.render(v=10**40).text == "1" + "0" * 40


def test_non_finite_floats():
    not_data(math.nan, "no JSON value")
    not_data(math.inf, "no JSON value")


def test_non_str_keys():
    error = not_data({1: "one"}, "key of type int")
    assert error.path == 'data["v"]["outer"][1]'


def test_a_cycle_is_an_error_not_a_crash():
    cyclic = {"name": "a"}
    cyclic["self"] = cyclic
    with pytest.raises(InputError, match="contains itself") as caught:
        ECHO.render(v=cyclic)
    assert caught.value.path == 'data["v"]["self"]'
    looped = []
    looped.append(looped)
    with pytest.raises(InputError, match="contains itself"):
        ECHO.render({"v": looped})


def test_deep_data_is_an_error_not_a_crash():
    deep = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(InputError, match="deeper than 128"):
        ECHO.render(v=deep)


def test_shared_but_acyclic_values_are_fine():
    shared = {"x": 1}
    assert Prompt("{{ a.x }}{{ b.x }}", name="t.j2").render(a=shared, b=shared).text == "11"


def test_str_subclasses_and_lone_surrogates():
    class Name(str):
        pass

    assert ECHO.render(v=Name("Ann")).text == "Ann"
    with pytest.raises(InputError, match="surrogate"):
        ECHO.render(v="\ud800")


def test_model_dump_is_the_documented_way():
    class Model:
        def model_dump(self, mode="python"):
            return {"title": "x"}

    assert Prompt("{{ m.title }}", name="t.j2").render(m=Model().model_dump(mode="json")).text == "x"


def test_unread_keys_are_not_converted_but_still_suggested():
    prompt = Prompt("{{ issue.title }}", name="t.j2")
    # `log` is never read: it is not converted (a set there is no error).
    assert prompt.render(issue={"title": "x"}, log={1, 2}).text == "x"
    assert prompt.render({"issue": {"title": "x"}, "log": object()}).text == "x"
    assert prompt.render_many([{"issue": {"title": "x"}, "log": {1}}])[0].text == "x"
    # A misspelled name still finds the key it meant.
    with pytest.raises(RenderError) as caught:
        Prompt("{{ isue.title }}", name="t.j2").render(issue={"title": "x"})
    assert caught.value.suggestion == 'did you mean "issue"?'


def test_subclasses_of_the_data_types_are_data():
    import collections
    import enum

    class Level(enum.IntEnum):
        HIGH = 3

    class Ratio(float):
        pass

    class Tags(list):
        pass

    prompt = Prompt("{{ a.n }} {{ a.level }} {{ a.ratio }} {{ a.tags|join(',') }} {{ a.pair|join(',') }}", name="t.j2")
    data = collections.OrderedDict(
        a=collections.defaultdict(list, n=1, level=Level.HIGH, ratio=Ratio(0.5), tags=Tags(["x", "y"]), pair=(1, 2))
    )
    assert prompt.render(data).text == "1 3 0.5 x,y 1,2"


def test_a_dict_subclass_as_data_still_skips_unread_keys():
    import collections

    prompt = Prompt("{{ issue.title }}", name="t.j2")
    data = collections.OrderedDict(issue={"title": "x"}, log={1, 2})
    assert prompt.render(data).text == "x"


def test_paths_through_every_kind_of_container():
    class Row(dict):
        pass

    with pytest.raises(InputError, match="type set is not data") as caught:
        ECHO.render(v=[(0, Row(cells=[1, {"deep": {2}}]))])
    assert caught.value.path == 'data["v"][0][1]["cells"][1]["deep"]'
    with pytest.raises(InputError, match="key of type tuple") as caught:
        ECHO.render({"v": {"ok": [{(1, 2): "x"}]}})
    assert caught.value.path == 'data["v"]["ok"][0]'
    with pytest.raises(InputError, match="surrogate") as caught:
        ECHO.render(v={"k\u00e9y": ["\ud800"]})
    assert caught.value.path == 'data["v"]["k\u00e9y"][0]'
