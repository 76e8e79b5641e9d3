import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples"


@pytest.fixture
def examples():
    return EXAMPLES


@pytest.fixture
def folder(tmp_path):
    """Writes files into a temporary folder: folder({"a.j2": "…"})."""

    def write(files):
        for name, text in files.items():
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return tmp_path

    return write
collect_ignore = ["typing_sample.py"]
