#!/usr/bin/env bash
# Builds teleprompt's Python package in release mode into a venv with Jinja2
# and minijinja, then runs compare.py (arguments are passed on). Not part of
# the test command: it takes a release build and a minute of timing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${BENCH_VENV:-$root/target/bench-venv}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "maturin>=1.9.4,<2" jinja2==3.1.6 minijinja==3.1.0
# A release wheel, installed (not in place: the tests' debug build lives there).
rm -rf "$root/target/bench-wheels"
nice -n 5 "$venv/bin/maturin" build --release --quiet --interpreter "$venv/bin/python" \
    --manifest-path "$root/crates/teleprompt-py/Cargo.toml" --out "$root/target/bench-wheels" >/dev/null
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps \
    "$root"/target/bench-wheels/teleprompt-*.whl
"$venv/bin/python" "$here/compare.py" "$@"
