#!/usr/bin/env bash
# teleprompt's Handlebars syntax against handlebars-rust 6 and handlebars.js 4,
# on the same template and JSON files (bench/data/NAME.hbs, NAME.json).
#
#   bench/handlebars/compare.sh            # 3 rounds of 7 runs of ~200 ms per engine and template
#   ROUNDS=5 RUNS=11 TIME_MS=300 bench/handlebars/compare.sh
#
# Needs cargo, node and npm. Builds bench/handlebars (release, nice -n 10;
# teleprompt and handlebars-rust timed in one process, runs interleaved),
# installs handlebars.js from package-lock.json (npm ci) into
# bench/handlebars/node_modules, checks that the three engines render
# byte-identical text (stops if not), then alternates the two programs
# ROUNDS times and prints, per engine and template, the median of the rounds'
# medians and the ratio engine time / teleprompt time (> 1 means teleprompt
# is faster). CARGO_TARGET_DIR is honoured (default bench/handlebars/target).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rounds="${ROUNDS:-3}"
runs="${RUNS:-7}"
time_ms="${TIME_MS:-200}"
names=(hbs_prompt hbs_large)
data="$here/../data"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "building bench/handlebars (release) and installing handlebars.js ..." >&2
nice -n 10 cargo build --quiet --release --manifest-path "$here/Cargo.toml"
rust_bin="${CARGO_TARGET_DIR:-$here/target}/release/teleprompt-bench-handlebars"
if [ ! -d "$here/node_modules/handlebars" ]; then
    (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
echo "handlebars.js $(cd "$here" && node -p 'require("handlebars").VERSION'), node $(node --version)" >&2

# Same text from all three engines, byte for byte.
mkdir -p "$work/text"
"$rust_bin" --data "$data" --runs 1 --time-ms 1 --out "$work/text" "${names[@]}" >/dev/null
node "$here/bench.js" --data "$data" --runs 1 --time-ms 1 --out "$work/text" "${names[@]}" >/dev/null
status=0
for name in "${names[@]}"; do
    for engine in handlebars-rust handlebars-js; do
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
    "$rust_bin" --data "$data" --runs "$runs" --time-ms "$time_ms" "${names[@]}" >>"$work/times"
    node "$here/bench.js" --data "$data" --runs "$runs" --time-ms "$time_ms" "${names[@]}" >>"$work/times"
done
echo "load after timing:  $(uptime)" >&2

# JSON lines {"engine":…,"template":…,"median_ns":…} to "ENGINE NAME NS";
# per engine and name, the median over rounds.
sed -E 's/.*"engine":"([^"]*)".*"template":"([^"]*)".*"median_ns":([0-9.]+).*/\1 \2 \3/' "$work/times" |
    sort -k1,1 -k2,2 -k3,3n | awk '
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
        printf "%-16s %-11s %14s %22s\n", "engine", "template", "median", "ratio vs teleprompt"
        split(names, list, " ")
        split("teleprompt handlebars-rust handlebars-js", engines, " ")
        for (i = 1; i in list; i++) {
            for (j = 1; j in engines; j++) {
                e = engines[j]; name = list[i]
                printf "%-16s %-11s %11.2f us %22.2f\n", e, name, t[e, name] / 1000, t[e, name] / t["teleprompt", name]
            }
        }
    }' "$work/medians"
