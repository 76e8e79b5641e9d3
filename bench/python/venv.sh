#!/usr/bin/env bash
# A virtual environment for a benchmark: `venv.sh DIR [PACKAGE…]` makes DIR
# (if missing), installs the packages, and installs teleprompt's Python
# package into it as a release wheel. A wheel, not `maturin develop`: that
# puts the extension in crates/teleprompt-py/python/teleprompt/, shared with
# every other environment developing there (the tests' debug build), and
# the last build wins.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="$1"
shift
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "maturin>=1.9.4,<2" "$@"
wheels="$venv/wheels"
rm -rf "$wheels"
nice -n 10 "$venv/bin/maturin" build --release --quiet --interpreter "$venv/bin/python" \
    --manifest-path "$root/crates/teleprompt-py/Cargo.toml" --out "$wheels" >/dev/null
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps \
    "$wheels"/teleprompt-*.whl
