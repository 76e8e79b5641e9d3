#!/usr/bin/env python3
"""The ratio table of bench/all/run.sh (standard library only).

Usage: python3 table.py TIMES.jsonl [--commit C] [--load-start L] [--load-end L]
       [--command CMD] [--versions TEXT]

TIMES.jsonl holds the JSON lines the bench programs print
({"engine", "template", "median_ns", "runs", "iters", "bytes"}), several
rounds of them, and the turn append engines' reset lines ({"engine":
"teleprompt-turn-append-reset-LEN", "template": "turn", "mean_ns", ...}).
Per engine and template, the median of the rounds' medians (of the rounds'
means for the resets); then tables of every engine's time (py_prompt, chat
templates, turns) and a markdown table of ratios, teleprompt against each
peer, and of the turn's growth with the history, with the issue's goals.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict

SIZES = ("10", "200")
# Chat templates (bench/data/NAME_chat_template.jinja), with chat_20.json.
CHATS = ("llama3", "llama31")
# History lengths of the turn engines; the growth is the last over the first.
TURNS = (10, 1_000, 10_000)

# Display names of the engines.
NAMES = {
    "teleprompt-jinja": "teleprompt, Jinja",
    "teleprompt-go": "teleprompt, Go",
    "teleprompt-handlebars": "teleprompt, Handlebars",
    "minijinja": "raw minijinja 3.1.0",
    "tera": "tera 1",
    "jinja2": "Python Jinja2",
    "handlebars-rust": "handlebars-rust 6",
    "handlebars-js": "handlebars.js 4",
    "gotmpl": "gotmpl 0.6",
    "go-text-template": "Go text/template",
    "hand-written": "hand-written Rust",
}

# The chat-template engines.
CHAT_NAMES = {
    "teleprompt-chat-template": "teleprompt, chat-template",
    "minijinja": "raw minijinja 3.1.0",
    "jinja2": "Python Jinja2",
}

# (row label, teleprompt engine, peer engine, goal on peer / teleprompt or None)
ROWS = [
    ("Jinja", "teleprompt-jinja", "minijinja", (0.91, "≥ 0.91 (overhead ≤ 1.10×)")),
    ("Handlebars", "teleprompt-handlebars", "handlebars-js", (3.0, "≥ 3")),
    ("Go", "teleprompt-go", "gotmpl", (1.5, "≥ 1.5")),
    ("Jinja", "teleprompt-jinja", "tera", None),
    ("Jinja", "teleprompt-jinja", "jinja2", None),
    ("Handlebars", "teleprompt-handlebars", "handlebars-rust", None),
    ("Go", "teleprompt-go", "go-text-template", None),
]


def fmt_time(ns: float | None) -> str:
    if ns is None:
        return "n/a"
    us = ns / 1000
    if us < 10:
        return f"{us:.2f} µs"
    if us < 1000:
        return f"{us:.1f} µs"
    return f"{us:,.0f} µs"


def pair(values) -> str:
    return " / ".join(values)


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a / b


def fmt_ratio(r: float | None) -> str:
    return "n/a" if r is None else f"{r:.2f}"


def verdict(ratios, good, labels=tuple(f"N={s}" for s in SIZES)) -> str:
    if any(r is None for r in ratios):
        return "n/a"
    met = [good(r) for r in ratios]
    if all(met):
        return "met"
    if not any(met):
        return "**not met**"
    return "**not met** at " + " and ".join(label for label, ok in zip(labels, met) if not ok)


def minus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("times")
    parser.add_argument("--commit", default="?")
    parser.add_argument("--load-start", default="?")
    parser.add_argument("--load-end", default="?")
    parser.add_argument("--command", default="bench/all/run.sh")
    parser.add_argument("--versions", default="")
    args = parser.parse_args()

    runs = defaultdict(list)
    resets = defaultdict(list)
    bytes_of = {}
    rounds = defaultdict(int)
    with open(args.times, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line)
            key = r["engine"], r["template"]
            if "mean_ns" in r:
                resets[key].append(r["mean_ns"])
                continue
            runs[key].append(r["median_ns"])
            bytes_of[r["template"]] = r["bytes"]
            rounds[key] += 1
    med = {key: statistics.median(values) for key, values in runs.items()}
    reset_med = {key: statistics.median(values) for key, values in resets.items()}

    def t(engine, size):
        """An engine's time on py_prompt_SIZE."""
        return med.get((engine, f"py_prompt_{size}"))

    def chat(engine, name):
        """An engine's time on chat template NAME."""
        return med.get((engine, f"{name}_chat_template"))

    def turn(kind, length):
        """A turn engine's time (kind: append, reuse) at a history length."""
        return med.get((f"teleprompt-turn-{kind}-{length}", "turn"))

    def reset(length):
        """The append engine's reset, per turn, at a history length."""
        return reset_med.get((f"teleprompt-turn-append-reset-{length}", "turn"))

    def turn_net(length):
        """The append engine's time without its reset."""
        return minus(turn("append", length), reset(length))

    n_rounds = max(rounds.values()) if rounds else 0
    print(f"commit {args.commit}; load average {args.load_start} at start, {args.load_end} at end")
    print(f"command: {args.command}")
    if args.versions:
        print(args.versions)
    out_bytes = ", ".join(
        [f"N={s}: {bytes_of[f'py_prompt_{s}']:,} B" for s in SIZES if f"py_prompt_{s}" in bytes_of]
        + [f"{c}: {bytes_of[f'{c}_chat_template']:,} B" for c in CHATS if f"{c}_chat_template" in bytes_of]
    )
    print(f"median of {n_rounds} rounds' medians; output {out_bytes}")
    print()

    print("| engine | N=10 | N=200 | × hand-written Rust (N=10 / N=200) |")
    print("|---|---:|---:|---:|")
    for engine, label in NAMES.items():
        if all(t(engine, s) is None for s in SIZES):
            continue
        over = [fmt_ratio(ratio(t(engine, s), t("hand-written", s))) for s in SIZES]
        print(f"| {label} | {fmt_time(t(engine, '10'))} | {fmt_time(t(engine, '200'))} | {pair(over)} |")
    print()

    if any((engine, f"{c}_chat_template") in med for engine in CHAT_NAMES for c in CHATS):
        print("| chat template, 20 messages | " + " | ".join(CHATS) + " | × teleprompt (" + " / ".join(CHATS) + ") |")
        print("|---|" + "---:|" * len(CHATS) + "---:|")
        for engine, label in CHAT_NAMES.items():
            cells = " | ".join(fmt_time(chat(engine, c)) for c in CHATS)
            over = pair(fmt_ratio(ratio(chat(engine, c), chat("teleprompt-chat-template", c))) for c in CHATS)
            print(f"| {label} | {cells} | {over} |")
        print()

    if any(turn(kind, n) is not None for kind in ("append", "reuse") for n in TURNS):
        first, last = TURNS[0], TURNS[-1]
        print(
            "| turn (teleprompt alone) | "
            + " | ".join(f"{n:,} messages" for n in TURNS)
            + f" | {last:,} / {first:,} |"
        )
        print("|---|" + "---:|" * len(TURNS) + "---:|")
        turn_rows = [
            ("append, as measured", lambda n: turn("append", n)),
            ("of which the harness's reset", reset),
            ("append, net of the reset", turn_net),
            ("reuse", lambda n: turn("reuse", n)),
        ]
        for label, time_of in turn_rows:
            cells = " | ".join(fmt_time(time_of(n)) for n in TURNS)
            growth = "" if label.startswith("of which") else fmt_ratio(ratio(time_of(last), time_of(first)))
            print(f"| {label} | {cells} | {growth} |")
        print()

    print("| | teleprompt | peer | ratio (peer / teleprompt) | goal |")
    print("|---|---|---|---|---|")
    for label, ours, peer, goal in ROWS:
        ratios = [ratio(t(peer, s), t(ours, s)) for s in SIZES]
        goal_text = "—"
        if goal is not None:
            least, text = goal
            goal_text = f"{text}: {verdict(ratios, lambda r: r >= least)}"
        print(
            f"| {label}, N=10 / N=200 | {pair(fmt_time(t(ours, s)) for s in SIZES)} "
            f"| {NAMES[peer]}: {pair(fmt_time(t(peer, s)) for s in SIZES)} "
            f"| {pair(fmt_ratio(r) for r in ratios)} | {goal_text} |"
        )
    hand = [t("hand-written", s) for s in SIZES]
    cells, verdicts = [], []
    for engine, short in (("teleprompt-go", "Go"), ("teleprompt-handlebars", "Handlebars")):
        ratios = [ratio(t(engine, s), h) for s, h in zip(SIZES, hand)]
        cells.append(f"{short} {pair(fmt_ratio(r) for r in ratios)}")
        verdicts.append(f"{short} {verdict(ratios, lambda r: r <= 2.0)}")
    print(
        f"| hand-written Rust, N=10 / N=200 | Go {pair(fmt_time(t('teleprompt-go', s)) for s in SIZES)}; "
        f"Handlebars {pair(fmt_time(t('teleprompt-handlebars', s)) for s in SIZES)} "
        f"| hand-written Rust: {pair(fmt_time(h) for h in hand)} "
        f"| teleprompt / hand-written: {'; '.join(cells)} | ≤ 2×: {', '.join(verdicts)} |"
    )
    chat_labels = CHATS
    ours = [chat("teleprompt-chat-template", c) for c in CHATS]
    for peer, goal in (("minijinja", (0.91, "≥ 0.91 (overhead ≤ 1.10×)")), ("jinja2", None)):
        theirs = [chat(peer, c) for c in CHATS]
        ratios = [ratio(b, a) for a, b in zip(ours, theirs)]
        goal_text = "—"
        if goal is not None:
            least, text = goal
            goal_text = f"{text}: {verdict(ratios, lambda r: r >= least, chat_labels)}"
        print(
            f"| chat template, 20 messages, {' / '.join(CHATS)} | {pair(fmt_time(a) for a in ours)} "
            f"| {CHAT_NAMES[peer]}: {pair(fmt_time(b) for b in theirs)} "
            f"| {pair(fmt_ratio(r) for r in ratios)} | {goal_text} |"
        )
    first, last = TURNS[0], TURNS[-1]
    for label, time_of, note in (
        ("turn (append)", turn_net, lambda: (
            f" (net of the harness's reset; as measured {fmt_time(turn('append', first))} → "
            f"{fmt_time(turn('append', last))}, {fmt_ratio(ratio(turn('append', last), turn('append', first)))})"
        )),
        ("turn (reuse)", lambda n: turn("reuse", n), lambda: ""),
    ):
        growth = ratio(time_of(last), time_of(first))
        print(
            f"| {label}, {first:,} → {last:,} messages | {fmt_time(time_of(first))} → {fmt_time(time_of(last))}{note()} "
            f"| none | growth ({last:,} / {first:,}): {fmt_ratio(growth)} "
            f"| ≤ 1.1: {verdict([growth], lambda r: r <= 1.1)} |"
        )
    print()
    print(
        "Ratio = peer time / teleprompt time (above 1: teleprompt is faster), except the hand-written row: "
        "teleprompt time / hand-written time (how far above the floor), and the turn rows: "
        f"time with {last:,} messages of history / time with {first:,} (flat: 1).\n"
        "Workload: bench/data/py_prompt.j2 with 0-based document numbers ([0] … [N-1], as in the titles: "
        "Go's `range` and Handlebars' `@index` count from 0 and neither has arithmetic), written in each syntax "
        "in bench/all/templates/; "
        "all engines render byte-identical text.\n"
        "Note: with teleprompt in the bench crate, serde_json's `preserve_order` is on for every Rust engine in it: "
        "tera, handlebars-rust and minijinja's Serde conversion all read IndexMap-backed JSON objects "
        "(gotmpl gets its own sorted maps, converted once).\n"
        "Chat templates: bench/data/NAME_chat_template.jinja with chat_20.json; raw minijinja and Jinja2 set up as "
        "transformers sets up Jinja2; byte-identical text. Turn: crates/teleprompt/benches/turn.rs's prompt and "
        "messages; append = push_message + clone + turn + clock + render_turn, the history set back every "
        "min(length, 32) turns inside the timed call (the reset, timed apart, is subtracted for the goal)."
    )


if __name__ == "__main__":
    main()
