"""The type stubs name exactly what the native module has."""

import ast
import pathlib

import pytest

import teleprompt
from teleprompt import _teleprompt

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
    mypy = pytest.importorskip("mypy.api")
    sample = pathlib.Path(__file__).with_name("typing_sample.py")
    out, err, status = mypy.run(["--strict", "--no-incremental", str(sample)])
    assert status == 0, out + err
