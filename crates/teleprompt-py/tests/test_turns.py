"""Turns: the per-turn context — history, clock, turn numbers, namespaces."""

import datetime
import time

import pytest

from teleprompt import InputError, Prompt, PromptContext, RenderError

HISTORY = [
    {"role": "user", "content": "Hola", "language": "es"},
    {"role": "assistant", "content": "¡Hola!"},
]


def test_a_turn_with_clock_history_and_namespaces():
    prompt = Prompt(
        '{{ role("system") }}{{ assistant.name }} on {{ system.current_date }}, turn {{ run.turn_number }}, '
        "answer in {{ message.language }}.{{ history() }}",
        name="sys.j2",
    )
    context = PromptContext(
        assistant={"name": "Ava"},
        history=HISTORY,
        now=datetime.datetime(2026, 11, 21, 9, 5, tzinfo=datetime.timezone.utc),
        turn=3,
    )
    rendered = prompt.render_turn(context)
    openai = rendered.to_openai()["messages"]
    assert openai[0] == {"role": "system", "content": "Ava on 2026-11-21, turn 3, answer in es."}
    assert [m["role"] for m in openai[1:]] == ["user", "assistant"]
    assert context.turn == 3
    assert context.with_turn(4).turn == 4
    assert len(context.history) == 2


def test_now_as_text_and_time_zone():
    prompt = Prompt("{{ system.local_datetime }}", name="t.j2")
    context = PromptContext(now="2026-11-21T09:05:03Z", time_zone="Europe/Oslo")
    assert prompt.render_turn(context).text.startswith("2026-11-21")


def test_a_naive_datetime_is_refused():
    with pytest.raises(InputError, match="time zone"):
        PromptContext(now=datetime.datetime(2026, 1, 1))


def test_data_and_args():
    prompt = Prompt("{{ issue }} {{ args.mode }} {{ mode }}", name="t.j2")
    context = PromptContext({"issue": "A-1"}, args={"mode": "fast"})
    assert prompt.render_turn(context).text == "A-1 fast fast"


def test_a_broken_history_is_an_error_naming_the_message():
    history = [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "user", "content": "hi"},
    ]
    prompt = Prompt("{{ history() }}", name="t.j2")
    with pytest.raises(Exception) as caught:
        prompt.render_turn(PromptContext(history=history))
    assert "c1" in str(caught.value) or "tool" in str(caught.value)
    # The check can be turned off.
    prompt.render_turn(PromptContext(history=history), validate_history=False)


def test_a_malformed_history_is_an_input_error():
    with pytest.raises(InputError, match="history"):
        PromptContext(history=[{"content": "no role"}])


def test_labels_are_on_every_error():
    context = PromptContext(labels={"issue": "PROJ-42"})
    with pytest.raises(RenderError) as caught:
        Prompt("{{ nope }}", name="t.j2").render_turn(context)
    assert caught.value.labels == {"issue": "PROJ-42"}


def test_with_history_shares_the_rest():
    context = PromptContext(assistant={"name": "Ava"}).with_history(HISTORY)
    assert Prompt("{{ assistant.name }} {{ message.language }}", name="t.j2").render_turn(context).text == "Ava es"


def test_append_and_extend_grow_the_history_turn_by_turn():
    prompt = Prompt("{{ role('system') }}Turn {{ run.turn_number }} in {{ message.language }}.{{ history() }}", name="t.j2")
    context = PromptContext(assistant={"name": "Ava"}, turn=1)
    context.append({"role": "user", "content": "Hola", "language": "es"})
    first = prompt.render_turn(context)
    assert first.text.startswith("Turn 1 in es.")
    call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    context.extend([
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "42"},
        {"role": "assistant", "content": "Es 42."},
    ])
    context.append({"role": "user", "content": "Thanks", "language": "en"})
    second = prompt.render_turn(context.with_turn(2))
    assert [m["role"] for m in second.to_openai()["messages"]] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert second.text.startswith("Turn 2 in en.")
    # The first render keeps the history it was made with.
    assert len(first.to_openai()["messages"]) == 2
    assert len(context.history) == 5


def test_an_appended_message_that_breaks_the_rules_fails_the_render():
    prompt = Prompt("{{ history() }}", name="t.j2")
    context = PromptContext()
    context.append({"role": "tool", "tool_call_id": "nope", "content": "orphan"})
    with pytest.raises(Exception, match="nope|tool"):
        prompt.render_turn(context)
    with pytest.raises(InputError, match="history"):
        context.append({"content": "no role"})


# A render that runs until its step budget (5,000,000 steps: a tenth of a
# second or more) stops it, past a timeout of 20 ms. (A prompt's first
# render that needs minijinja compiles the template, inside the timeout:
# the tests render once first.)
SLOW = "{% for i in range(n) %}{% for j in range(n) %}{% endfor %}{% endfor %}done"


def test_a_timeout_stops_a_long_turn():
    prompt = Prompt(SLOW, name="slow.j2")
    prompt.render(n=1)
    started = time.monotonic()
    with pytest.raises(RenderError) as raised:
        prompt.render_turn(PromptContext({"n": 100_000}), timeout=0.02)
    assert raised.value.rule == "render/timeout"
    assert "ran past its deadline" in raised.value.message
    assert time.monotonic() - started < 2
    assert prompt.render_turn(PromptContext({"n": 2}), timeout=5).text == "done"


def test_a_timeout_stops_only_the_slow_rows():
    prompt = Prompt(SLOW, name="slow.j2")
    prompt.render(n=1)
    rows = [{"n": 1}, {"n": 100_000}, {"n": 3}]
    started = time.monotonic()
    results = prompt.render_many(rows, errors="return", timeout=0.02, jobs=1)
    assert time.monotonic() - started < 2
    assert [r.text for r in (results[0], results[2])] == ["done", "done"]
    assert isinstance(results[1], RenderError)
    assert results[1].rule == "render/timeout"


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf")])
def test_a_timeout_must_be_a_positive_number_of_seconds(timeout):
    prompt = Prompt(SLOW, name="slow.j2")
    with pytest.raises(InputError, match="timeout must be a positive number of seconds"):
        prompt.render_turn(PromptContext({"n": 1}), timeout=timeout)
    with pytest.raises(InputError, match="timeout must be a positive number of seconds"):
        prompt.render_many([{"n": 1}], timeout=timeout)
