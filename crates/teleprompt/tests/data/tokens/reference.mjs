// Expected token ids for corpus.json, from OpenAI's tiktoken itself (its
// WASM build, npm `tiktoken` 1.0.22), as ordinary text (`encode_ordinary`:
// a special token's spelling counts as text). Regenerate with:
//   npm install tiktoken@1.0.22 && node reference.mjs > expected.json  (in crates/teleprompt/tests/data/tokens)
import { readFileSync } from "node:fs";
import { get_encoding } from "tiktoken";

const corpus = JSON.parse(readFileSync(new URL("./corpus.json", import.meta.url), "utf8"));
const expected = { source: "npm tiktoken 1.0.22, encode_ordinary" };
for (const name of ["o200k_base", "cl100k_base"]) {
  const encoding = get_encoding(name);
  expected[name] = corpus.map((text) => Array.from(encoding.encode_ordinary(text)));
  encoding.free();
}
console.log(JSON.stringify(expected));
