#!/usr/bin/env bash
# Builds teleprompt's Python package in release mode into a venv with Jinja2
# and minijinja, then runs compare.py (arguments are passed on). Not part of
# the test command: it takes a release build and a minute of timing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${BENCH_VENV:-$root/target/bench-venv}"
"$here/venv.sh" "$venv" jinja2==3.1.6 minijinja==3.1.0
"$venv/bin/python" "$here/compare.py" "$@"
