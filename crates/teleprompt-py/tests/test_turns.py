"""Turns: the per-turn context — history, clock, turn numbers, namespaces."""

import datetime

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
