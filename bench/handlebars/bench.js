#!/usr/bin/env node
// handlebars.js 4 on the same template files and JSON data as
// bench/handlebars/src/main.rs (bench/data/NAME.hbs, NAME.json).
// bench/handlebars/compare.sh runs both side by side.
//
// Usage: node bench.js [--data DIR] [--runs N] [--time-ms MS] [--out DIR] NAME...
//
// For each NAME: compile NAME.hbs once with `noEscape: true` (teleprompt
// never HTML-escapes) and warm it up (handlebars.js compiles lazily, on the
// first call), parse NAME.json once, render once (and write the text to
// --out as NAME.handlebars-js.txt), then time renders and print one JSON
// line: {"engine", "template", "median_ns", "runs", "iters", "bytes"}, the
// median of --runs runs of about --time-ms each, with the same calibration
// as the Rust program: double the iterations until a run takes a tenth of
// --time-ms, then scale to --time-ms.
"use strict";

const fs = require("fs");
const path = require("path");
const Handlebars = require("handlebars");

function parseArgs(argv) {
  const args = { data: path.join(__dirname, "..", "data"), runs: 11, timeMs: 200, out: null, names: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === "--data") args.data = value();
    else if (arg === "--out") args.out = value();
    else if (arg === "--runs") args.runs = Number.parseInt(value(), 10);
    else if (arg === "--time-ms") args.timeMs = Number.parseInt(value(), 10);
    else if (arg.startsWith("--")) throw new Error(`unknown flag ${arg}`);
    else args.names.push(arg);
  }
  if (args.names.length === 0 || !(args.runs > 0) || !(args.timeMs > 0)) {
    throw new Error("usage: node bench.js [--data DIR] [--runs N] [--time-ms MS] [--out DIR] NAME...");
  }
  return args;
}

// Keeps results alive so that the renders cannot be optimized away.
let sink = 0;

function runFor(iters, f) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < iters; i++) sink ^= f().length;
  return Number(process.hrtime.bigint() - start);
}

// Iterations of f that take about timeMs.
function calibrate(timeMs, f) {
  const target = timeMs * 1e6;
  let iters = 1;
  for (;;) {
    const elapsed = runFor(iters, f);
    if (elapsed >= target / 10) return Math.max(1, Math.floor((iters * target) / elapsed));
    iters *= 2;
  }
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function bench(name, args) {
  const source = fs.readFileSync(path.join(args.data, `${name}.hbs`), "utf8");
  const data = JSON.parse(fs.readFileSync(path.join(args.data, `${name}.json`), "utf8"));
  const template = Handlebars.compile(source, { noEscape: true });
  const text = template(data);
  if (args.out) fs.writeFileSync(path.join(args.out, `${name}.handlebars-js.txt`), text);

  const render = () => template(data);
  const iters = calibrate(args.timeMs, render);
  const times = [];
  for (let r = 0; r < args.runs; r++) times.push(runFor(iters, render) / iters);
  console.log(JSON.stringify({
    engine: "handlebars-js",
    template: name,
    median_ns: Math.round(median(times)),
    runs: args.runs,
    iters,
    bytes: Buffer.byteLength(text, "utf8"),
  }));
}

function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(e.message);
    process.exit(2);
  }
  for (const name of args.names) bench(name, args);
  if (sink === 0.5) console.error(sink);
}

main();
