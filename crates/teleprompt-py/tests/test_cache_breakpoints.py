"""Cache breakpoints in the Anthropic and Bedrock shapes are what the
official SDK types accept: each body `to_anthropic()` gives, with a model
and ``max_tokens``, is written as a typed Python literal and checked with
``mypy --strict`` against ``anthropic.types.message_create_params.
MessageCreateParamsNonStreaming`` (the SDK's TypedDicts: an unknown key or
a wrong ``type`` is an error); each `to_bedrock()` body, with a
``modelId``, against boto3's ``ConverseRequestTypeDef`` (the
``mypy-boto3-bedrock-runtime`` stubs). A misspelled copy must fail, so the
check can fail."""

import json

import mypy.api

from teleprompt import Prompt, PromptContext

PROMPTS = {
    "support.j2": '{{ role("system") }}You are a support agent.\nBe brief.\n{{ cache_breakpoint() }}\n'
    'Today is {{ day }}.{{ role("user") }}{{ question }}{{ cache_breakpoint() }}',
    "support.gotmpl": '{{role "system"}}You are a support agent.\nBe brief.\n{{cache_breakpoint}}\n'
    'Today is {{.day}}.{{role "user"}}{{.question}}{{cache_breakpoint}}',
    "support.hbs": '{{role "system"}}You are a support agent.\nBe brief.\n{{cache_breakpoint}}\n'
    'Today is {{day}}.{{role "user"}}{{question}}{{cache_breakpoint}}',
}


def renders():
    found = {}
    for name, source in PROMPTS.items():
        found[name] = Prompt(source, name=name).render(day="Monday", question="How do I reset my router?")
    turn = Prompt(
        '{{ role("system") }}Be brief.{{ cache_breakpoint() }}{{ history() }}'
        '{{ role("user") }}{{ question }}{{ cache_breakpoint() }}',
        name="turn.j2",
    )
    history = [
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "Sunny"},
    ]
    found["turn.j2"] = turn.render_turn(PromptContext({"question": "And Tokyo?"}, history=history))
    # Right after the history: its last message (a tool result) is marked.
    end = Prompt('{{ role("system") }}Be brief.{{ history() }}{{ cache_breakpoint() }}', name="end.j2")
    found["end.j2"] = end.render_turn(PromptContext(history=history))
    return found


def check(tmp_path, typed, bedrock=False):
    if bedrock:
        program = "from mypy_boto3_bedrock_runtime.type_defs import ConverseRequestTypeDef\n\n"
        requests = [("ConverseRequestTypeDef", dict(body, modelId="anthropic.claude-sonnet-4-5")) for body in typed]
    else:
        program = "from anthropic.types.message_create_params import MessageCreateParamsNonStreaming\n\n"
        requests = [
            ("MessageCreateParamsNonStreaming", dict(body, model="claude-sonnet-4-5", max_tokens=1024))
            for body in typed
        ]
    for index, (kind, request) in enumerate(requests):
        program += f"body_{index}: {kind} = {request!r}\n"
    path = tmp_path / "bodies.py"
    path.write_text(program, "utf-8")
    return mypy.api.run(["--strict", "--no-incremental", str(path)])


def test_every_body_is_a_request_the_sdk_types_accept(tmp_path):
    found = {name: rendered.to_anthropic() for name, rendered in renders().items()}
    for name, body in found.items():
        assert "cache_control" in json.dumps(body), name
    assert found["end.j2"]["messages"][-1]["content"][-1]["type"] == "tool_result"
    assert found["end.j2"]["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    out, err, status = check(tmp_path, found.values())
    assert status == 0, out + err
    # The same check fails on a misspelled key and on a wrong type, each.
    text = json.dumps(found["support.j2"])
    misspelled = json.loads(text.replace('"cache_control"', '"cache_contrl"', 1))
    mistyped = json.loads(text.replace('"ephemeral"', '"forever"', 1))
    out, _, status = check(tmp_path, [misspelled, mistyped])
    assert status == 1 and "bodies.py:3:" in out and "bodies.py:4:" in out, out


def test_every_bedrock_body_is_a_converse_request_boto3_s_types_accept(tmp_path):
    found = {name: rendered.to_bedrock() for name, rendered in renders().items()}
    for name, body in found.items():
        assert "cachePoint" in json.dumps(body), name
    assert "toolUse" in json.dumps(found["turn.j2"]) and "toolResult" in json.dumps(found["turn.j2"])
    assert found["end.j2"]["messages"][-1]["content"][-1] == {"cachePoint": {"type": "default"}}
    out, err, status = check(tmp_path, found.values(), bedrock=True)
    assert status == 0, out + err
    text = json.dumps(found["support.j2"])
    misspelled = json.loads(text.replace('"cachePoint"', '"cache_point"', 1))
    mistyped = json.loads(text.replace('"default"', '"ephemeral"', 1))
    out, _, status = check(tmp_path, [misspelled, mistyped], bedrock=True)
    assert status == 1 and "bodies.py:3:" in out and "bodies.py:4:" in out, out
