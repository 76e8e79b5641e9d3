"""The Python examples of the READMEs and of the guide (docs/) run as written
(with a stand-in for the OpenAI client, which records what it is given)."""

import os
import re
import sys
import types

import pytest

from conftest import REPO

READMES = [
    REPO / "README.md",
    REPO / "crates" / "teleprompt-py" / "README.md",
    *sorted((REPO / "docs").glob("*.md")),
]
SOURCES = [
    (readme.relative_to(REPO), block)
    for readme in READMES
    for block in re.findall(r"```python\n(.*?)```", readme.read_text(), re.S)
]
BLOCKS = [block for _, block in SOURCES]


class FakeCompletions:
    calls = []

    def create(self, **kwargs):
        FakeCompletions.calls.append(kwargs)


@pytest.fixture
def fake_openai(monkeypatch):
    module = types.ModuleType("openai")

    class OpenAI:
        def __init__(self):
            self.chat = types.SimpleNamespace(completions=FakeCompletions())

    module.OpenAI = OpenAI
    monkeypatch.setitem(sys.modules, "openai", module)
    FakeCompletions.calls.clear()
    return FakeCompletions.calls


def test_the_readmes_have_python_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example(index, fake_openai, capsys):
    os.chdir(REPO)
    source, block = SOURCES[index]
    exec(compile(block, f"{source} python block {index}", "exec"), {"__name__": "readme"})
    for call in fake_openai:
        assert call["model"]
        roles = [message["role"] for message in call["messages"]]
        assert roles[0] == "system" and "user" in roles
