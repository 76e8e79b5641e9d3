#!/usr/bin/env bash
# Every engine on one workload: teleprompt's Jinja, Go and Handlebars
# syntaxes beside raw minijinja, tera, handlebars-rust, gotmpl and
# hand-written Rust (one process, runs interleaved), then Go's
# text/template, handlebars.js and Python's Jinja2, on
# bench/all/templates/py_prompt.* with bench/data/py_prompt_{10,200}.json.
# In the same run: teleprompt's chat-template syntax beside raw minijinja
# and Jinja2 (both set up as transformers sets up Jinja2) on
# bench/data/llama{3,31}_chat_template.jinja with bench/data/chat_20.json,
# and a turn of a conversation with 10, 1,000 and 10,000 messages of
# history (teleprompt alone: appending a message, or reusing the history).
#
#   bench/all/run.sh                          # 3 rounds of 7 runs of ~200 ms per engine and size
#   ROUNDS=5 bench/all/run.sh
#   ROUNDS=5 RUNS=11 TIME_MS=300 bench/all/run.sh
#
# Needs cargo, go, node and npm, python3 (with venv). Builds bench/all
# (release, nice -n 10) and the Go program, installs handlebars.js from
# package-lock.json (npm ci) and Jinja2 3.1.6 into a venv
# (BENCH_ALL_VENV, default target/bench-all-venv), renders once with every
# engine into OUT/text (OUT: BENCH_ALL_OUT, default target/bench-all) and
# stops unless all texts are byte-identical (the 11 engines' py_prompt
# texts; teleprompt's, raw minijinja's and Jinja2's chat-template texts);
# then runs ROUNDS rounds (the Rust program, Go, Node, Python in each),
# keeps the JSON lines in OUT/times.jsonl and prints the medians and the
# ratio table (table.py).
# CARGO_TARGET_DIR is honoured (default bench/all/target).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
rounds="${ROUNDS:-3}"
runs="${RUNS:-7}"
time_ms="${TIME_MS:-200}"
sizes=(10 200)
chats=llama3,llama31
turns=10,1000,10000
data="$root/bench/data"
templates="$here/templates"
out="${BENCH_ALL_OUT:-$root/target/bench-all}"
venv="${BENCH_ALL_VENV:-$root/target/bench-all-venv}"
command="ROUNDS=$rounds RUNS=$runs TIME_MS=$time_ms bench/all/run.sh"
started=$SECONDS

need() {
    command -v "$1" >/dev/null 2>&1 || {
        echo "run.sh: $1 not found: $2" >&2
        exit 1
    }
}
need cargo "install Rust (rustup) to build bench/all"
need go "install Go for text/template (apt-get install -y golang-go)"
need node "install Node.js 18 or later for handlebars.js (apt-get install -y nodejs npm)"
need npm "install npm for handlebars.js (apt-get install -y npm)"
need python3 "install Python 3 for Jinja2 (apt-get install -y python3 python3-venv)"

load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
commit="$(git -C "$root" rev-parse --short HEAD)"
if ! git -C "$root" diff --quiet HEAD -- crates; then
    commit="$commit (crates/ modified in the work tree)"
fi
echo "commit $commit; load average $load_start" >&2

echo "building bench/all (release) and the Go program ..." >&2
nice -n 10 cargo build --quiet --release --manifest-path "$here/Cargo.toml"
rust_bin="${CARGO_TARGET_DIR:-$here/target}/release/teleprompt-bench-all"
go_bin="$here/go/bench-all-go"
(cd "$here/go" && nice -n 10 go build -o "$go_bin" .)

if [ ! -d "$here/node_modules/handlebars" ]; then
    echo "installing handlebars.js (npm ci) ..." >&2
    (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi

if ! [ -x "$venv/bin/python" ]; then
    echo "making a venv for Jinja2 in $venv ..." >&2
    python3 -m venv "$venv" || {
        echo "run.sh: python3 -m venv failed (apt-get install -y python3-venv)" >&2
        exit 1
    }
fi
if [ "$("$venv/bin/python" -c 'import jinja2; print(jinja2.__version__)' 2>/dev/null)" != 3.1.6 ]; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check jinja2==3.1.6
fi
python="$venv/bin/python"

versions="$(rustc --version | cut -d' ' -f1-2); $(go version | cut -d' ' -f3); node $(node --version), handlebars.js $(cd "$here" && node -p 'require("handlebars").VERSION'); Python $("$python" -c 'import platform, jinja2; print(platform.python_version(), "Jinja2", jinja2.__version__)')"
echo "$versions" >&2

# Every engine's text, byte for byte against teleprompt's (its Jinja for
# py_prompt, its chat-template syntax for the chat templates). The turn
# engines render once too (no peer, no text to compare).
rm -rf "$out/text"
mkdir -p "$out/text"
"$rust_bin" --data "$data" --templates "$templates" --out "$out/text" --render-only --chat "$chats" --turn "$turns" "${sizes[@]}"
"$go_bin" -data "$data" -templates "$templates" -out "$out/text" -render-only "${sizes[@]}"
node "$here/hbs.js" --data "$data" --templates "$templates" --out "$out/text" --render-only "${sizes[@]}"
"$python" "$here/jinja2_bench.py" --data "$data" --templates "$templates" --out "$out/text" --render-only --chat "$chats" "${sizes[@]}"
differ=()
same=()
for size in "${sizes[@]}"; do
    reference="$out/text/py_prompt_$size.teleprompt-jinja.txt"
    count=0
    for file in "$out/text/py_prompt_$size".*.txt; do
        count=$((count + 1))
        if ! cmp -s "$reference" "$file"; then
            engine="${file#"$out/text/py_prompt_$size."}"
            differ+=("${engine%.txt} (N=$size)")
        fi
    done
    if [ "$count" -ne 11 ]; then
        echo "run.sh: N=$size: $count texts in $out/text, expected 11" >&2
        exit 1
    fi
    same+=("N=$size: $(wc -c <"$reference") bytes")
done
# The chat templates: raw minijinja's and Jinja2's text against teleprompt's.
IFS=, read -ra chat_names <<<"$chats"
for name in "${chat_names[@]}"; do
    stem="${name}_chat_template"
    reference="$out/text/$stem.teleprompt-chat-template.txt"
    for engine in minijinja jinja2; do
        if ! cmp -s "$reference" "$out/text/$stem.$engine.txt"; then
            differ+=("$engine ($stem)")
        fi
    done
    same+=("$stem: $(wc -c <"$reference") bytes")
done
if [ ${#differ[@]} -gt 0 ]; then
    list="$(printf '%s, ' "${differ[@]}")"
    echo "run.sh: these engines render text different from teleprompt's: ${list%, }" >&2
    echo "the texts are in $out/text: diff $out/text/py_prompt_N.teleprompt-jinja.txt $out/text/py_prompt_N.ENGINE.txt" >&2
    echo "(chat templates: diff $out/text/NAME_chat_template.teleprompt-chat-template.txt $out/text/NAME_chat_template.ENGINE.txt)" >&2
    echo "outputs differ: the timings would not compare the same work" >&2
    exit 1
fi
echo "all 11 engines render byte-identical text, and the 3 on each chat template ($(printf '%s, ' "${same[@]}")in $out/text)" >&2

times="$out/times.jsonl"
: >"$times"
for ((round = 1; round <= rounds; round++)); do
    echo "round $round/$rounds ..." >&2
    "$rust_bin" --data "$data" --templates "$templates" --runs "$runs" --time-ms "$time_ms" \
        --chat "$chats" --turn "$turns" "${sizes[@]}" >>"$times"
    "$go_bin" -data "$data" -templates "$templates" -runs "$runs" -time "${time_ms}ms" "${sizes[@]}" >>"$times"
    node "$here/hbs.js" --data "$data" --templates "$templates" --runs "$runs" --time-ms "$time_ms" "${sizes[@]}" >>"$times"
    "$python" "$here/jinja2_bench.py" --data "$data" --templates "$templates" --runs "$runs" --time-ms "$time_ms" \
        --chat "$chats" "${sizes[@]}" >>"$times"
done
load_end="$(cut -d' ' -f1-3 /proc/loadavg)"

echo >&2
python3 "$here/table.py" "$times" --commit "$commit" --load-start "$load_start" --load-end "$load_end" \
    --command "$command" --versions "$versions"
echo "(run.sh took $((SECONDS - started)) s; JSON lines in $times)" >&2
