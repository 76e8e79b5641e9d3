#!/usr/bin/env bash
# teleprompt's Go syntax against gotmpl 0.6 and Go's text/template, on the
# same template and JSON files (bench/data/NAME.gotmpl, NAME.json).
#
#   bench/compare.sh            # 3 rounds of 7 runs of ~200 ms per engine and template
#   ROUNDS=5 RUNS=11 TIME_MS=300 bench/compare.sh
#
# Needs cargo and go (Debian: apt-get install -y golang-go). Builds
# bench/gotmpl (release; teleprompt and gotmpl timed in one process, runs
# interleaved) and bench/go, checks that the three engines render
# byte-identical text, then alternates the two programs ROUNDS times and
# prints, per engine and template, the median of the rounds' medians and the
# ratio engine time / teleprompt time (> 1 means teleprompt is faster).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rounds="${ROUNDS:-3}"
runs="${RUNS:-7}"
time_ms="${TIME_MS:-200}"
names=(go_prompt go_large)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "building bench/gotmpl (release) and bench/go ..." >&2
cargo build --quiet --release --manifest-path "$here/gotmpl/Cargo.toml"
rust_bin="$here/gotmpl/target/release/teleprompt-bench-gotmpl"
(cd "$here/go" && go build -o "$work/gotemplate" .)
go_bin="$work/gotemplate"

# Same text from all three engines, byte for byte.
mkdir -p "$work/text"
"$rust_bin" --data "$here/data" --runs 1 --time-ms 1 --out "$work/text" "${names[@]}" >/dev/null
"$go_bin" -data "$here/data" -runs 1 -time 1ms -out "$work/text" "${names[@]}" >/dev/null
status=0
for name in "${names[@]}"; do
    for engine in gotmpl go; do
        if cmp -s "$work/text/$name.teleprompt.txt" "$work/text/$name.$engine.txt"; then
            echo "$name: $engine output is byte-identical to teleprompt's" \
                "($(wc -c <"$work/text/$name.teleprompt.txt") bytes)" >&2
        else
            echo "$name: $engine output DIFFERS from teleprompt's:" >&2
            diff "$work/text/$name.teleprompt.txt" "$work/text/$name.$engine.txt" | head -20 >&2 || true
            status=1
        fi
    done
done
[ "$status" -eq 0 ] || { echo "outputs differ: the timings would not compare the same work" >&2; exit 1; }

echo "load before timing: $(uptime)" >&2
for ((round = 1; round <= rounds; round++)); do
    echo "round $round/$rounds ..." >&2
    "$rust_bin" --data "$here/data" --runs "$runs" --time-ms "$time_ms" "${names[@]}" >>"$work/times"
    "$go_bin" -data "$here/data" -runs "$runs" -time "${time_ms}ms" "${names[@]}" >>"$work/times"
done
echo "load after timing:  $(uptime)" >&2

# Lines are "ENGINE NAME NS"; per engine and name, the median over rounds.
sort -k1,1 -k2,2 -k3,3n "$work/times" | awk '
    { key = $1 " " $2; n[key]++; v[key, n[key]] = $3 }
    END {
        for (key in n) {
            m = n[key]
            med = (m % 2) ? v[key, (m + 1) / 2] : (v[key, m / 2] + v[key, m / 2 + 1]) / 2
            print key, med
        }
    }' >"$work/medians"

awk -v names="${names[*]}" '
    { t[$1, $2] = $3 }
    END {
        printf "%-12s %-10s %14s %22s\n", "engine", "template", "median", "ratio vs teleprompt"
        split(names, list, " ")
        split("teleprompt gotmpl go", engines, " ")
        for (i = 1; i in list; i++) {
            for (j = 1; j in engines; j++) {
                e = engines[j]; name = list[i]
                printf "%-12s %-10s %11.2f us %22.2f\n", e, name, t[e, name] / 1000, t[e, name] / t["teleprompt", name]
            }
        }
    }' "$work/medians"
