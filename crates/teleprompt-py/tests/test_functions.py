"""Host functions: Python callables the templates call."""

import pytest

from teleprompt import ParseError, Prompt, RenderError


def fetch(key):
    return {"A-1": {"title": "Login fails"}}[key]


def test_a_function_in_every_syntax():
    functions = {"fetch": fetch}
    assert Prompt("{{ fetch('A-1').title }}", name="t.j2", functions=functions).render().text == "Login fails"
    assert Prompt('{{(fetch "A-1").title}}', name="t.gotmpl", functions=functions).render().text == "Login fails"
    assert Prompt('{{lookup (fetch "A-1") "title"}}', name="t.hbs", functions=functions).render().text == "Login fails"


def test_arguments_and_results_of_every_type():
    seen = []

    def echo(*args):
        seen.append(args)
        return list(args)

    rendered = Prompt("{{ echo(1, 2.5, 'x', none, true, [1], {'k': 'v'}) | tojson }}", name="t.j2", functions={"echo": echo}).render()
    assert seen == [(1, 2.5, "x", None, True, [1], {"k": "v"})]
    assert rendered.text == '[1, 2.5, "x", null, true, [1], {"k": "v"}]'


def test_an_exception_is_a_render_error_with_the_exception_as_cause():
    prompt = Prompt("Title: {{ fetch('B-2') }}", name="t.j2", functions={"fetch": fetch})
    with pytest.raises(RenderError) as caught:
        prompt.render()
    error = caught.value
    assert "KeyError: 'B-2'" in error.message
    assert (error.file, error.line, error.column) == ("t.j2", 1, 11)
    assert isinstance(error.__cause__, KeyError)


def test_a_result_that_is_not_data_is_a_render_error():
    prompt = Prompt("{{ f() }}", name="t.j2", functions={"f": lambda: {1, 2}})
    with pytest.raises(RenderError, match=r"the result of f\(\).*type set is not data"):
        prompt.render()


def test_unknown_function_is_a_load_error_with_a_suggestion():
    with pytest.raises(ParseError) as caught:
        Prompt("{{ fech('A-1') }}", name="t.j2", functions={"fetch": fetch})
    assert caught.value.suggestion == 'did you mean "fetch"?'


def test_plugins():
    functions = {"Weather": {"forecast": lambda city: f"sun in {city}"}}
    assert Prompt('{{Weather-forecast "Oslo"}}', name="t.hbs", functions=functions).render().text == "sun in Oslo"
    assert Prompt("{{ Weather_forecast('Oslo') }}", name="t.j2", functions=functions).render().text == "sun in Oslo"


def test_functions_must_be_callable():
    with pytest.raises(Exception, match="not callable"):
        Prompt("x", name="t.j2", functions={"f": 42})
