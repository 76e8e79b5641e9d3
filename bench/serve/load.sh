#!/usr/bin/env bash
# Load on `teleprompt serve`: renders per second and latency of a
# prompt-sized template through the HTTP API, measured with wrk (installed
# from Debian's packages when missing), first with a quiet library, then
# while the prompt's file is rewritten 10 times a second (every rewrite is
# a reload). Prints wrk's report of each phase and fails when a request was
# not answered 200.
#
#   bench/serve/load.sh                 # 10 s a phase, 32 connections
#   DURATION=30 CONNECTIONS=64 bench/serve/load.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-32}
PORT=${PORT:-18181}

if ! command -v wrk > /dev/null; then
    echo "installing wrk (Debian package)" >&2
    apt-get install -y wrk > /dev/null 2>&1 || { apt-get update > /dev/null && apt-get install -y wrk > /dev/null; }
fi
cargo build --release -q -p teleprompt-cli
BIN=target/release/teleprompt

WORK=$(mktemp -d)
trap 'kill $SERVER 2> /dev/null || true; kill $EDITOR 2> /dev/null || true; rm -rf "$WORK"' EXIT
mkdir "$WORK/prompts"
# The prompt: the Sortie-style WORKFLOW of bench/data (Go syntax, ~35
# actions, 1.1 KB of output) — the size of a real task prompt.
cp bench/data/go_prompt.gotmpl "$WORK/prompts/workflow.gotmpl"
python3 -c "import json,sys; print(json.dumps({'data': json.load(open('bench/data/go_prompt.json'))}))" > "$WORK/body.json"

"$BIN" serve "$WORK/prompts" --listen "127.0.0.1:$PORT" 2> "$WORK/server.log" &
SERVER=$!
for _ in $(seq 100); do curl -s "127.0.0.1:$PORT/healthz" > /dev/null && break; sleep 0.1; done

# The same bytes as `teleprompt render` gives, before anything is timed.
expected=$("$BIN" render "$WORK/prompts/workflow.gotmpl" --data bench/data/go_prompt.json)
served=$(curl -s "127.0.0.1:$PORT/v1/prompts/workflow/render" -d @"$WORK/body.json" |
    python3 -c "import json,sys; print(json.load(sys.stdin)['output'], end='')")
if [ "$expected" != "$served" ]; then
    echo "the service renders other bytes than teleprompt render" >&2
    exit 1
fi
echo "output checked: $(printf %s "$served" | wc -c) bytes, the same as teleprompt render"

cat > "$WORK/post.lua" << LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = io.open("$WORK/body.json"):read("*a")
LUA

phase() {
    echo
    echo "== $1"
    wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "$WORK/post.lua" \
        "http://127.0.0.1:$PORT/v1/prompts/workflow/render" | tee "$WORK/wrk.out"
    if grep -q "Non-2xx" "$WORK/wrk.out" || grep -q "Socket errors" "$WORK/wrk.out"; then
        echo "FAILED: some requests were not answered 200" >&2
        exit 1
    fi
}

echo "commit $(git rev-parse --short HEAD), load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
phase "quiet library"

# Rewrite the prompt 10 times a second: two versions of one template
# (a comment differs), each write a reload by the watcher.
(
    i=0
    while true; do
        { cat bench/data/go_prompt.gotmpl; echo "{{/* edit $((i % 2)) */}}"; } > "$WORK/prompts/workflow.gotmpl.tmp"
        mv "$WORK/prompts/workflow.gotmpl.tmp" "$WORK/prompts/workflow.gotmpl"
        i=$((i + 1))
        sleep 0.1
    done
) &
EDITOR=$!
phase "reloading 10 times a second"
kill $EDITOR
reloads=$(curl -s "127.0.0.1:$PORT/metrics" | awk '/^teleprompt_reloads_total\{status="ok"\}/ {print $2}')
echo "reloads during the run: $reloads"
