#!/usr/bin/env python3
"""A chat turn from Python as the history grows: append the newest message
to a `PromptContext`, render the turn, drop the result — what an agent
loop does each turn — at 10, 1,000 and 10,000 messages of history. The
goal: the same cost at every length (the turn neither re-reads nor copies
the history). A second column keeps each turn's `Rendered` until after
the next append (the history is then shared; the append writes beside it
without copying it).

Run it in the venv `run.sh` makes: target/bench-venv/bin/python bench/python/turns.py
"""

import statistics
import time

from teleprompt import Prompt, PromptContext

PROMPT = """{{ role("system") -}}
You are {{ assistant.name }}. Today is {{ system.current_date }}. Answer in {{ message.language }}.
{{ history() }}"""


def turn_cost(length, keep, turns=300, rounds=5):
    prompt = Prompt(PROMPT, name="chat.j2")
    medians = []
    for _ in range(rounds):
        context = PromptContext(assistant={"name": "Ada"}, message={"language": "English"},
                                now="2026-11-21T09:05:03Z", turn=1)
        context.extend([{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"} for i in range(length)])
        kept = prompt.render_turn(context)
        times = []
        for i in range(turns):
            started = time.perf_counter_ns()
            if not keep:
                kept = None
            context.append({"role": "user", "content": f"more {i}"})
            rendered = prompt.render_turn(context)
            if keep:
                kept = rendered
            del rendered
            times.append(time.perf_counter_ns() - started)
        medians.append(statistics.median(times))
    return statistics.median(medians) / 1000


def main():
    print("| history | append + render, result dropped | result kept until the next append |")
    print("|---|---|---|")
    for length in (10, 1_000, 10_000):
        print(f"| {length:,} | {turn_cost(length, False):.1f} µs | {turn_cost(length, True):.1f} µs |")


if __name__ == "__main__":
    main()
