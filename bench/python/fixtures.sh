#!/usr/bin/env bash
# Builds teleprompt's Python package in release mode into the venv of
# run.sh, with Jinja2, minijinja and transformers (Jinja2 set up by its
# own `_compile_jinja_template`), then runs fixtures.py over every
# chat-template fixture (arguments are passed on; NO_BUILD=1 skips the
# venv and the build).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${BENCH_VENV:-$root/target/bench-venv}"
if [ -z "${NO_BUILD:-}" ]; then
    "$here/venv.sh" "$venv" jinja2==3.1.6 minijinja==3.1.0 transformers==5.24.0
fi
"$venv/bin/python" "$here/fixtures.py" "$@"
