"""The type stubs name exactly what the native module has."""

import ast
import pathlib

import mypy.api
import pytest

import teleprompt
from conftest import REPO
from teleprompt import _teleprompt
from test_readme import SOURCES

STUBS = pathlib.Path(teleprompt.__file__).with_name("_teleprompt.pyi")


def stub_members():
    tree = ast.parse(STUBS.read_text())
    classes = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            classes[node.name] = {
                item.name for item in node.body if isinstance(item, ast.FunctionDef) and (not item.name.startswith("_") or item.name in DUNDERS)
            }
    return classes


DUNDERS = {"__getitem__", "__contains__", "__len__", "__iter__"}


def test_every_class_and_public_member_is_in_the_stubs():
    stubs = stub_members()
    for name in ("Prompt", "Rendered", "PromptContext", "Library"):
        native = getattr(_teleprompt, name)
        public = {member for member in dir(native) if not member.startswith("_") or member in DUNDERS}
        public &= set(vars(native)) | DUNDERS & set(dir(native))
        assert stubs[name] == public, name


def test_py_typed_ships():
    assert STUBS.with_name("py.typed").exists()


def test_the_stubs_type_check_a_program():
    sample = pathlib.Path(__file__).with_name("typing_sample.py")
    out, err, status = mypy.api.run(["--strict", "--no-incremental", str(sample)])
    assert status == 0, out + err


CONFIG = pathlib.Path(__file__).with_name("mypy.ini")
EXAMPLES = sorted((REPO / "examples").glob("*/*.py"))


def check(files):
    """`mypy --strict` (tests/mypy.ini) over `files`: its report and status."""
    out, err, status = mypy.api.run(["--config-file", str(CONFIG), "--no-incremental", *map(str, files)])
    return out + err, status


def test_the_examples_and_the_readme_blocks_type_check(tmp_path):
    assert REPO / "examples" / "python" / "ray_batch.py" in EXAMPLES
    blocks = []
    for index, (source, block) in enumerate(SOURCES):
        path = tmp_path / f"readme_block_{index}.py"
        path.write_text(f"# {source}\n{block}")
        blocks.append(path)
    assert len(blocks) >= 3
    report, status = check(EXAMPLES + blocks)
    assert status == 0, report
    assert f"no issues found in {len(EXAMPLES) + len(blocks)} source files" in report


def test_the_examples_check_can_fail(tmp_path):
    # The example with a wrong argument: the stubs and the config catch it.
    text = (REPO / "examples" / "python" / "ray_batch.py").read_text()
    assert "prompt.render_many(rows, jobs=1," in text
    broken = tmp_path / "ray_batch.py"
    broken.write_text(text.replace("prompt.render_many(rows, jobs=1,", 'prompt.render_many(rows, jobs="1",'))
    report, status = check([broken])
    assert status == 1 and "render_many" in report, report
