"""The installed distribution: its name on PyPI, its version and licence."""

import importlib.metadata

import teleprompt


def test_the_distribution_is_teleprompt_rs_and_imports_as_teleprompt():
    # `teleprompt` on PyPI is an unrelated project.
    metadata = importlib.metadata.metadata("teleprompt-rs")
    assert metadata["Name"] == "teleprompt-rs"
    assert importlib.metadata.version("teleprompt-rs") == teleprompt.__version__
    assert "MIT OR Apache-2.0" in (metadata.get("License-Expression") or metadata.get("License") or "")
    assert metadata.get_all("Project-URL")
