#!/usr/bin/env python3
"""Python's Jinja2 on the workloads of bench/all, for bench/all/run.sh.

Usage: python jinja2_bench.py [--templates DIR] [--data DIR] [--runs N]
       [--time-ms MS] [--out DIR] [--render-only] [--chat NAME,...]
       [--conversation FILE] N...

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

For each --chat NAME: the same with DATA/NAME_chat_template.jinja compiled
as transformers compiles a chat template (`compile_replica` of
bench/jinja/transformers_env.py, the replica of its
`_compile_jinja_template` that bench/jinja/compare.py checks against
transformers), rendered with `template.render(**kwargs)`,
the keyword arguments loaded once from DATA/--conversation (default
chat_20.json); the text goes to DIR/NAME_chat_template.jinja2.txt and the
JSON line's template is NAME_chat_template.
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
sys.path.insert(0, str(HERE.parent / "jinja"))
from transformers_env import compile_replica  # noqa: E402
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
    time_render(name, lambda: template.render(data), args)


def bench_chat(chat, kwargs, args):
    name = f"{chat}_chat_template"
    source = (args.data / f"{name}.jinja").read_text(encoding="utf-8")
    template = compile_replica(source)
    time_render(name, lambda: template.render(**kwargs), args)


def time_render(name, render, args):
    """Renders once (the text to --out), then, unless --render-only, times
    `render` and prints the JSON line under the template name `name`."""
    text = render()
    if args.out:
        (args.out / f"{name}.{ENGINE}.txt").write_bytes(text.encode("utf-8"))
    if args.render_only:
        return

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
    parser.add_argument("--chat", default="", help="chat templates, NAME,... (DATA/NAME_chat_template.jinja)")
    parser.add_argument("--conversation", default="chat_20.json", help="the chat templates' render arguments, in DATA")
    parser.add_argument("sizes", nargs="*")
    args = parser.parse_args()
    chats = [name for name in args.chat.split(",") if name]
    if args.runs < 1 or args.time_ms < 1:
        sys.exit("--runs and --time-ms must be positive")
    if not args.sizes and not chats:
        sys.exit("nothing to do: give sizes N... or --chat NAME,...")
    for size in args.sizes:
        bench(size, args)
    if chats:
        kwargs = json.loads((args.data / args.conversation).read_text(encoding="utf-8"))
        for chat in chats:
            bench_chat(chat, kwargs, args)


if __name__ == "__main__":
    main()
