#!/usr/bin/env python3
"""The ratio table of bench/all/run.sh (standard library only).

Usage: python3 table.py TIMES.jsonl [--commit C] [--load-start L] [--load-end L]
       [--command CMD] [--versions TEXT]

TIMES.jsonl holds the JSON lines the bench programs print
({"engine", "template", "median_ns", "runs", "iters", "bytes"}), several
rounds of them. Per engine and template, the median of the rounds' medians;
then a table of every engine's time and a markdown table of ratios,
teleprompt against each peer, with the issue's goals.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict

SIZES = ("10", "200")

# Display names of the engines.
NAMES = {
    "teleprompt-jinja": "teleprompt, Jinja",
    "teleprompt-go": "teleprompt, Go",
    "teleprompt-handlebars": "teleprompt, Handlebars",
    "minijinja": "raw minijinja 3.0.5",
    "tera": "tera 1",
    "jinja2": "Python Jinja2",
    "handlebars-rust": "handlebars-rust 6",
    "handlebars-js": "handlebars.js 4",
    "gotmpl": "gotmpl 0.6",
    "go-text-template": "Go text/template",
    "hand-written": "hand-written Rust",
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


def verdict(ratios, good) -> str:
    if any(r is None for r in ratios):
        return "n/a"
    met = [good(r) for r in ratios]
    if all(met):
        return "met"
    if not any(met):
        return "**not met**"
    return "**not met** at N=" + " and N=".join(s for s, ok in zip(SIZES, met) if not ok)


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
    sizes_seen = {}
    rounds = defaultdict(int)
    with open(args.times, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line)
            size = r["template"].rsplit("_", 1)[-1]
            runs[r["engine"], size].append(r["median_ns"])
            sizes_seen[size] = r["bytes"]
            rounds[r["engine"], size] += 1
    med = {key: statistics.median(values) for key, values in runs.items()}

    def t(engine, size):
        return med.get((engine, size))

    n_rounds = max(rounds.values()) if rounds else 0
    print(f"commit {args.commit}; load average {args.load_start} at start, {args.load_end} at end")
    print(f"command: {args.command}")
    if args.versions:
        print(args.versions)
    out_bytes = ", ".join(f"N={s}: {sizes_seen[s]:,} B" for s in SIZES if s in sizes_seen)
    print(f"median of {n_rounds} rounds' medians; output {out_bytes}")
    print()

    print("| engine | N=10 | N=200 | × hand-written Rust (N=10 / N=200) |")
    print("|---|---:|---:|---:|")
    for engine, label in NAMES.items():
        if not any((engine, s) in med for s in SIZES):
            continue
        over = [fmt_ratio(ratio(t(engine, s), t("hand-written", s))) for s in SIZES]
        print(f"| {label} | {fmt_time(t(engine, '10'))} | {fmt_time(t(engine, '200'))} | {pair(over)} |")
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
    print()
    print(
        "Ratio = peer time / teleprompt time (above 1: teleprompt is faster), except the last row: "
        "teleprompt time / hand-written time (how far above the floor).\n"
        "Workload: bench/data/py_prompt.j2 with 0-based document numbers ([0] … [N-1], as in the titles: "
        "Go's `range` and Handlebars' `@index` count from 0 and neither has arithmetic), written in each syntax "
        "in bench/all/templates/; "
        "all engines render byte-identical text.\n"
        "Note: with teleprompt in the bench crate, serde_json's `preserve_order` is on for every Rust engine in it: "
        "tera, handlebars-rust and minijinja's Serde conversion all read IndexMap-backed JSON objects "
        "(gotmpl gets its own sorted maps, converted once)."
    )


if __name__ == "__main__":
    main()
