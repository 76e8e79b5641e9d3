#!/usr/bin/env python3
"""Every chat-template fixture: teleprompt vs raw minijinja vs Python's Jinja2.

Takes each fixture of crates/teleprompt/tests/fixtures/chat-template/ (one
template, its scenarios and the outputs transformers rendered for them), one
scenario each (the one with the longest expected output), renders it in three
engines, checks the texts byte for byte against the fixture's output and each
other, times the engines and prints a markdown table: per fixture the
scenario, the output's bytes, the median microseconds per render of each
engine, minijinja's and Jinja2's time over teleprompt's (above 1: teleprompt
is faster) and whether teleprompt rendered it on its direct path; then a
summary.

- teleprompt and raw minijinja 3.1: the release binary of bench/jinja in its
  fixtures mode (`--fixtures DIR`, src/fixtures.rs; built here with
  `nice -n 10 cargo build --release`), the two engines' runs interleaved in
  one process. minijinja is set up as transformers sets up Jinja2 (see
  ../chat_template.rs) plus a `tojson` filter printing as transformers'
  `json.dumps` does and `strftime_now` at the fixture's `now`.
- The messages minijinja and Jinja2 get are what transformers'
  apply_chat_template hands the template (null-valued keys dropped,
  reasoning aliases: the fixtures' data already is, but for the
  `messages_normalized*` fixtures); with transformers installed, this script
  checks that against transformers' own functions. teleprompt gets the
  fixture's data and does that itself, within its timed render.
- Jinja2: compiled as transformers compiles a chat template (its own
  `_compile_jinja_template` when transformers is installed, with its
  `strftime_now` clock fixed at the fixture's `now` as the fixtures'
  generate.py fixes it; else the replica in transformers_env.py); timed is
  `template.render(**kwargs)` with the kwargs loaded once, as in compare.py.

Skipped, and listed under the table: templates with `{% generation %}` blocks
(the `*-trl-training` ones and a few more: they print markers of their own on
each render) and fixtures whose every scenario expects an error.

Checks, before any timing: teleprompt's text must be the fixture's output (and
stay so on a second and third render of the same data) and Jinja2's must be
too; a fixture where either differs stops the run (`--keep-going`: it is
marked FAILED and not timed). A fixture where raw minijinja does not print the
same bytes (Python's `None`/`True`, float and dict reprs, a Python method
pycompat lacks…) is kept, marked "minijinja differs" with its first
difference, and has no minijinja time. With transformers installed, the
replica is also checked against it (differences are listed, not fatal).

Timing as compare.py: every engine gets an iteration count for a run of
about --time-ms, then --runs runs, median ns per render (Jinja2 with
`timeit`, so with the garbage collector off); the Rust program and the Python
timings alternate --rounds times and the table shows the median of the
rounds' medians. The defaults (--runs 5 --time-ms 50 --rounds 1) keep a run
over ~160 fixtures to a few minutes.

Setup (once): as compare.py's docstring says,

    python3 -m venv /tmp/benchvenv
    /tmp/benchvenv/bin/pip install jinja2==3.1.6 transformers

Run from anywhere:

    /tmp/benchvenv/bin/python bench/jinja/fixtures.py
    /tmp/benchvenv/bin/python bench/jinja/fixtures.py --rounds 3 --runs 7 --time-ms 100
    /tmp/benchvenv/bin/python bench/jinja/fixtures.py llama-3.1-8b-instruct qwen3-8b

CARGO_TARGET_DIR is honoured (default: bench/jinja/target).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from compare import build, calibrate, load, transformers_compiler
from transformers_env import compile_replica

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
FIXTURES = ROOT / "crates/teleprompt/tests/fixtures/chat-template"


class Clock:
    """The clock transformers' `strftime_now` reads (`datetime.now()` of
    its module), fixed at the current fixture's `now`, as the fixtures'
    generate.py fixes it."""

    at: _dt.datetime | None = None

    @classmethod
    def fixed(cls):
        class FixedDatetime(_dt.datetime):
            @classmethod
            def now(klass, tz=None):
                return cls.at if cls.at is not None else _dt.datetime.now(tz)

        return FixedDatetime


def parse_now(now: str | None) -> _dt.datetime | None:
    """`2026-11-23T10:00:00Z` as the naive datetime generate.py used."""
    if now is None:
        return None
    return _dt.datetime.fromisoformat(now.replace("Z", "+00:00")).replace(tzinfo=None)


def lines(binary: Path, args, extra: list[str], names: list[str]) -> list[dict]:
    cmd = [str(binary), "--fixtures", str(args.fixtures), "--runs", str(args.runs),
           "--time-ms", str(args.time_ms), *extra, *names]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)}\nfailed ({done.returncode}): {done.stderr.strip()}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def first_difference(a: str, b: str) -> str:
    """Where two texts part, as `at char N: '…a…' vs '…b…'`."""
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    start = max(0, at - 20)
    return f"at char {at}: {a[start:at + 30]!r} vs {b[start:at + 30]!r}"


def handed_over(ctu, given: dict) -> dict:
    """The keyword arguments with the messages as transformers'
    apply_chat_template hands them to the template (its own functions)."""
    if not isinstance(given.get("messages"), list):
        return given
    messages = ctu._normalize_chat_messages(given["messages"])
    messages = ctu._alias_reasoning_fields(ctu._plain_template_data(messages))
    return {**given, "messages": messages}


def construct(name: str) -> bool:
    """A hand-written case of one Jinja construct (the fixtures' README):
    not a model's template."""
    return name.startswith("jinja2_") or name in ("whitespace_defaults", "messages_normalized")


def jinja2_time(template, kwargs: dict, args) -> float:
    """Median ns per render over args.runs runs of about args.time_ms."""
    import timeit

    render = lambda: template.render(**kwargs)  # noqa: E731
    iters = calibrate(args.time_ms / 1000, render)
    timer = timeit.Timer(render)
    return statistics.median(timer.timeit(iters) / iters * 1e9 for _ in range(args.runs))


def direct_cell(row: dict) -> str:
    """yes / declined / partly / no: reason, from the direct path's counts."""
    found = row.get("direct_path_after_race") or row.get("direct_path")
    of = " (its `tool_use` template)" if row.get("direct_path_of") else ""
    if found is None:
        return "?"
    if "not_lowered" in found:
        return f"no: {found['not_lowered']}{of}".replace("|", "\\|")
    rendered, declined = found["rendered"], found["declined"]
    if declined == 0 and rendered > 0:
        return "yes" + of
    if rendered == 0 and declined > 0:
        return "declined" + of
    return f"partly ({rendered} direct, {declined} declined){of}"


def git(*argv: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *argv], capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="fixtures (file names without .txt; default: all)")
    parser.add_argument("--fixtures", type=Path, default=FIXTURES, help="the fixtures' folder")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--time-ms", type=int, default=50)
    parser.add_argument("--setup", choices=["auto", "transformers", "replica"], default="auto",
                        help="how Jinja2 is set up (auto: transformers' function if installed)")
    parser.add_argument("--keep-going", action="store_true",
                        help="mark a fixture teleprompt or Jinja2 renders wrong as FAILED instead of stopping")
    parser.add_argument("--no-build", action="store_true", help="use the binary already built")
    parser.add_argument("--commit", help="the code measured, for the report (default: git rev-parse "
                        "--short HEAD, noting uncommitted changes in crates/)")
    args = parser.parse_args()

    import jinja2

    found = transformers_compiler() if args.setup != "replica" else None
    if args.setup == "transformers" and found is None:
        sys.exit("--setup transformers: transformers is not importable here")
    if found is not None:
        from transformers.utils import chat_template_utils as ctu

        ctu.datetime = Clock.fixed()  # what its `strftime_now` calls
        compile_template, version = found
        setup = f"transformers {version} _compile_jinja_template"
    else:
        compile_template = None
        setup = "replica of transformers' _compile_jinja_template"
    if args.commit:
        commit, dirty = args.commit, ""
    else:
        commit = git("rev-parse", "--short", "HEAD") or "?"
        dirty = " + uncommitted changes in crates/" if git("status", "--porcelain", "--", "crates") else ""
    print(f"jinja2 {jinja2.__version__}, {setup}; Python {platform.python_version()}; "
          f"commit {commit}{dirty}", file=sys.stderr)

    binary = build(args.no_build)

    # The check: every engine's text against the fixture's output.
    with tempfile.TemporaryDirectory() as out_dir:
        out = Path(out_dir)
        checked = lines(binary, args, ["--check", "--out", str(out)], args.names)
        rows: dict[str, dict] = {}
        skipped: list[tuple[str, str]] = []
        templates: dict[str, object] = {}
        kwargs: dict[str, dict] = {}
        failures: list[str] = []
        replica_differs: list[str] = []
        for row in checked:
            name = row["fixture"]
            if "skipped" in row:
                skipped.append((name, row["skipped"]))
                continue
            rows[name] = row
            expected = (out / f"{name}.expected.txt").read_text(encoding="utf-8")
            source = (out / f"{name}.template.jinja").read_text(encoding="utf-8")
            kwargs[name] = json.loads((out / f"{name}.kwargs.json").read_text(encoding="utf-8"))
            if found is not None:
                given = json.loads((out / f"{name}.given.json").read_text(encoding="utf-8"))
                if json.dumps(handed_over(ctu, given)) != json.dumps(kwargs[name]):
                    sys.exit(f"{name}: the bench hands minijinja and Jinja2 other messages than transformers' "
                             "apply_chat_template would (see as_transformers_hands_over in src/fixtures.rs)")
            now = parse_now(row.get("now"))
            Clock.at = now
            replica = compile_replica(source, now)
            templates[name] = compile_template(source) if compile_template else replica
            try:
                jinja2_text = templates[name].render(**kwargs[name])
            except Exception as error:  # noqa: BLE001 - any failure is reported
                jinja2_text = None
                row["jinja2"] = f"error: {type(error).__name__}: {error}"
            else:
                row["jinja2"] = "same" if jinja2_text == expected else "differs"
                if compile_template:
                    try:
                        same = replica.render(**kwargs[name]) == jinja2_text
                    except Exception:  # noqa: BLE001
                        same = False
                    if not same:
                        replica_differs.append(name)
            teleprompt_text = (out / f"{name}.teleprompt.txt")
            teleprompt_text = teleprompt_text.read_text(encoding="utf-8") if teleprompt_text.exists() else None
            minijinja_text = (out / f"{name}.minijinja.txt")
            minijinja_text = minijinja_text.read_text(encoding="utf-8") if minijinja_text.exists() else None
            if row["teleprompt"] != "same" or row["jinja2"] != "same" or teleprompt_text != jinja2_text:
                why = f"teleprompt {row['teleprompt']}, Jinja2 {row['jinja2']}"
                if teleprompt_text is not None and jinja2_text is not None and teleprompt_text != jinja2_text:
                    why += ", teleprompt vs Jinja2 " + first_difference(teleprompt_text, jinja2_text)
                failures.append(f"{name} [{row['scenario']}]: {why}")
                row["failed"] = why
            if minijinja_text is not None and jinja2_text is not None and minijinja_text != jinja2_text:
                row["minijinja_difference"] = first_difference(minijinja_text, jinja2_text)
            print(f"{name} [{row['scenario'] or '–'}]: teleprompt {row['teleprompt']}, minijinja "
                  f"{row['minijinja'][:100]}, jinja2 {row['jinja2'][:100]}", file=sys.stderr)
    if failures:
        print("teleprompt or Jinja2 does not print the fixture's output:", file=sys.stderr)
        for failure in failures:
            print("  " + failure, file=sys.stderr)
        if not args.keep_going:
            sys.exit("stopping before timing (--keep-going marks them FAILED and times the rest)")
    if replica_differs:
        print(f"the replica renders differently from transformers for: {', '.join(replica_differs)}",
              file=sys.stderr)

    timed = [name for name, row in rows.items() if "failed" not in row]
    before = load()
    print(f"load before timing: {before}", file=sys.stderr)
    rounds: dict[tuple[str, str], list[float]] = {}
    for r in range(1, args.rounds + 1):
        print(f"round {r}/{args.rounds}: teleprompt and minijinja ...", file=sys.stderr)
        for row in lines(binary, args, [], timed):
            if "engine" in row:
                rounds.setdefault((row["engine"], row["template"]), []).append(float(row["median_ns"]))
            elif "direct_path_after_race" in row:
                rows[row["fixture"]]["direct_path_after_race"] = row["direct_path_after_race"]
        print(f"round {r}/{args.rounds}: jinja2 ...", file=sys.stderr)
        for name in timed:
            Clock.at = parse_now(rows[name].get("now"))
            rounds.setdefault(("jinja2", name), []).append(jinja2_time(templates[name], kwargs[name], args))
    after = load()
    print(f"load after timing:  {after}", file=sys.stderr)
    medians = {key: statistics.median(values) for key, values in rounds.items()}

    print(f"{len(rows)} fixtures timed of {len(rows) + len(skipped)}, commit {commit}{dirty}, "
          f"{setup}, jinja2 {jinja2.__version__}, Python {platform.python_version()}; "
          f"--runs {args.runs} --time-ms {args.time_ms} --rounds {args.rounds}; "
          f"load {before} before, {after} after\n")
    print("| fixture | scenario | bytes | teleprompt µs | minijinja µs | Jinja2 µs "
          "| minijinja ÷ teleprompt | Jinja2 ÷ teleprompt | direct path |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    vs_minijinja: list[tuple[float, str]] = []
    vs_jinja2: list[tuple[float, str]] = []
    direct_names: list[str] = []
    for name, row in rows.items():
        ours = medians.get(("teleprompt", name))
        theirs = medians.get(("minijinja", name))
        python = medians.get(("jinja2", name))
        cells = [f"`{name}`" + (" †" if construct(name) else ""), row["scenario"] or "–", f"{row['bytes']:,}"]
        cells.append(f"{ours / 1000:.2f}" if ours else "FAILED")
        if row["minijinja"] != "same":
            what = "minijinja differs" if row["minijinja"] == "differs" else "minijinja fails"
            cells.append(what)
        else:
            cells.append(f"{theirs / 1000:.2f}" if theirs else "–")
        cells.append(f"{python / 1000:.2f}" if python else "–")
        if ours and theirs:
            vs_minijinja.append((theirs / ours, name))
            cells.append(f"{theirs / ours:.2f}")
        else:
            cells.append("–")
        if ours and python:
            vs_jinja2.append((python / ours, name))
            cells.append(f"{python / ours:.2f}")
        else:
            cells.append("–")
        direct = direct_cell(row)
        if direct.startswith("yes"):
            direct_names.append(name)
        cells.append(direct)
        print("| " + " | ".join(cells) + " |")

    print("\n† a hand-written case of one Jinja construct (the fixtures' README), not a model's template. "
          "Ratios: the engine's time over teleprompt's (above 1: teleprompt is faster). "
          "Direct path: yes (every render of the run on it), declined (lowered, but every render "
          "gave way to minijinja), no: the first construct the lowering refused.")
    print()
    for which, keep in (("model templates", lambda name: not construct(name)),
                        ("fixtures (with the hand-written construct cases)", lambda name: True)):
        ratios = [(ratio, name) for ratio, name in vs_minijinja if keep(name)]
        if ratios:
            slowest = min(ratios)
            below = sorted(name for ratio, name in ratios if ratio < 1)
            print(f"- minijinja ÷ teleprompt over the {len(ratios)} {which} minijinja renders alike: "
                  f"median {statistics.median(r for r, _ in ratios):.2f}, "
                  f"slowest `{slowest[1]}` {slowest[0]:.2f}; {len(below)} slower than raw minijinja")
        ratios = [ratio for ratio, name in vs_jinja2 if keep(name)]
        if ratios:
            print(f"- Jinja2 ÷ teleprompt over the {len(ratios)} {which}: median "
                  f"{statistics.median(ratios):.2f}, min {min(ratios):.2f}, max {max(ratios):.2f}")
    directly = len(direct_names)
    print(f"- on the direct path: {directly} of {len(rows)} "
          f"({sum(1 for name in direct_names if not construct(name))} of "
          f"{sum(1 for name in rows if not construct(name))} model templates)")
    differs = [(name, row) for name, row in rows.items() if row["minijinja"] != "same"]
    if differs:
        print(f"- raw minijinja does not print Jinja2's bytes for {len(differs)}:")
        for name, row in differs:
            why = row.get("minijinja_difference") or row["minijinja"]
            print(f"  - `{name}`: {why}".replace("\n", " "))
    if skipped:
        print(f"- skipped, {len(skipped)}: " + "; ".join(f"`{name}` ({why})" for name, why in skipped))
    if failures:
        print(f"- FAILED (teleprompt or Jinja2 not the fixture's output), {len(failures)}:")
        for failure in failures:
            print(f"  - {failure}")
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
