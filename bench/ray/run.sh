#!/usr/bin/env bash
# `teleprompt batch --jobs 2` against Ray Data (examples/python/ray_batch.py
# on a local Ray with 2 CPUs) on the same rows for Rapida's prompt: rows/s
# of each, Ray's start-up apart, and a check that both rendered the same
# text for every row. Builds the release CLI and the Python package (release,
# into a venv with ray[data]), then runs compare.py; arguments go to it.
# Run by hand only: CI does not (a release build, Ray, minutes of timing).
#
#   bench/ray/run.sh                       # 200,000 rows, 3 rounds
#   bench/ray/run.sh --rows 20000 --rounds 1
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${RAY_VENV:-$root/target/ray-venv}"
"$root/bench/python/venv.sh" "$venv" "ray[data]==2.60.0"
(cd "$root" && nice -n 10 cargo build --release --quiet -p teleprompt-cli)
# A session of its own: compare.py counts the CPU time of every process of
# its session (Ray's included), and the kernel's autogroup scheduling gives
# the session a fair share of the cores against other sessions.
setsid -w "$venv/bin/python" "$here/compare.py" --bin "$root/target/release/teleprompt" "$@"
