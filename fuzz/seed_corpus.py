#!/usr/bin/env python3
"""Seeds corpus/go_template, corpus/jinja_template, corpus/jinja_direct and
corpus/render_data from
the repository's fixtures and examples, with the mode bytes the targets read.
Run from anywhere: python3 fuzz/seed_corpus.py"""
import glob
import hashlib
import os

FUZZ = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(FUZZ)
FIXTURES = os.path.join(ROOT, "crates/teleprompt/tests/fixtures")


def sections(path, kind):
    """The bodies of a fixture's `=== KIND …` sections."""
    out, current = [], None
    for line in open(path, encoding="utf-8").read().split("\n"):
        if line.startswith("=== "):
            if current is not None:
                out.append("\n".join(current))
            current = [] if line.startswith("=== " + kind) else None
        elif current is not None:
            current.append(line)
    if current is not None:
        out.append("\n".join(current))
    return out


def without_front_matter(text):
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end >= 0:
            return text[end + 5 :]
    return text


def write(target, prefix, text):
    folder = os.path.join(FUZZ, "corpus", target)
    os.makedirs(folder, exist_ok=True)
    data = bytes(prefix) + text.encode()
    name = "seed-" + hashlib.sha1(data).hexdigest()
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def read(path):
    return open(os.path.join(ROOT, path), encoding="utf-8").read()


# go_template: byte 0 is the strictness (mode % 3).
go = [p for f in glob.glob(FIXTURES + "/go/*.txt") for p in sections(f, "prompt")]
go.append(read("examples/sortie/WORKFLOW.md"))
for text in go:
    for mode in (0, 1, 2):
        write("go_template", [mode], text)

# jinja_template: syntax = mode % 3, strictness = mode / 3 % 4, bit 7 = history.
jinja = []
for kind in ("jinja", "django", "chat-template"):
    for f in glob.glob(f"{FIXTURES}/{kind}/*.txt"):
        jinja += [without_front_matter(p) for p in sections(f, "prompt")]
jinja += [read(f) for f in glob.glob(FIXTURES + "/chat-template/templates/*.jinja")]
jinja += [without_front_matter(read(f)) for f in ("examples/rapida/assistant.j2", "examples/rapida/assistant.django")]
for text in jinja:
    for mode in (0, 1, 2, 0x84, 0x8B):
        write("jinja_template", [mode], text)

# jinja_direct: strictness = mode % 3, data set = mode / 3 % 3, whitespace
# options = the bits of mode / 9 % 8, a chat template when mode >= 128;
# plain Jinja bodies and the benchmarks' prompts, then chat templates (173:
# lenient, the data with messages, trim_blocks and lstrip_blocks).
direct = [without_front_matter(p) for f in glob.glob(FIXTURES + "/jinja/*.txt") for p in sections(f, "prompt")]
direct += [read(f) for f in glob.glob(os.path.join(ROOT, "bench/data/*.j2"))]
for text in direct:
    for mode in (0, 1, 2, 3, 6, 9, 27, 45, 63):
        write("jinja_direct", [mode], text)
chats = [read(f) for f in glob.glob(FIXTURES + "/chat-template/templates/*.jinja")]
chats += [read(f) for f in glob.glob(os.path.join(ROOT, "bench/data/*.jinja"))]
for text in chats:
    for mode in (171, 172, 173):
        write("jinja_direct", [mode], text)

# render_data: byte 0 = 0 (JSON text), 4 (YAML), 8 (either); byte 1 = the
# prompt's index in PROMPTS × 4 + strictness.
chat = FIXTURES + "/chat-template/"
for fixture, index in [
    ("qwen3-8b.txt", 5),
    ("llama-3.1-8b-instruct.txt", 6),
    ("mistral-small-3.2-24b-instruct-2506.txt", 7),
    ("gpt-oss-120b.txt", 8),
    ("gemma-4-e2b-it.txt", 9),
]:
    for data in sections(chat + fixture, "data"):
        for strict in range(4):
            write("render_data", [8, index * 4 + strict], data)
for path, index, mode in [
    ("examples/sortie/issue.yaml", 10, 4),
    ("examples/rapida/data.yaml", 11, 4),
    ("examples/rapida/data.yaml", 12, 4),
    ("examples/semantic-kernel/data.json", 13, 0),
    ("examples/semantic-kernel/story.data.json", 14, 0),
    ("examples/prompty/data.json", 15, 0),
    ("examples/dotprompt/data.json", 16, 0),
]:
    for strict in range(4):
        write("render_data", [mode, index * 4 + strict], read(path))
