#!/usr/bin/env bash
# Throughput and memory of `teleprompt batch`: JSON Lines datasets of
# 10^4, 10^5 and 10^6 rows rendered through the Rapida prompt of
# examples/rapida/assistant.j2 (Jinja, ~250 bytes of output a row), with
# --jobs 1 and --jobs 2. Prints rows/s (the median of ROUNDS runs), the
# ratio of the two, and the peak RSS of each run as /usr/bin/time -v
# reports it (Debian's `time` package, installed when missing), with the
# share of the cores each run got and its CPU time a row (user + system):
# on a machine shared with other work, those say whether a ratio below 2
# comes from the command or from the cores it was given. Checks that
# every row rendered and that both job counts wrote the same bytes.
#
#   bench/batch/run.sh                          # 3 rounds, sizes 1e4 1e5 1e6
#   ROUNDS=5 SIZES="10000 1000000" bench/batch/run.sh
#   BIN=target/debug/teleprompt SIZES=1000 ROUNDS=1 bench/batch/run.sh   # the script itself
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-3}
SIZES=${SIZES:-"10000 100000 1000000"}

if [ ! -x /usr/bin/time ]; then
    echo "installing time (Debian package)" >&2
    apt-get install -y time > /dev/null 2>&1 || { apt-get update > /dev/null && apt-get install -y time > /dev/null; }
fi
if [ -z "${BIN:-}" ]; then
    cargo build --release -q -p teleprompt-cli
    BIN=target/release/teleprompt
fi
PROMPT=examples/rapida/assistant.j2

WORK=$(mktemp -d "${TMPDIR:-/tmp}/teleprompt-batch.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# Rows as Rapida builds a prompt's arguments: namespaces, the conversation's
# args under `args` and copied to the root; names, ages, companies and
# languages vary, so both branches of the template's `if` run.
generate() {
    python3 - "$1" << 'PY'
import json, random, sys
random.seed(7)
names = ["Grace", "Sam", "Ada", "Linus", "Margaret", "Alan", "Barbara", "Ken"]
companies = ["Northwind Telecom", "Contoso Mobile", "Fabrikam Fiber"]
languages = ["English", "Spanish", "French", "German"]
out = sys.stdout
for i in range(int(sys.argv[1])):
    name, company = random.choice(names), random.choice(companies)
    age = random.randint(16, 90)
    out.write(json.dumps({
        "assistant": {"name": "Ada"},
        "conversation": {"id": f"conv-{i}", "direction": "inbound"},
        "args": {"company": company, "name": name, "age": age},
        "company": company, "name": name, "age": age,
        "message": {"language": random.choice(languages)},
    }) + "\n")
PY
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "commit $(git rev-parse --short HEAD), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| rows | input | --jobs 1 rows/s | --jobs 2 rows/s | ratio | CPU got, 1 / 2 | CPU µs a row, 1 / 2 | peak RSS, 1 / 2 |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
for n in $SIZES; do
    rows="$WORK/rows-$n.jsonl"
    generate "$n" > "$rows"
    input_mb=$(awk -v b="$(stat -c %s "$rows")" 'BEGIN { printf "%.1f MB", b / 1e6 }')
    for jobs in 1 2; do : > "$WORK/rate-$jobs"; : > "$WORK/rss-$jobs"; : > "$WORK/cpu-$jobs"; : > "$WORK/share-$jobs"; done
    for _ in $(seq "$ROUNDS"); do
        for jobs in 1 2; do
            /usr/bin/time -v -o "$WORK/time" "$BIN" batch "$PROMPT" --input "$rows" \
                --output "$WORK/out-$jobs.jsonl" --jobs "$jobs" --now 2026-11-21T09:05:03Z \
                2> "$WORK/stderr"
            summary=$(grep '^batch: ' "$WORK/stderr")
            case "$summary" in
            "batch: $n rows, $n rendered, 0 failed, "*) ;;
            *)
                echo "not every row rendered: $summary" >&2
                exit 1
                ;;
            esac
            sed -E 's/.* ([0-9]+) rows\/s.*/\1/' <<< "$summary" >> "$WORK/rate-$jobs"
            awk -F': ' '/Maximum resident set size/ { print $2 }' "$WORK/time" >> "$WORK/rss-$jobs"
            awk -F': ' '/Percent of CPU/ { sub("%", "", $2); print $2 }' "$WORK/time" >> "$WORK/share-$jobs"
            awk -F': ' -v n="$n" '/User time|System time/ { t += $2 } END { printf "%.2f\n", t * 1e6 / n }' \
                "$WORK/time" >> "$WORK/cpu-$jobs"
        done
        cmp -s "$WORK/out-1.jsonl" "$WORK/out-2.jsonl" || {
            echo "--jobs 1 and --jobs 2 wrote different bytes" >&2
            exit 1
        }
    done
    r1=$(median < "$WORK/rate-1")
    r2=$(median < "$WORK/rate-2")
    m1=$(sort -n "$WORK/rss-1" | tail -1)
    m2=$(sort -n "$WORK/rss-2" | tail -1)
    printf "| %s | %s | %s | %s | %s× | %s%% / %s%% | %s / %s | %s / %s MB |\n" "$n" "$input_mb" "$r1" "$r2" \
        "$(awk -v a="$r1" -v b="$r2" 'BEGIN { printf "%.2f", b / a }')" \
        "$(median < "$WORK/share-1")" "$(median < "$WORK/share-2")" \
        "$(median < "$WORK/cpu-1")" "$(median < "$WORK/cpu-2")" \
        "$(awk -v k="$m1" 'BEGIN { printf "%.1f", k / 1024 }')" \
        "$(awk -v k="$m2" 'BEGIN { printf "%.1f", k / 1024 }')"
    rm -f "$rows" "$WORK"/out-*.jsonl
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
