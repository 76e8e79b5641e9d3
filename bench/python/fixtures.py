#!/usr/bin/env python3
"""Every chat-template fixture from Python: teleprompt vs Jinja2 vs minijinja-py.

What a Python host pays to render a chat template, dict in and str out, for
each fixture of crates/teleprompt/tests/fixtures/chat-template/ (one
template, its scenarios and the outputs transformers rendered for them), one
scenario each: the one with the longest expected output (the first of
equals), as bench/jinja/fixtures.py picks it, its data with `tools` and
`documents` None and `add_generation_prompt` false where absent, as
transformers passes them.

- teleprompt: `Prompt(source, name=FILE, syntax="chat-template")` (FILE is
  `chat_template.jinja` or `tokenizer_config.json`, whose special tokens are
  the prompt's own defaults), timed `prompt.render(data).text`: the data
  converted from the Python objects, rendered without the GIL, the text
  made a str. It gets the fixture's data as given and normalizes the
  messages itself, within its timed render.
- Jinja2 3.1.6: compiled by transformers' own `_compile_jinja_template`
  (the replica in bench/jinja/transformers_env.py without transformers),
  timed `template.render(**kwargs)` as transformers' `render_jinja_template`
  calls it.
- minijinja-py 3.1.0: `Environment(templates={...})` set up as close to
  transformers' environment as its API goes: trim_blocks, lstrip_blocks,
  lenient undefined (Jinja2's default `Undefined`), no auto-escaping,
  pycompat (its default), transformers' `tojson` and `raise_exception` and
  `strftime_now` as Python callables; timed
  `env.render_template("chat_template", **kwargs)`.

Jinja2 and minijinja-py get the keyword arguments transformers'
`apply_chat_template` hands a template: for a tokenizer_config.json its
template (by `template_name`, else `tool_use` for a render with tools, else
`default`) and special tokens, and the messages normalized (null-valued keys
dropped, reasoning aliases; transformers' own functions when installed).

Checked before timing, byte for byte: teleprompt's and Jinja2's texts must
be the fixture's expected output (a fixture where either is not stops the
run; `--keep-going` marks it FAILED and does not time it); minijinja-py's
text that is not (or an error) is marked and that column left out for the
fixture. Templates calling `strftime_now` were rendered by the fixtures at
a fixed `now`: the check renders at that clock (teleprompt through
`render_many(now=…)`, the one render call of the Python API that takes a
clock), the timing at the system clock in all three engines (whose texts
must then be equal to each other too).

Skipped, and listed under the table: templates with `{% generation %}`
blocks (they print markers of their own on each render), fixtures whose
every scenario expects an error, and fixtures that select a config's
template by a name the Python API cannot pass (`template_name`) where the
render would choose another.

Timing as compare.py: one process; every engine calibrated to runs of
about --time-ms; --rounds rounds, in each the three engines' --runs runs in
turn (interleaved); garbage collection off while timing; the median ns per
render over all runs. The table: per fixture the medians and the ratios
engine / teleprompt (above 1: teleprompt is faster); then the median and
minimum ratio over the fixtures (and over the model templates alone).

Run with `bench/python/fixtures.sh` (the venv of run.sh, with transformers).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gc
import importlib.metadata
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
FIXTURES = ROOT / "crates/teleprompt/tests/fixtures/chat-template"
sys.path.insert(0, str(HERE.parent / "jinja"))

# The Rust bench's helpers, shared (its file is also named fixtures.py).
_spec = importlib.util.spec_from_file_location("jinja_fixtures", HERE.parent / "jinja" / "fixtures.py")
_jinja_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_jinja_fixtures)
parse_now = _jinja_fixtures.parse_now
first_difference = _jinja_fixtures.first_difference
construct = _jinja_fixtures.construct

SPECIAL_TOKENS = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]


class Clock:
    """The clock of transformers' `strftime_now` (its module's
    `datetime.now()`) and of minijinja-py's: the fixture's `now` for the
    check, the system clock (`at = None`) for the timing."""

    at: _dt.datetime | None = None

    @classmethod
    def now(cls) -> _dt.datetime:
        return cls.at if cls.at is not None else _dt.datetime.now()

    @classmethod
    def fixed(cls):
        class FixedDatetime(_dt.datetime):
            @classmethod
            def now(klass, tz=None):
                return cls.at if cls.at is not None else _dt.datetime.now(tz)

        return FixedDatetime




def sections(path: Path):
    """A fixture file's prompt (file name, text), options and scenarios
    [(name, data text, expected output or None)], in file order."""
    found = []
    for line in path.read_text("utf-8").splitlines(keepends=True):
        if line.startswith("=== "):
            words = line[4:].split()
            chomp = "-chomp" in words
            words = [word for word in words if word != "-chomp"]
            found.append([words[0], words[1] if len(words) > 1 else "", chomp, []])
        elif found:
            found[-1][3].append(line)
    prompt, options, scenarios = None, {}, []
    for kind, arg, chomp, lines in found:
        body = "".join(lines)
        if chomp and body.endswith("\n"):
            body = body[:-1]
        if kind == "prompt":
            prompt = (arg, body)
        elif kind == "options":
            options = dict(line.split(": ", 1) for line in body.splitlines() if line.strip())
        elif kind == "data":
            scenarios.append([arg, body, None])
        elif kind == "output":
            for scenario in scenarios:
                if scenario[0] == arg:
                    scenario[2] = body
    return prompt, options, scenarios


def template_and_tokens(prompt_file: str, prompt: str, template_name: str | None, data: dict):
    """The template Jinja2 renders and the special tokens that go under
    its data (bench/jinja/src/fixtures.rs, `template_and_tokens`)."""
    if prompt_file != "tokenizer_config.json":
        return prompt, {}, None
    config = json.loads(prompt)
    template = config["chat_template"]
    chosen = None
    if isinstance(template, list):
        by_name = {entry["name"]: entry["template"] for entry in template}
        if template_name is not None:
            chosen = template_name
        elif data.get("tools") is not None and "tool_use" in by_name:
            chosen = "tool_use"
        else:
            chosen = "default"
        template = by_name[chosen]
    tokens = {}
    for key in SPECIAL_TOKENS:
        token = config.get(key)
        if isinstance(token, dict):
            token = token.get("content")
        if token is not None:
            tokens[key] = token
    return template, tokens, chosen


def handed_over(kwargs: dict, ctu) -> dict:
    """The keyword arguments with the messages as transformers'
    apply_chat_template hands them to the template: its own functions when
    installed, else bench/jinja/src/fixtures.rs's `as_transformers_hands_over`."""
    messages = kwargs.get("messages")
    if not isinstance(messages, list):
        return kwargs
    if ctu is not None:
        messages = ctu._normalize_chat_messages(messages)
        messages = ctu._alias_reasoning_fields(ctu._plain_template_data(messages))
        return {**kwargs, "messages": messages}
    out = []
    for message in messages:
        if isinstance(message, dict):
            message = {key: value for key, value in message.items() if value is not None}
            reasoning = next((message[key] for key in ("reasoning_content", "thinking", "reasoning")
                              if key in message), None)
            if reasoning is not None:
                message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
        out.append(message)
    return {**kwargs, "messages": out}


def raise_exception(message):
    import jinja2

    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    """transformers' `tojson` filter."""
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(format):
    return Clock.now().strftime(format)


def minijinja_env(template: str):
    import minijinja

    env = minijinja.Environment(templates={"chat_template": template})
    env.trim_blocks = True
    env.lstrip_blocks = True
    env.keep_trailing_newline = False
    env.undefined_behavior = "lenient"
    env.auto_escape_callback = lambda name: None
    env.add_filter("tojson", tojson)
    env.add_global("raise_exception", raise_exception)
    env.add_global("strftime_now", strftime_now)
    return env




def attempt(render):
    try:
        return render(), None
    except Exception as error:  # noqa: BLE001 - any failure is reported
        return None, f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"


class Case:
    """One fixture's scenario in the three engines, checked."""

    def __init__(self, path: Path, compile_template, ctu):
        import teleprompt

        self.name = path.stem
        self.skipped = self.failed = self.minijinja_differs = None
        (prompt_file, source), options, scenarios = sections(path)
        chosen = None
        for scenario in scenarios:
            if scenario[2] is not None and (chosen is None or len(scenario[2]) > len(chosen[2])):
                chosen = scenario
        if chosen is None:
            self.skipped = "every scenario expects an error"
            return
        self.scenario, data_text, expected = chosen
        data = json.loads(data_text)
        for key, value in (("tools", None), ("documents", None), ("add_generation_prompt", False)):
            data.setdefault(key, value)
        template_name = options.get("template_name")
        template, tokens, picked = template_and_tokens(prompt_file, source, template_name, data)
        if "endgeneration" in template:
            self.skipped = "{% generation %} blocks"
            return
        if template_name is not None:
            _, _, automatic = template_and_tokens(prompt_file, source, None, data)
            if automatic != template_name:
                self.skipped = f"template_name {template_name} (not in the Python API)"
                return
        self.bytes = len(expected.encode())
        self.data = data
        self.kwargs = handed_over({**tokens, **data}, ctu)
        now = options.get("now")
        self.now = parse_now(now)

        self.prompt = teleprompt.Prompt(source, name=prompt_file, syntax="chat-template")
        self.jinja2 = compile_template(template)
        self.minijinja = minijinja_env(template)

        # The check, at the fixture's clock.
        Clock.at = self.now
        if now is None:
            ours = [attempt(lambda: self.prompt.render(data).text) for _ in range(3)]
        else:
            ours = [attempt(lambda: self.prompt.render_many([data], now=now)[0].text) for _ in range(3)]
        theirs, jinja2_error = attempt(lambda: self.jinja2.render(**self.kwargs))
        mini, mini_error = attempt(lambda: self.minijinja.render_template("chat_template", **self.kwargs))
        problems = []
        for index, (text, error) in enumerate(ours):
            if text != expected:
                problems.append(f"teleprompt render {index + 1}: "
                                + (error or first_difference(text, expected)))
                break
        if theirs != expected:
            problems.append("Jinja2: " + (jinja2_error or first_difference(theirs, expected)))
        if mini != expected:
            self.minijinja_differs = mini_error or first_difference(mini, expected)
        # At the system clock, as timed: the three texts alike.
        if not problems and self.now is not None:
            Clock.at = None
            ours, error = attempt(self.render_teleprompt)
            theirs, _ = attempt(self.render_jinja2)
            if ours != theirs:
                problems.append("teleprompt vs Jinja2 at the system clock: "
                                + (error or first_difference(ours or "", theirs or "")))
            elif self.minijinja_differs is None:
                mini, mini_error = attempt(self.render_minijinja)
                if mini != ours:
                    self.minijinja_differs = "at the system clock: " + (
                        mini_error or first_difference(mini or "", ours))
        if problems:
            self.failed = "; ".join(problems)

    def render_teleprompt(self):
        return self.prompt.render(self.data).text

    def render_jinja2(self):
        return self.jinja2.render(**self.kwargs)

    def render_minijinja(self):
        return self.minijinja.render_template("chat_template", **self.kwargs)

    def engines(self):
        found = {"teleprompt": self.render_teleprompt, "jinja2": self.render_jinja2}
        if self.minijinja_differs is None:
            found["minijinja-py"] = self.render_minijinja
        return found


def calibrate(render, time_ms):
    n = 1
    while True:
        started = time.perf_counter()
        for _ in range(n):
            render()
        took = time.perf_counter() - started
        if took >= time_ms / 1000 / 4:
            return max(1, int(n * (time_ms / 1000) / took))
        n *= 4


def timed(render, n):
    gc.disable()
    try:
        started = time.perf_counter_ns()
        for _ in range(n):
            render()
        return (time.perf_counter_ns() - started) / n
    finally:
        gc.enable()


def measure(case: Case, args) -> dict[str, float]:
    Clock.at = None
    renders = case.engines()
    counts = {engine: calibrate(render, args.time_ms) for engine, render in renders.items()}
    times = {engine: [] for engine in renders}
    for _ in range(args.rounds):
        for engine, render in renders.items():
            for _ in range(args.runs):
                times[engine].append(timed(render, counts[engine]))
    return {engine: statistics.median(values) for engine, values in times.items()}


def summary(label: str, ratios: list[tuple[float, str]], goal: float) -> str:
    if not ratios:
        return f"- {label}: none"
    values = [ratio for ratio, _ in ratios]
    slowest = min(ratios)
    below = sorted(name for ratio, name in ratios if ratio < goal)
    return (f"- {label}, {len(ratios)} fixtures: median {statistics.median(values):.2f}×, "
            f"min {slowest[0]:.2f}× (`{slowest[1]}`), max {max(values):.2f}×; "
            f"{len(below)} below {goal:g}×")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="fixtures (file names without .txt; default: all)")
    parser.add_argument("--fixtures", type=Path, default=FIXTURES, help="the fixtures' folder")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--time-ms", type=int, default=20)
    parser.add_argument("--setup", choices=["auto", "transformers", "replica"], default="auto",
                        help="how Jinja2 is set up (auto: transformers' function if installed)")
    parser.add_argument("--keep-going", action="store_true",
                        help="mark a fixture teleprompt or Jinja2 renders wrong as FAILED instead of stopping")
    parser.add_argument("--check", action="store_true", help="check the texts only, no timing")
    args = parser.parse_args()

    import jinja2
    import teleprompt

    ctu = None
    setup = "replica of transformers' _compile_jinja_template (bench/jinja/transformers_env.py)"
    if args.setup != "replica":
        try:
            from transformers.utils import chat_template_utils as ctu
        except ImportError:
            if args.setup == "transformers":
                sys.exit("--setup transformers: transformers is not importable here")
    if ctu is not None:
        ctu.datetime = Clock.fixed()  # what its `strftime_now` calls
        compile_template = ctu._compile_jinja_template
        setup = f"transformers {importlib.metadata.version('transformers')} _compile_jinja_template"
    else:
        from transformers_env import compile_replica

        def compile_template(source):
            template = compile_replica(source)
            template.globals["strftime_now"] = strftime_now
            return template

    if args.names:
        paths = [args.fixtures / f"{name.removesuffix('.txt')}.txt" for name in args.names]
    else:
        paths = sorted(args.fixtures.glob("*.txt"))
    cases = [Case(path, compile_template, ctu) for path in paths]
    skipped = [case for case in cases if case.skipped]
    failed = [case for case in cases if not case.skipped and case.failed]
    for case in failed:
        print(f"FAILED {case.name} [{case.scenario}]: {case.failed}", file=sys.stderr)
    if failed and not args.keep_going:
        sys.exit("teleprompt or Jinja2 does not print the fixture's output; stopping before timing "
                 "(--keep-going marks them FAILED and times the rest)")
    timed_cases = [case for case in cases if not case.skipped and not case.failed]
    print(f"checked: {len(timed_cases)} fixtures render as expected, {len(failed)} failed, "
          f"{len(skipped)} skipped", file=sys.stderr)
    if args.check:
        return

    before = " ".join(f"{load:.2f}" for load in os.getloadavg())
    results = {}
    for index, case in enumerate(timed_cases, 1):
        results[case.name] = measure(case, args)
        print(f"[{index}/{len(timed_cases)}] {case.name}: " + ", ".join(
            f"{engine} {ns / 1000:.2f} µs" for engine, ns in results[case.name].items()), file=sys.stderr)
    after = " ".join(f"{load:.2f}" for load in os.getloadavg())

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "crates"], cwd=ROOT, capture_output=True,
                           text=True).stdout.strip()
    print(f"{len(timed_cases)} fixtures timed of {len(cases)}; commit {commit}"
          f"{' + uncommitted changes in crates/' if dirty else ''}; Python {platform.python_version()}; "
          f"teleprompt {teleprompt.__version__}, jinja2 {jinja2.__version__} ({setup}), "
          f"minijinja {importlib.metadata.version('minijinja')}; rounds {args.rounds} x runs {args.runs}, "
          f"~{args.time_ms} ms each; load {before} before, {after} after\n")
    print("| fixture | scenario | bytes | teleprompt µs | Jinja2 µs | minijinja-py µs "
          "| Jinja2 ÷ teleprompt | minijinja-py ÷ teleprompt |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    vs_jinja2, vs_minijinja = [], []
    for case in cases:
        if case.skipped:
            continue
        if case.failed:
            print(f"| `{case.name}` | {case.scenario} | {case.bytes:,} | FAILED | | | | |")
            continue
        medians = results[case.name]
        ours, jinja, mini = medians["teleprompt"], medians["jinja2"], medians.get("minijinja-py")
        vs_jinja2.append((jinja / ours, case.name))
        cells = [f"`{case.name}`" + (" †" if construct(case.name) else ""), case.scenario, f"{case.bytes:,}",
                 f"{ours / 1000:.2f}", f"{jinja / 1000:.2f}"]
        if mini is None:
            cells += ["differs", f"{jinja / ours:.2f}", "–"]
        else:
            vs_minijinja.append((mini / ours, case.name))
            cells += [f"{mini / 1000:.2f}", f"{jinja / ours:.2f}", f"{mini / ours:.2f}"]
        print("| " + " | ".join(cells) + " |")
    print("\n† a hand-written case of one Jinja construct (the fixtures' README), not a model's template. "
          "Ratios: the engine's time over teleprompt's (above 1: teleprompt is faster).\n")
    for which, keep in (("model templates", lambda name: not construct(name)),
                        ("all fixtures", lambda name: True)):
        print(summary(f"Jinja2 ÷ teleprompt, {which}",
                      [(ratio, name) for ratio, name in vs_jinja2 if keep(name)], 5))
        print(summary(f"minijinja-py ÷ teleprompt, {which}",
                      [(ratio, name) for ratio, name in vs_minijinja if keep(name)], 1))
    differs = [case for case in timed_cases if case.minijinja_differs]
    if differs:
        print(f"- minijinja-py does not print the expected text for {len(differs)} (not timed):")
        for case in differs:
            print(f"  - `{case.name}`: {case.minijinja_differs}".replace("\n", " "))
    if skipped:
        print(f"- skipped, {len(skipped)}: " + "; ".join(f"`{case.name}` ({case.skipped})" for case in skipped))
    if failed:
        print(f"- FAILED, {len(failed)}:")
        for case in failed:
            print(f"  - `{case.name}` [{case.scenario}]: {case.failed}")
        sys.exit(1)


if __name__ == "__main__":
    main()
