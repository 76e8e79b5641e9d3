"""Tokens by a Hugging Face tokenizer.json: the ids are exactly what the
`tokenizers` library (Hugging Face's own) gives with
`add_special_tokens=False`, as transformers encodes a chat template's
output, on the corpus of ``crates/teleprompt/tests/data/tokens`` (prompt
text, long runs, adversarial Unicode, special-token spellings) and on
Llama 3's and Qwen 3's tokenizers (fetched by ``fetch_tokenizers.sh``)."""

import json
import os
from pathlib import Path

import pytest
import tokenizers

from teleprompt import Prompt, PromptContext, TokenCache

ROOT = Path(__file__).resolve().parents[3]
CORPUS = json.loads((ROOT / "crates/teleprompt/tests/data/tokens/corpus.json").read_text("utf-8"))
TOKENIZERS = Path(os.environ.get("TELEPROMPT_TOKENIZERS", ROOT / "target/tokenizers"))

# Special-token spellings that these tokenizers declare: matched as the
# special token, as the library does.
EXTRA = ["<|begin_of_text|>Hi<|eot_id|>", "<|im_start|>user\nHi<|im_end|>\n"]


@pytest.mark.parametrize("model", ["llama3", "qwen3"])
def test_ids_are_the_tokenizers_library_s(model):
    path = TOKENIZERS / model / "tokenizer.json"
    reference = tokenizers.Tokenizer.from_file(str(path))
    texts = CORPUS + EXTRA
    prompt = Prompt("{{ history() }}", name="history.j2", tokenizer=str(path))
    context = PromptContext(history=[{"role": "user", "content": text} for text in texts])
    tokens = prompt.render_turn(context).tokens()
    assert tokens["tokenizer"] == "tokenizer.json"
    assert len(tokens["messages"]) == len(texts)
    for text, message in zip(texts, tokens["messages"]):
        assert message["ids"] == reference.encode(text, add_special_tokens=False).ids, text
    assert tokens["total"] == sum(len(reference.encode(t, add_special_tokens=False).ids) for t in texts)


def test_render_many_tokenizes_every_row():
    """`render_many(..., tokenize=True)`: each row's tokens, as
    `Rendered.tokens()` gives them; a row that cannot be counted is that
    row's error."""
    prompt = Prompt('{{ role("user") }}Hello, {{ name }}!', name="hi.j2", tokenizer="o200k_base")
    rows = [{"name": name} for name in ["world", "Ann", "日本"]]
    counted = prompt.render_many(rows, tokenize=True)
    assert counted == [prompt.render(row).tokens() for row in rows]
    assert counted[0]["messages"][0]["ids"] == [13225, 11, 2375, 0]
    bare = Prompt("Hello, {{ name }}!", name="hi.j2")
    (error,) = bare.render_many(rows[:1], tokenize=True, errors="return")
    assert isinstance(error, Exception) and "names no tokenizer" in str(error)


def test_a_budget_cuts_the_oldest_exchanges():
    """`budget:` cuts the history to fit; `rendered.budget` says what went."""
    source = '---\ntokenizer: o200k_base\nbudget: 40\n---\n{{ role("system") }}You plan trips for {{ name }}.{{ history() }}'
    prompt = Prompt(source, name="trip.j2")
    history = [
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Sunny, 18 degrees."},
        {"role": "assistant", "content": "It is sunny in Paris, 18 degrees."},
        {"role": "user", "content": "And in Tokyo?"},
        {"role": "assistant", "content": "It rains in Tokyo."},
        {"role": "user", "content": "What should I pack?"},
    ]
    rendered = prompt.render_turn(PromptContext({"name": "Ann"}, history=history))
    budget = rendered.budget
    assert budget is not None and budget["total"] == 40 and budget["tokens"] <= 40
    assert [(cut["part"], cut["messages"]) for cut in budget["cuts"]] == [("history", 4)]
    assert [m["content"] for m in rendered.messages[1:]] == ["And in Tokyo?", "It rains in Tokyo.", "What should I pack?"]
    assert Prompt("hi", name="hi.j2").render().budget is None


def test_a_budget_cuts_sections_by_priority():
    """Budget sections: the lowest priority goes first, a list loses its
    last blocks whole; `rendered.budget["sections"]` gives what is left."""
    source = (
        "---\ntokenizer: o200k_base\nbudget: 40\n---\n"
        '{% section "rules", priority=9 %}Never promise refunds.{% endsection %}\n'
        '{% for doc in docs %}{% section "docs", priority=2 %}- {{ doc }}\n{% endsection %}{% endfor %}'
        '{% section "notes" %}Notes: {{ notes }}{% endsection %}'
    )
    docs = [f"Document {n}: the router has {n} ports and supports WPA3." for n in range(1, 6)]
    rendered = Prompt(source, name="support.j2").render({"docs": docs, "notes": "slow in the evening " * 5})
    budget = rendered.budget
    assert budget["tokens"] <= 40
    assert [cut["part"] for cut in budget["cuts"]] == ["notes", "docs"]
    sections = {section["name"]: section for section in budget["sections"]}
    assert sections["rules"]["items"] == 1 and sections["notes"]["items"] == 0
    kept = sections["docs"]["items"]
    assert 0 < kept < 5 and sections["docs"]["printed"] == 5
    assert rendered.text.startswith("Never promise refunds.\n- Document 1:")
    assert "Notes:" not in rendered.text and f"Document {kept + 1}" not in rendered.text


def test_a_token_cache_keeps_the_unchanged_messages_of_a_turn():
    """Turn by turn with a TokenCache: the same tokens as counting alone,
    and ``kept`` the tokens of the leading messages that did not change."""
    prompt = Prompt(
        "---\ntokenizer: o200k_base\n---\n{{ role('system') }}You help with tea.",
        name="turn.j2",
    )
    cache = TokenCache()
    history = [{"role": "user", "content": "Which tea is strongest?"}]
    first = prompt.render_turn(PromptContext(history=history)).tokens(cache=cache)
    assert "kept" not in first
    history.append({"role": "assistant", "content": "Assam, usually."})
    rendered = prompt.render_turn(PromptContext(history=history))
    second = rendered.tokens(cache=cache)
    assert second.pop("kept") == first["total"]
    assert second == rendered.tokens()
