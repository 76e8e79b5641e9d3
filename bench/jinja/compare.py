#!/usr/bin/env python3
"""Chat templates: teleprompt vs raw minijinja vs Python's Jinja2, in one run.

Renders Hugging Face chat templates (bench/data/NAME_chat_template.jinja) with
one conversation (bench/data/chat_20.json, the keyword arguments of the
render call) in three engines, checks that all three texts are byte-identical
(stops with an error if not), times them side by side and prints, per
template, the median microseconds per render and the ratio engine time /
teleprompt time (above 1 means teleprompt is faster).

- teleprompt and raw minijinja 3.1.0: the release binary of bench/jinja
  (built here with `nice -n 10 cargo build --release`), the two engines' runs
  interleaved in one process; see src/main.rs and ../chat_template.rs for
  the minijinja setup.
- Jinja2: compiled exactly as transformers compiles a chat template. With
  transformers installed, its own `_compile_jinja_template` is used (and the
  replica in transformers_env.py is checked against it); without it, that
  replica of the function: `ImmutableSandboxedEnvironment(trim_blocks=True,
  lstrip_blocks=True, extensions=[AssistantTracker, jinja2.ext.loopcontrols])`
  with its `tojson` filter (json.dumps, no HTML escaping) and the
  `raise_exception` and `strftime_now` globals. `--setup` forces one. Timed is
  `template.render(**kwargs)`, the call transformers' apply_chat_template
  makes (without its own per-call work around it: copying the messages into
  plain dicts and lists, tokenizer bookkeeping), kwargs loaded once.

Every engine gets the same calibration: an iteration count for a run of
about --time-ms, then --runs runs, median ns per render; Jinja2 runs are
timed with `timeit` (so, as timeit does, with the garbage collector off).
The Rust program and the Python timings alternate --rounds times; the table
shows the median of the rounds' medians.

Setup (once; not part of `cargo test` or CI):

    python3 -m venv /tmp/benchvenv
    /tmp/benchvenv/bin/pip install jinja2==3.1.6          # replica of transformers' setup
    /tmp/benchvenv/bin/pip install jinja2==3.1.6 transformers   # or transformers' own function

Run from anywhere:

    /tmp/benchvenv/bin/python bench/jinja/compare.py
    /tmp/benchvenv/bin/python bench/jinja/compare.py --rounds 5 --runs 11 --time-ms 300
    /tmp/benchvenv/bin/python bench/jinja/compare.py --setup replica llama3

CARGO_TARGET_DIR is honoured (default: bench/jinja/target).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path

from transformers_env import compile_replica

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data"
NAMES = ["llama3", "llama31"]
ENGINES = ["teleprompt", "minijinja", "jinja2"]


def transformers_compiler():
    """transformers' own compile function and version, or None."""
    try:
        import transformers
        from transformers.utils.chat_template_utils import _compile_jinja_template
    except ImportError:
        return None
    # The function is lru_cached on the source; the wrapped one compiles anew.
    return getattr(_compile_jinja_template, "__wrapped__", _compile_jinja_template), transformers.__version__


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, **kwargs)


def build(no_build: bool) -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR", HERE / "target"))
    binary = target / "release" / "teleprompt-bench-jinja"
    if not no_build:
        print("building bench/jinja (release) ...", file=sys.stderr)
        nice = ["nice", "-n", "10"] if sys.platform != "win32" else []
        run(nice + ["cargo", "build", "--quiet", "--release", "--manifest-path", str(HERE / "Cargo.toml")])
    if not binary.exists():
        sys.exit(f"no binary at {binary}: build bench/jinja first (or drop --no-build)")
    return binary


def rust_times(binary: Path, args, names: list[str]) -> dict[tuple[str, str], float]:
    cmd = [str(binary), "--data", str(DATA), "--conversation", args.conversation,
           "--runs", str(args.runs), "--time-ms", str(args.time_ms), *names]
    out = run(cmd, capture_output=True, text=True).stdout
    times = {}
    for line in out.splitlines():
        row = json.loads(line)
        times[(row["engine"], row["template"])] = float(row["median_ns"])
    return times


def calibrate(run_time: float, f) -> int:
    """Iterations of f that take about run_time seconds (as the Rust side)."""
    timer = timeit.Timer(f)
    iters = 1
    while True:
        elapsed = timer.timeit(iters)
        if elapsed >= run_time / 10:
            return max(1, int(iters * run_time / elapsed))
        iters *= 2


def jinja2_time(template, kwargs: dict, args) -> float:
    """Median ns per render over args.runs runs of about args.time_ms."""
    render = lambda: template.render(**kwargs)  # noqa: E731
    iters = calibrate(args.time_ms / 1000, render)
    timer = timeit.Timer(render)
    return statistics.median(timer.timeit(iters) / iters * 1e9 for _ in range(args.runs))


def check_texts(binary: Path, args, names: list[str], templates: dict, kwargs: dict) -> None:
    with tempfile.TemporaryDirectory() as out:
        run([str(binary), "--data", str(DATA), "--conversation", args.conversation,
             "--runs", "1", "--time-ms", "1", "--out", out, *names], capture_output=True)
        failed = False
        for name in names:
            texts = {engine: (Path(out) / f"{name}.{engine}.txt").read_bytes()
                     for engine in ("teleprompt", "minijinja")}
            texts["jinja2"] = templates[name].render(**kwargs).encode("utf-8")
            for engine in ("minijinja", "jinja2"):
                if texts[engine] == texts["teleprompt"]:
                    print(f"{name}: {engine} output is byte-identical to teleprompt's "
                          f"({len(texts['teleprompt']):,} bytes)", file=sys.stderr)
                else:
                    failed = True
                    print(f"{name}: {engine} output DIFFERS from teleprompt's:", file=sys.stderr)
                    diff = difflib.unified_diff(
                        texts["teleprompt"].decode("utf-8", "replace").splitlines(),
                        texts[engine].decode("utf-8", "replace").splitlines(),
                        "teleprompt", engine, lineterm="", n=1)
                    for line in list(diff)[:20]:
                        print("  " + line, file=sys.stderr)
        if failed:
            sys.exit("outputs differ: the timings would not compare the same work")


def load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", default=NAMES, help="templates (bench/data/NAME_chat_template.jinja)")
    parser.add_argument("--conversation", default="chat_20.json", help="render arguments, in bench/data")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--time-ms", type=int, default=200)
    parser.add_argument("--setup", choices=["auto", "transformers", "replica"], default="auto",
                        help="how Jinja2 is set up (auto: transformers' function if installed)")
    parser.add_argument("--no-build", action="store_true", help="use the binary already built")
    args = parser.parse_args()

    import jinja2

    kwargs = json.loads((DATA / args.conversation).read_text(encoding="utf-8"))
    sources = {name: (DATA / f"{name}_chat_template.jinja").read_text(encoding="utf-8") for name in args.names}

    found = transformers_compiler() if args.setup != "replica" else None
    if args.setup == "transformers" and found is None:
        sys.exit("--setup transformers: transformers is not importable here")
    if found is not None:
        compile_template, version = found
        setup = f"transformers {version} _compile_jinja_template"
        templates = {name: compile_template(source) for name, source in sources.items()}
        for name, source in sources.items():
            if compile_replica(source).render(**kwargs) != templates[name].render(**kwargs):
                sys.exit(f"{name}: the replica of transformers' setup renders differently from transformers")
        setup += " (the replica renders the same)"
    else:
        setup = "replica of transformers' _compile_jinja_template"
        templates = {name: compile_replica(source) for name, source in sources.items()}
    print(f"jinja2 {jinja2.__version__}, {setup}; Python {platform.python_version()}", file=sys.stderr)

    binary = build(args.no_build)
    check_texts(binary, args, args.names, templates, kwargs)

    print(f"load before timing: {load()}", file=sys.stderr)
    rounds: dict[tuple[str, str], list[float]] = {}
    for r in range(1, args.rounds + 1):
        print(f"round {r}/{args.rounds} ...", file=sys.stderr)
        for key, ns in rust_times(binary, args, args.names).items():
            rounds.setdefault(key, []).append(ns)
        for name in args.names:
            rounds.setdefault(("jinja2", name), []).append(jinja2_time(templates[name], kwargs, args))
    print(f"load after timing:  {load()}", file=sys.stderr)

    medians = {key: statistics.median(values) for key, values in rounds.items()}
    print(f"{'engine':<12} {'template':<10} {'median':>14} {'ratio vs teleprompt':>22}")
    for name in args.names:
        base = medians[("teleprompt", name)]
        for engine in ENGINES:
            ns = medians[(engine, name)]
            print(f"{engine:<12} {name:<10} {ns / 1000:>11.2f} us {ns / base:>22.2f}")


if __name__ == "__main__":
    main()
