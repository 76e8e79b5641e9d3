"""`Rendered` and `PromptContext` pickle as `Prompt` does: a copy made in
another process answers as the original (text, messages, shapes, tokens,
budget, source map, stable prefixes; a context renders the same), and
state that is not a pickled one is a clear error."""

import concurrent.futures
import datetime
import json
import pickle

import pytest

from teleprompt import InputError, Prompt, PromptContext, RenderError, Rendered, TelepromptError
from teleprompt import _teleprompt

HISTORY = [
    {"role": "user", "content": "What is the weather in Paris?", "language": "fr"},
    {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "Sunny, 18 degrees."},
    {"role": "assistant", "content": "It is sunny in Paris."},
]

# Reads every part of a context: clock and time zone, turn values,
# namespaces, args (at the root too), custom rules, the host's data, the
# language found in the history, and the history itself.
EVERYTHING = (
    "---\ntokenizer: o200k_base\n---\n"
    '{{ role("system") }}{{ assistant.name }} for {{ conversation.id }} ({{ session.mode }}), '
    "{{ system.current_datetime }} / {{ system.local_datetime }}, turn {{ run.turn_number }} of "
    "{{ run.max_turns }}, attempt {{ attempt }}, {{ args.mode }} {{ mode }} {{ args.deep.key }}, "
    "{{ custom_rules }}, issue {{ issue.id }}, language {{ message.language }}."
    '{{ cache_breakpoint() }}{{ history() }}{{ role("user") }}{{ message.text }}'
)


def full_context():
    return PromptContext(
        {"issue": {"id": "A-1", "tags": ["x", 1, 2.5, None, True]}},
        history=HISTORY,
        now=datetime.datetime(2026, 11, 21, 9, 5, 3, tzinfo=datetime.timezone.utc),
        time_zone="Asia/Tokyo",
        turn=3,
        max_turns=10,
        attempt=2,
        assistant={"name": "Ava"},
        conversation={"id": "c-9"},
        session={"mode": "plan"},
        message={"text": "And in Tokyo?"},
        # A dotted key expanded, one dropped (a warning), one hidden by a
        # namespace (a warning).
        args={"mode": "fast", "deep.key": "v", "mode.x": 1, "session": "s"},
        custom_rules="Be brief.",
        client_language="en",
        labels={"issue": "A-1", "turn": 3},
    )


def round_trip(value):
    return pickle.loads(pickle.dumps(value))


def state_of(value):
    """The JSON state a pickle carries, as a dict."""
    _, (state,) = value.__reduce__()
    return json.loads(state)


def test_a_restored_context_renders_the_same():
    prompt = Prompt(EVERYTHING, name="everything.j2")
    context = full_context()
    copy = round_trip(context)
    assert isinstance(copy, PromptContext)
    original = prompt.render_turn(context)
    again = prompt.render_turn(copy)
    assert again.text == original.text
    assert "Ava for c-9 (plan), 2026-11-21T09:05:03Z / 2026-11-21 18:05:03 +09:00" in again.text
    assert "turn 3 of 10, attempt 2, fast fast v, Be brief., issue A-1, language fr." in again.text
    assert again.messages == original.messages
    assert again.to_anthropic() == original.to_anthropic()
    assert again.warnings == original.warnings
    assert any("mode.x" in warning for warning in again.warnings)
    assert any('arg "session" is hidden' in warning for warning in again.warnings)
    assert (copy.turn, copy.history) == (context.turn, context.history)
    assert repr(copy) == repr(context) == "PromptContext(turn=3, history=4 messages)"


def test_a_restored_context_keeps_its_labels_its_history_rules_and_its_clock():
    context = full_context()
    copy = round_trip(context)
    with pytest.raises(RenderError) as caught:
        Prompt("{{ missing }}", name="t.j2").render_turn(copy)
    assert caught.value.labels == {"issue": "A-1", "turn": "3"}
    # The history is checked again where it lands: a dangling tool call
    # added to the copy is the error it is in the original.
    copy.append({"role": "assistant", "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "f", "arguments": "{}"}}]})
    context.append({"role": "assistant", "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "f", "arguments": "{}"}}]})
    prompt = Prompt('{{ history() }}{{ role("user") }}next', name="t.j2")
    with pytest.raises(InputError) as in_copy:
        prompt.render_turn(copy)
    with pytest.raises(InputError) as in_original:
        prompt.render_turn(context)
    assert str(in_copy.value) == str(in_original.value)
    # A context on the system clock stays on it (no instant is recorded).
    clocked = PromptContext()
    assert "now" not in state_of(clocked)
    first = Prompt("{{ system.date_unix_ms }}", name="t.j2").render_turn(round_trip(clocked)).text
    second = Prompt("{{ system.date_unix_ms }}", name="t.j2").render_turn(round_trip(clocked)).text
    assert int(second) >= int(first) > 1_700_000_000_000


def test_an_empty_context_and_one_at_turn_one_differ_after_pickling_too():
    prompt = Prompt("{{ run is defined }} {{ attempt is defined }}", name="t.j2")
    for context in (PromptContext(), PromptContext(turn=1), PromptContext(max_turns=5), PromptContext(attempt=0)):
        assert prompt.render_turn(round_trip(context)).text == prompt.render_turn(context).text
    assert prompt.render_turn(round_trip(PromptContext())).text == "False False"
    assert prompt.render_turn(round_trip(PromptContext(attempt=0))).text == "True True"


def test_a_restored_rendered_is_equal_and_answers_the_same():
    prompt = Prompt(EVERYTHING, name="everything.j2")
    rendered = prompt.render_turn(full_context(), source_map=True)
    copy = round_trip(rendered)
    assert isinstance(copy, Rendered)
    assert copy == rendered
    assert copy.text == rendered.text and str(copy) == str(rendered) and repr(copy) == repr(rendered)
    assert copy.messages == rendered.messages
    assert copy.to_openai() == rendered.to_openai()
    assert copy.to_anthropic() == rendered.to_anthropic()
    assert copy.to_bedrock() == rendered.to_bedrock()
    assert copy.warnings == rendered.warnings and copy.warnings
    assert copy.source_map() == rendered.source_map() and copy.source_map() is not None
    assert copy.tokens() == rendered.tokens()
    assert copy.tokens()["tokenizer"] == "o200k_base"
    later = prompt.render_turn(full_context().with_turn(4), source_map=True)
    assert later.stable_prefix(copy) == later.stable_prefix(rendered)
    assert round_trip(later).stable_prefix(copy) == later.stable_prefix(rendered)
    # (Jinja on minijinja names the expression, not a data path.)
    assert later.stable_prefix(copy)["change"]["span"]["source"] == "run.turn_number"


def test_results_that_differ_are_not_equal():
    prompt = Prompt('{{ role("user") }}{{ x }}', name="t.j2")
    one, other = prompt.render(x=1), prompt.render(x=2)
    assert one == prompt.render(x=1)
    assert one != other
    assert one != "1" and one.text == "1"
    with pytest.raises(TypeError):
        hash(one)


def test_a_budget_and_a_chat_template_s_generations_survive_pickling():
    source = '---\ntokenizer: o200k_base\nbudget: 40\n---\n{{ role("system") }}You plan trips for {{ name }}.{{ history() }}'
    history = HISTORY + [
        {"role": "user", "content": "And in Tokyo?"},
        {"role": "assistant", "content": "It rains in Tokyo."},
        {"role": "user", "content": "What should I pack?"},
    ]
    rendered = Prompt(source, name="trip.j2").render_turn(PromptContext({"name": "Ann"}, history=history))
    assert rendered.budget is not None and rendered.budget["cuts"]
    copy = round_trip(rendered)
    assert copy.budget == rendered.budget
    assert copy.messages == rendered.messages
    assert copy.tokens() == rendered.tokens()

    template = (
        "{% for m in messages %}{{ m.role }}: {% if m.role == 'assistant' %}{% generation %}"
        "{{ m.content }}{% endgeneration %}{% else %}{{ m.content }}{% endif %}\n{% endfor %}"
    )
    chat = Prompt(template, name="chat_template.jinja", tokenizer="o200k_base")
    rendered = chat.render(messages=[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}])
    copy = round_trip(rendered)
    assert copy == rendered
    assert copy.tokens() == rendered.tokens()
    assert sum(copy.tokens()["assistant_masks"]) > 0


def make_context_and_render(prompt, context):
    return context, prompt.render_turn(context)


def test_contexts_and_results_travel_through_a_process_pool():
    prompt = Prompt(EVERYTHING, name="everything.j2")
    context = full_context()
    with concurrent.futures.ProcessPoolExecutor(max_workers=1) as pool:
        back, rendered = pool.submit(make_context_and_render, prompt, context).result()
    assert rendered == prompt.render_turn(context)
    assert prompt.render_turn(back).text == rendered.text


# Hostile state: every one is an InputError naming what is wrong, never a
# crash.
FORGED_CONTEXTS = [
    ("", "EOF while parsing"),
    ('{"turn": 3', "EOF while parsing"),
    ("[]", "not a JSON object"),
    ("[3, 10]", "not a JSON object"),
    ('{"turn": -1}', "invalid value"),
    ('{"turn": 4294967296}', "invalid value"),
    ('{"now": "next tuesday"}', "now:"),
    ('{"time_zone": "Mars/Olympus_Mons"}', "time_zone"),
    ('{"args": {"fields": [1, 2]}}', "the args must be a JSON object"),
    ('{"assistant": {"fields": "Ava"}}', "the assistant namespace must be a JSON object"),
    ('{"data": 5}', "the data must be a mapping"),
    ('{"history": [{"role": "wizard"}]}', "unknown variant"),
    ('{"history": {"role": "user"}}', "invalid type"),
    ('{"labels": [["a"]]}', "invalid length"),
    ('{"workspace": {"root": "."}}', "missing field"),
    ('{"clock": "2026-01-01T00:00:00Z"}', "unknown field"),
    ('{"turn": 1} trailing', "trailing characters"),
    ('{"data": ' + "[" * 100_000, "nests deeper than"),
    ('{"data": ' + '{"a": ' * 300 + "1" + "}" * 301, "nests deeper than"),
]


@pytest.mark.parametrize("state, message", FORGED_CONTEXTS)
def test_forged_context_state_is_an_input_error(state, message):
    with pytest.raises(InputError, match="cannot unpickle a PromptContext") as caught:
        _teleprompt._restore_context(state)
    assert message in str(caught.value)


def test_context_state_of_the_wrong_type_is_a_type_error():
    with pytest.raises(TypeError):
        _teleprompt._restore_context(5)
    with pytest.raises(TypeError):
        _teleprompt._restore_context()


def test_a_cut_or_corrupted_pickle_of_a_context_fails_cleanly():
    data = pickle.dumps(full_context())
    # Cut short: pickle's own error.
    with pytest.raises((pickle.UnpicklingError, EOFError)):
        pickle.loads(data[: len(data) // 2])
    # The state cut short, then pickled again: ours.
    restore, (state,) = full_context().__reduce__()
    with pytest.raises(InputError, match="cannot unpickle a PromptContext"):
        restore(state[: len(state) // 2])
    # A byte of the state changed.
    with pytest.raises(InputError, match="cannot unpickle a PromptContext"):
        restore(state.replace('"turn":3', '"turn":"3"'))


def test_data_nested_as_deep_as_data_may_be_pickles():
    deep = {"leaf": 1}
    for _ in range(120):
        deep = {"a": deep}
    context = PromptContext({"deep": deep}, args={"deep": deep}, assistant={"deep": deep})
    copy = round_trip(context)
    prompt = Prompt("{{ deep" + ".a" * 120 + ".leaf }} {{ assistant.deep" + ".a" * 120 + ".leaf }}", name="t.j2")
    assert prompt.render_turn(copy).text == "1 1"


def rendered_state():
    prompt = Prompt(EVERYTHING, name="everything.j2")
    return state_of(prompt.render_turn(full_context(), source_map=True))


def forged_renders():
    """Well-formed but forged records: odd items, indices past the tables."""
    base = rendered_state()
    yield dict(base, items=["cache_breakpoint", "history", "cache_breakpoint"])
    yield dict(base, items=[], history=[])
    yield dict(base, items=["history", "history"])
    source_map = dict(base["source_map"])
    source_map["messages"] = [
        {"role": "system", "parts": [{"text": "x", "segments": [{"start": 5, "end": 1, "kind": "text", "span": 99, "path": 99}]}]}
    ]
    yield dict(base, source_map=source_map)
    yield dict(base, source_map={"messages": [], "spans": [], "paths": []})
    yield dict(base, budget={"total": 0, "tokens": 10**18, "cuts": [], "sections": []})
    yield dict(base, tokenizer={"name": "cl100k_base"})


@pytest.mark.parametrize("record", list(forged_renders()))
def test_forged_but_well_formed_results_answer_or_raise_a_teleprompt_error(record):
    copy = _teleprompt._restore_rendered(json.dumps(record))
    previous = Prompt(EVERYTHING, name="everything.j2").render_turn(full_context(), source_map=True)
    for call in (
        lambda: copy.text,
        lambda: copy.messages,
        copy.to_openai,
        copy.to_anthropic,
        copy.to_bedrock,
        copy.source_map,
        copy.tokens,
        lambda: copy.budget,
        lambda: copy.stable_prefix(previous),
        lambda: previous.stable_prefix(copy),
        lambda: copy == previous,
        lambda: pickle.loads(pickle.dumps(copy)),
    ):
        try:
            call()
        except TelepromptError:
            pass


def test_forged_result_state_is_an_input_error():
    base = rendered_state()
    forged = [
        ("{", "EOF while parsing"),
        (json.dumps(dict(base, items=[{"message": {"role": "wizard", "content": []}}])), "unknown variant"),
        (json.dumps({k: v for k, v in base.items() if k != "text"}), "missing field `text`"),
        (json.dumps(dict(base, generations=[{"start": 0, "end": 10**9}])), "generation span 0..1000000000 is not a range of the text"),
        (json.dumps(dict(base, generations=[{"start": 5, "end": 2}])), "is not a range of the text"),
        (json.dumps(dict(text="é", items=[], generations=[{"start": 0, "end": 1}])), "is not a range of the text"),
        (json.dumps(dict(base, tokenizer={"name": "o300k_base"})), "unknown tokenizer"),
        (json.dumps(dict(base, tokenizer={"name": "../../etc/passwd.json", "root": "/tmp"})), "tokenizer:"),
        (json.dumps(dict(base, tokens=[1, 2])), "unknown field `tokens`"),
        ('{"data": ' + "[" * 100_000, "nests deeper than"),
    ]
    for state, message in forged:
        with pytest.raises(InputError, match="cannot unpickle a Rendered") as caught:
            _teleprompt._restore_rendered(state)
        assert message in str(caught.value), state[:200]
