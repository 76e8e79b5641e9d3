#!/usr/bin/env python3
"""Python's Jinja2 on the workload of bench/all, for bench/all/run.sh.

Usage: python jinja2_bench.py [--templates DIR] [--data DIR] [--runs N]
       [--time-ms MS] [--out DIR] [--render-only] N...

For each N: compile templates/py_prompt.j2 once with
`jinja2.Environment(keep_trailing_newline=True)` (as bench/python/compare.py
sets Jinja2 up for this workload: teleprompt's Jinja keeps a template's final
newline; no auto-escape, Jinja2's default), load py_prompt_N.json once,
render once (with --out the text goes to DIR/py_prompt_N.jinja2.txt), then,
unless --render-only, time `template.render(data)` and print one JSON line
{"engine", "template", "median_ns", "runs", "iters", "bytes"}: the median of
--runs runs of about --time-ms each, with the calibration of the Rust
program (double the iterations until a run takes a tenth of --time-ms, then
scale), the garbage collector off during runs, as timeit does.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path

import jinja2

HERE = Path(__file__).resolve().parent
ENGINE = "jinja2"


def run(render, iters):
    gc.disable()
    try:
        start = time.perf_counter_ns()
        for _ in range(iters):
            render()
        return time.perf_counter_ns() - start
    finally:
        gc.enable()


def calibrate(render, time_ms):
    target = time_ms * 1_000_000
    iters = 1
    while True:
        elapsed = run(render, iters)
        if elapsed >= target / 10:
            return max(1, int(iters * target / elapsed))
        iters *= 2


def bench(size, args):
    name = f"py_prompt_{size}"
    source = (args.templates / "py_prompt.j2").read_text(encoding="utf-8")
    data = json.loads((args.data / f"{name}.json").read_text(encoding="utf-8"))
    template = jinja2.Environment(keep_trailing_newline=True).from_string(source)
    text = template.render(data)
    if args.out:
        (args.out / f"{name}.{ENGINE}.txt").write_bytes(text.encode("utf-8"))
    if args.render_only:
        return

    def render():
        return template.render(data)

    iters = calibrate(render, args.time_ms)
    times = [run(render, iters) / iters for _ in range(args.runs)]
    line = {
        "engine": ENGINE,
        "template": name,
        "median_ns": round(statistics.median_high(times)),
        "runs": args.runs,
        "iters": iters,
        "bytes": len(text.encode("utf-8")),
    }
    print(json.dumps(line), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--templates", type=Path, default=HERE / "templates")
    parser.add_argument("--data", type=Path, default=HERE.parent / "data")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--time-ms", type=int, default=200)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--render-only", action="store_true")
    parser.add_argument("sizes", nargs="+")
    args = parser.parse_args()
    if args.runs < 1 or args.time_ms < 1:
        sys.exit("--runs and --time-ms must be positive")
    for size in args.sizes:
        bench(size, args)


if __name__ == "__main__":
    main()
