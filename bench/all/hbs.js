#!/usr/bin/env node
// handlebars.js 4 on the workload of bench/all (templates/py_prompt.hbs with
// ../data/py_prompt_N.json), for bench/all/run.sh.
//
// Usage: node hbs.js [--templates DIR] [--data DIR] [--runs N]
//        [--time-ms MS] [--out DIR] [--render-only] N...
//
// For each N: compile the template once with `noEscape: true` (teleprompt
// never HTML-escapes), parse py_prompt_N.json once, render once (handlebars.js
// compiles on that first call; with --out the text goes to
// DIR/py_prompt_N.handlebars-js.txt), then, unless --render-only, time
// renders and print one JSON line {"engine", "template", "median_ns", "runs",
// "iters", "bytes"}: the median of --runs runs of about --time-ms each, with
// the calibration of the Rust program (double the iterations until a run
// takes a tenth of --time-ms, then scale). The calibration runs before the
// timed runs, so V8 has optimized the template function by then.
"use strict";

const fs = require("fs");
const path = require("path");
const Handlebars = require("handlebars");

const ENGINE = "handlebars-js";

function parseArgs(argv) {
  const args = {
    templates: path.join(__dirname, "templates"),
    data: path.join(__dirname, "..", "data"),
    runs: 7,
    timeMs: 200,
    out: null,
    renderOnly: false,
    sizes: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === "--templates") args.templates = value();
    else if (arg === "--data") args.data = value();
    else if (arg === "--out") args.out = value();
    else if (arg === "--render-only") args.renderOnly = true;
    else if (arg === "--runs") args.runs = Number.parseInt(value(), 10);
    else if (arg === "--time-ms") args.timeMs = Number.parseInt(value(), 10);
    else if (arg.startsWith("--")) throw new Error(`unknown flag ${arg}`);
    else args.sizes.push(arg);
  }
  if (args.sizes.length === 0 || !(args.runs > 0) || !(args.timeMs > 0)) {
    throw new Error(
      "usage: node hbs.js [--templates DIR] [--data DIR] [--runs N] [--time-ms MS] [--out DIR] [--render-only] N...",
    );
  }
  return args;
}

// Keeps the results alive, so that the renders cannot be optimized away.
let sink = 0;

function runFor(iters, render) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < iters; i++) sink ^= render().length;
  return Number(process.hrtime.bigint() - start);
}

function calibrate(timeMs, render) {
  const target = timeMs * 1e6;
  for (let iters = 1; ; iters *= 2) {
    const elapsed = runFor(iters, render);
    if (elapsed >= target / 10) return Math.max(1, Math.floor((iters * target) / elapsed));
  }
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function bench(size, args) {
  const name = `py_prompt_${size}`;
  const source = fs.readFileSync(path.join(args.templates, "py_prompt.hbs"), "utf8");
  const data = JSON.parse(fs.readFileSync(path.join(args.data, `${name}.json`), "utf8"));
  const template = Handlebars.compile(source, { noEscape: true });
  const text = template(data);
  if (args.out) fs.writeFileSync(path.join(args.out, `${name}.${ENGINE}.txt`), text);
  if (args.renderOnly) return;

  const render = () => template(data);
  const iters = calibrate(args.timeMs, render);
  const times = [];
  for (let r = 0; r < args.runs; r++) times.push(runFor(iters, render) / iters);
  console.log(
    JSON.stringify({
      engine: ENGINE,
      template: name,
      median_ns: Math.round(median(times)),
      runs: args.runs,
      iters,
      bytes: Buffer.byteLength(text, "utf8"),
    }),
  );
}

function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(e.message);
    process.exit(2);
  }
  for (const size of args.sizes) bench(size, args);
  if (sink === 0.5) console.error(sink);
}

main();
