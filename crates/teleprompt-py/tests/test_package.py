"""The installed distribution: its name on PyPI, its version and licence,
and (run by test.sh) the wheel it came from: abi3, manylinux2014."""

import email.parser
import importlib.metadata
import os
import pathlib
import platform
import re
import sys
import sysconfig
import zipfile

import pytest

import teleprompt
from teleprompt import _teleprompt

SOURCE = pathlib.Path(__file__).resolve().parents[1] / "python" / "teleprompt"


def test_the_distribution_is_teleprompt_rs_and_imports_as_teleprompt():
    # `teleprompt` on PyPI is an unrelated project.
    metadata = importlib.metadata.metadata("teleprompt-rs")
    assert metadata["Name"] == "teleprompt-rs"
    assert importlib.metadata.version("teleprompt-rs") == teleprompt.__version__
    assert "MIT OR Apache-2.0" in (metadata.get("License-Expression") or metadata.get("License") or "")
    assert metadata.get_all("Project-URL")


def installed_from_wheel():
    """The wheel test.sh built and installed (None when the package was
    installed some other way)."""
    wheel = os.environ.get("TELEPROMPT_WHEEL")
    if not wheel:
        pytest.skip("test.sh builds a wheel and sets TELEPROMPT_WHEEL")
    return pathlib.Path(wheel)


def test_the_package_imported_is_the_installed_wheel_not_the_source_tree():
    wheel = installed_from_wheel()
    package = pathlib.Path(teleprompt.__file__).resolve().parent
    site = pathlib.Path(sysconfig.get_paths()["platlib"]).resolve()
    assert package == site / "teleprompt"
    assert pathlib.Path(_teleprompt.__file__).resolve().parent == package
    assert SOURCE not in package.parents and package != SOURCE
    # Every file the wheel holds is installed, and nothing else of the package.
    with zipfile.ZipFile(wheel) as archive:
        shipped = {name for name in archive.namelist() if name.startswith("teleprompt/")}
    installed = {f"teleprompt/{path.relative_to(package).as_posix()}" for path in package.rglob("*") if path.is_file() and "__pycache__" not in path.parts}
    assert installed == shipped
    assert {"teleprompt/_teleprompt.pyi", "teleprompt/py.typed"} <= shipped


def test_the_wheel_is_abi3_for_cpython_3_10_and_manylinux2014():
    wheel = installed_from_wheel()
    distribution = importlib.metadata.distribution("teleprompt-rs")
    fields = email.parser.Parser().parsestr(distribution.read_text("WHEEL") or "")
    tags = fields.get_all("Tag") or []
    assert fields["Root-Is-Purelib"] == "false"
    assert tags and all(tag.startswith("cp310-abi3-") for tag in tags), tags
    machine = platform.machine()
    if sys.platform.startswith("linux"):
        # PEP 599's manylinux2014 is PEP 600's manylinux_2_17: glibc 2.17 on.
        assert sorted(tag.split("-")[2] for tag in tags) == [f"manylinux2014_{machine}", f"manylinux_2_17_{machine}"]
        assert f"manylinux_2_17_{machine}" in wheel.name
    assert distribution.metadata["Requires-Python"] == ">=3.10"
    # The extension is the abi3 one: it loads in any CPython from 3.10 on.
    assert _teleprompt.__file__.endswith(".abi3.so") or not sys.platform.startswith("linux")


def test_the_extension_needs_no_glibc_newer_than_2_17():
    installed_from_wheel()
    if not sys.platform.startswith("linux"):
        pytest.skip("glibc symbol versions: Linux only")
    data = pathlib.Path(_teleprompt.__file__).read_bytes()
    versions = {tuple(int(part) for part in found.split(b".")) for found in re.findall(rb"GLIBC_(\d+(?:\.\d+)+)", data)}
    assert versions, "the extension names no glibc version"
    assert max(versions) <= (2, 17), sorted(versions)
