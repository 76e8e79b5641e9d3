"""`teleprompt batch --jobs 2` against examples/python/ray_batch.py on a local
Ray with 2 CPUs, on the same generated rows: rows/s and CPU time a row of
each, Ray's start-up apart, and a check that both rendered the same text
for every row. run.sh builds what this needs and runs it; by hand, with a
Python that has ray[data] and teleprompt:

    setsid -w python bench/ray/compare.py --bin target/release/teleprompt --rows 200000
"""

import argparse
import glob
import json
import logging
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROMPT = os.path.join(ROOT, "examples", "rapida", "assistant.j2")
NOW = "2026-11-21T09:05:03Z"  # the clock of every row, both ways (as bench/batch/run.sh)
EXAMPLES = os.path.join(ROOT, "examples", "python")
sys.path.insert(0, EXAMPLES)
# Ray's workers import ray_batch too (render_batch is pickled by reference):
# a local Ray's workers inherit this environment.
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [EXAMPLES, os.environ.get("PYTHONPATH")]))


def generate(path, count):
    """Rows as bench/batch/run.sh makes them (same seed, same rows): Rapida's
    prompt arguments, names, ages, companies and languages varied."""
    random.seed(7)
    names = ["Grace", "Sam", "Ada", "Linus", "Margaret", "Alan", "Barbara", "Ken"]
    companies = ["Northwind Telecom", "Contoso Mobile", "Fabrikam Fiber"]
    languages = ["English", "Spanish", "French", "German"]
    with open(path, "w") as out:
        for i in range(count):
            name, company = random.choice(names), random.choice(companies)
            age = random.randint(16, 90)
            row = {
                "assistant": {"name": "Ada"},
                "conversation": {"id": f"conv-{i}", "direction": "inbound"},
                "args": {"company": company, "name": name, "age": age},
                "company": company, "name": name, "age": age,
                "message": {"language": random.choice(languages)},
            }
            out.write(json.dumps(row) + "\n")


def run_cli(binary, rows, out, jobs):
    """One `teleprompt batch` run: its wall time (the whole process)."""
    started = time.perf_counter()
    done = subprocess.run(
        [binary, "batch", PROMPT, "--input", rows, "--output", out, "--jobs", str(jobs), "--now", NOW],
        capture_output=True, text=True,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"teleprompt batch failed ({done.returncode}): {done.stderr}")
    return elapsed


def session_cpu():
    """CPU seconds (user + system) of every process of this session: the
    driver, Ray's processes (GCS, raylet, agents, workers: ray.init starts
    them in the caller's session) and the children it waited for. run.sh
    runs this script in a session of its own (setsid)."""
    sid, ticks = os.getsid(0), 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # gone
            continue
        if int(fields[3]) == sid:
            ticks += int(fields[11]) + int(fields[12])
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ticks / os.sysconf("SC_CLK_TCK") + children.ru_utime + children.ru_stime


def outputs_by_index(lines, what):
    """{index: text} of output lines; stops at an error or a repeated index."""
    texts = {}
    for line in lines:
        row = json.loads(line)
        if row.get("error") is not None:
            sys.exit(f"{what}: row {row['index']} failed: {row['error']}")
        if row["index"] in texts:
            sys.exit(f"{what}: row {row['index']} written twice")
        texts[row["index"]] = row["output"]
    return texts


def ray_lines(folder):
    for name in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(name, encoding="utf-8") as f:
            yield from f


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "teleprompt"))
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3, help="runs of each, alternating (median reported)")
    parser.add_argument("--cpus", type=int, default=2, help="Ray's num_cpus and teleprompt batch's --jobs")
    args = parser.parse_args()

    import ray
    import ray_batch
    from teleprompt import Prompt

    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    load_before = load_average()
    work = tempfile.mkdtemp(prefix="teleprompt-ray.")
    rows = os.path.join(work, "rows.jsonl")
    generate(rows, args.rows)
    warm = os.path.join(work, "warm.jsonl")
    generate(warm, 1000)
    print(f"{args.rows} rows, {os.path.getsize(rows) / 1e6:.1f} MB, in {work}", file=sys.stderr)

    # Ray's start-up, timed apart: the cluster (ray.init), then a first
    # 1,000-row pipeline that starts the workers and imports teleprompt and
    # pyarrow in them.
    started = time.perf_counter()
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    ray_init = time.perf_counter() - started
    ray.data.DataContext.get_current().enable_progress_bars = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)  # no line per stage and per run
    prompt = Prompt.from_file(PROMPT)
    started = time.perf_counter()
    ray_batch.run(prompt, warm, os.path.join(work, "ray-warm"), NOW)
    warm_up = time.perf_counter() - started

    cli_times, ray_times, cli_cpu, ray_cpu = [], [], [], []
    for round in range(args.rounds):
        cli_out = os.path.join(work, "cli.jsonl")
        cpu = session_cpu()
        cli_times.append(run_cli(args.bin, rows, cli_out, args.cpus))
        cli_cpu.append(session_cpu() - cpu)
        ray_out = os.path.join(work, f"ray-{round}")
        shutil.rmtree(os.path.join(work, f"ray-{round - 1}"), ignore_errors=True)
        cpu, started = session_cpu(), time.perf_counter()
        # As the example runs it: the Prompt loaded on the driver, pickled
        # to the workers; read, render, write_json, end to end.
        ray_batch.run(Prompt.from_file(PROMPT), rows, ray_out, NOW)
        ray_times.append(time.perf_counter() - started)
        ray_cpu.append(session_cpu() - cpu)
        print(f"round {round + 1}: teleprompt batch {cli_times[-1]:.2f} s ({cli_cpu[-1]:.2f} s CPU), "
              f"Ray {ray_times[-1]:.2f} s ({ray_cpu[-1]:.2f} s CPU)", file=sys.stderr)

    # Same text for every row, by index; every row once in each.
    with open(cli_out, encoding="utf-8") as f:
        cli = outputs_by_index(f, "teleprompt batch")
    ray_out = outputs_by_index(ray_lines(os.path.join(work, f"ray-{args.rounds - 1}")), "Ray")
    if set(cli) != set(range(args.rows)) or set(ray_out) != set(range(args.rows)):
        sys.exit(f"rows missing: teleprompt batch wrote {len(cli)}, Ray {len(ray_out)}, of {args.rows}")
    differ = [i for i in range(args.rows) if cli[i] != ray_out[i]]
    if differ:
        i = differ[0]
        sys.exit(f"{len(differ)} rows differ; row {i}:\n  teleprompt batch {cli[i]!r}\n  Ray {ray_out[i]!r}")
    ray.shutdown()

    cli_rate = args.rows / statistics.median(cli_times)
    ray_rate = args.rows / statistics.median(ray_times)
    per_row = lambda cpu: f"{statistics.median(cpu) * 1e6 / args.rows:.0f}"
    print(f"same text for all {args.rows} rows", file=sys.stderr)
    print()
    print(f"| rows | `teleprompt batch --jobs {args.cpus}` rows/s | Ray rows/s | ratio | CPU µs a row, batch / Ray "
          "| Ray start-up: `ray.init` + first 1,000 rows | load average before / after | commit |")
    print("|---:|---:|---:|---:|---:|---:|---|---|")
    print(f"| {args.rows:,} | {cli_rate:,.0f} | {ray_rate:,.0f} | {cli_rate / ray_rate:.1f}× "
          f"| {per_row(cli_cpu)} / {per_row(ray_cpu)} | {ray_init:.1f} s + {warm_up:.1f} s "
          f"| {load_before} / {load_average()} | {commit} |")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
