#!/usr/bin/env python3
"""Python end to end: teleprompt vs Jinja2 vs minijinja (the Python package).

What a Python host pays for one render, dict in and str out, in one process:

- teleprompt: `Prompt(source, name="prompt.j2").render(data).text` — the
  data converted from Python objects, rendered without the GIL, the text
  returned as a str;
- Jinja2 3.1.6: `Environment().from_string(source).render(data)`;
- minijinja 3.1.0 (Python): `Environment(templates={...}).render_template(name, **data)`.

Workloads (bench/data):
- `py_system.j2` with `py_system.json`: the system prompt of the Rust
  render benchmark (crates/teleprompt/benches/render.rs, `prompt`): six
  fields, an `if`, a `lower` and a `join`, a loop over two items; 300 bytes
  of output;
- `py_prompt.j2` with `py_prompt_10.json` and `py_prompt_200.json`: a
  research-assistant prompt — an `if`, N documents each with a nested loop
  over its tags, `loop.index`/`loop.last` — 1 KB and 20 KB of output;
- `llama3_chat_template.jinja` with `chat_20.json`: a real Hugging Face chat
  template and a 20-message conversation; Jinja2 set up as transformers sets
  it up (trim_blocks, lstrip_blocks, loop controls, its `tojson`,
  `raise_exception`), teleprompt as a chat template (`syntax="chat-template"`),
  minijinja with trim_blocks/lstrip_blocks and pycompat.

Before timing, every engine renders once and the texts must be
byte-identical (the script stops if they are not). Then each engine gets an
iteration count for about --time-ms per run; the engines' runs are
interleaved --rounds times, --runs runs each; the table shows the median
ns per render of all runs and the ratio engine / teleprompt (above 1:
teleprompt is faster). Garbage collection is off while timing, for every
engine alike (as timeit does).

Run with `bench/python/run.sh` (it makes a venv, builds teleprompt in release
mode and installs the two other engines).
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data"


def raise_exception(message):
    raise Exception(message)


def jinja2_transformers(source):
    """A chat template compiled as transformers compiles it."""
    import jinja2
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env.from_string(source)


def engines(name, source, chat):
    import jinja2
    import minijinja
    import teleprompt

    if chat:
        prompt = teleprompt.Prompt(source, name=name, syntax="chat-template")
        j2 = jinja2_transformers(source)
        env = minijinja.Environment(templates={name: source})
        env.trim_blocks = True
        env.lstrip_blocks = True
        env.add_global("raise_exception", raise_exception)
    else:
        prompt = teleprompt.Prompt(source, name=name)
        j2 = jinja2.Environment(keep_trailing_newline=True).from_string(source)
        env = minijinja.Environment(templates={name: source})
        env.keep_trailing_newline = True
    return {
        "teleprompt": lambda data: prompt.render(data).text,
        "jinja2": lambda data: j2.render(data),
        "minijinja-py": lambda data: env.render_template(name, **data),
    }


def calibrate(render, data, time_ms):
    n = 1
    while True:
        started = time.perf_counter()
        for _ in range(n):
            render(data)
        took = time.perf_counter() - started
        if took >= time_ms / 1000 / 4:
            return max(1, int(n * (time_ms / 1000) / took))
        n *= 4


def timed(render, data, n):
    gc.disable()
    try:
        started = time.perf_counter_ns()
        for _ in range(n):
            render(data)
        return (time.perf_counter_ns() - started) / n
    finally:
        gc.enable()


def workload(label, template, data_file, chat, args):
    source = (DATA / template).read_text()
    data = json.loads((DATA / data_file).read_text())
    renders = engines(template, source, chat)
    outputs = {engine: render(data) for engine, render in renders.items()}
    reference = outputs["teleprompt"]
    for engine, text in outputs.items():
        if text != reference:
            import difflib

            diff = "".join(difflib.unified_diff(reference.splitlines(True), text.splitlines(True), "teleprompt", engine))
            sys.exit(f"{label}: {engine} rendered different text:\n{diff[:3000]}")
    counts = {engine: calibrate(render, data, args.time_ms) for engine, render in renders.items()}
    times = {engine: [] for engine in renders}
    for _ in range(args.rounds):
        for engine, render in renders.items():
            for _ in range(args.runs):
                times[engine].append(timed(render, data, counts[engine]))
    medians = {engine: statistics.median(values) for engine, values in times.items()}
    return label, len(reference.encode()), medians


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--time-ms", type=int, default=200)
    args = parser.parse_args()

    import jinja2
    import minijinja
    import teleprompt

    rows = [
        workload("system prompt (Rust bench's `prompt`)", "py_system.j2", "py_system.json", False, args),
        workload("prompt, 10 documents", "py_prompt.j2", "py_prompt_10.json", False, args),
        workload("prompt, 200 documents", "py_prompt.j2", "py_prompt_200.json", False, args),
        workload("llama3 chat template, 20 messages", "llama3_chat_template.jinja", "chat_20.json", True, args),
    ]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True).stdout.strip()
    print(f"commit {commit}; Python {platform.python_version()}; teleprompt {teleprompt.__version__}, "
          f"jinja2 {jinja2.__version__}, minijinja {importlib.metadata.version('minijinja')}; "
          f"load average {os.getloadavg()[0]:.2f}; rounds {args.rounds} x runs {args.runs}, ~{args.time_ms} ms each")
    print()
    print("| workload | output | teleprompt | Jinja2 | minijinja-py | Jinja2 / teleprompt | minijinja-py / teleprompt |")
    print("|---|---|---|---|---|---|---|")
    for label, size, medians in rows:
        t, j, m = medians["teleprompt"], medians["jinja2"], medians["minijinja-py"]
        print(f"| {label} | {size:,} B | {t / 1000:.1f} µs | {j / 1000:.1f} µs | {m / 1000:.1f} µs | {j / t:.2f}× | {m / t:.2f}× |")


if __name__ == "__main__":
    main()
