// Turns bench/serve_compare.sh's JSON reports into the markdown tables of docs/BENCHMARKS.md.
// Every figure is the median over rounds of that round's statistic.
// Usage: node compare_table.mjs OUT_DIR SLO_TPOT_MS "SWEEP" SETUP...
import fs from 'node:fs';
import path from 'node:path';

const [outDir, sloArg, sweepArg, ...setups] = process.argv.slice(2);
const slo = Number(sloArg);
const sweep = sweepArg.split(/\s+/).filter(Boolean).map(Number);
const rounds = fs.readdirSync(outDir).filter((d) => /^round\d+$/.test(d)).sort();

const median = (xs) => {
  const v = xs.filter((x) => x !== undefined && x !== null && !Number.isNaN(x)).sort((a, b) => a - b);
  if (!v.length) return undefined;
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};
const reports = (name) => rounds.map((r) => path.join(outDir, r, `${name}.json`))
  .filter((f) => fs.existsSync(f)).map((f) => JSON.parse(fs.readFileSync(f, 'utf8')));
const stat = (name, pick) => median(reports(name).map((j) => pick(j.summary)));
const failed = (name) => reports(name).reduce((a, j) => a + j.summary.failed, 0);
// HELD_IGNORE=kind,...: failure kinds that do not count against "held" (say so when quoting).
const ignored = (process.env.HELD_IGNORE ?? '').split(',').filter(Boolean);
const failedForHeld = (name) => reports(name).reduce(
  (a, j) => a + Object.entries(j.errors).filter(([k]) => !ignored.includes(k)).reduce((b, [, n]) => b + n, 0), 0);
const fmt = (v, d = 1) => (v === undefined ? '—' : v.toFixed(d));

let out = `Medians over ${rounds.length} round(s). Plots: \`<setup>-think-on.svg\`, \`<setup>-think-off.svg\`, \`<setup>-c<N>.svg\` in each round's folder.\n\n`;
out += '### The same question, thinking and non-thinking (concurrency 1)\n\n';
out += '| setup | mode | TTFT p50 (ms) | TTFT to answer p50 (ms) | total time p50 (s) | stutter p50 | stutter max | tokens | failed |\n';
out += '|---|---|---|---|---|---|---|---|---|\n';
for (const s of setups) {
  for (const mode of ['on', 'off']) {
    const n = `${s}-think-${mode}`;
    if (!reports(n).length) continue;
    out += `| ${s} | ${mode === 'on' ? 'thinking' : 'non-thinking'} | ${fmt(stat(n, (x) => x.ttft_ms.p50))} | ` +
      `${fmt(stat(n, (x) => x.ttft_answer_ms.p50))} | ${fmt(stat(n, (x) => x.e2e_ms.p50 / 1e3), 2)} | ` +
      `${fmt(stat(n, (x) => x.stutter.p50))} | ${fmt(stat(n, (x) => x.stutter.max))} | ` +
      `${fmt(stat(n, (x) => x.total_output_tokens / Math.max(1, x.completed)), 0)} | ${failed(n)} |\n`;
  }
}
out += `\n### Speed and load (random prompts; held = no failures${ignored.length ? ` (not counting ${ignored.join(', ')})` : ''} and median TPOT ≤ ${slo} ms/token)\n\n`;
out += '| setup | ms/token at 1 | tokens/s at 1 | largest concurrency held | tokens/s there (all streams) | TTFT p50 there (ms) |\n';
out += '|---|---|---|---|---|---|\n';
const detail = [];
for (const s of setups) {
  let held;
  for (const c of sweep) {
    const n = `${s}-c${c}`;
    if (!reports(n).length) continue;
    const tpot = stat(n, (x) => x.tpot_ms.p50);
    const ok = failedForHeld(n) === 0 && tpot !== undefined && tpot <= slo;
    if (ok) held = c;
    detail.push(`| ${s} | ${c} | ${fmt(stat(n, (x) => x.ttft_ms.p50))} | ${fmt(tpot)} | ${fmt(stat(n, (x) => x.itl_ms.p99))} | ` +
      `${fmt(stat(n, (x) => x.stutter.p50))} | ${fmt(stat(n, (x) => x.output_throughput))} | ${failed(n)} | ${ok ? 'yes' : 'no'} |`);
  }
  const one = `${s}-c1`;
  const there = held !== undefined ? `${s}-c${held}` : undefined;
  out += `| ${s} | ${fmt(stat(one, (x) => x.tpot_ms.p50))} | ${fmt(stat(one, (x) => x.output_throughput))} | ` +
    `${held ?? 'none'} | ${there ? fmt(stat(there, (x) => x.output_throughput)) : '—'} | ` +
    `${there ? fmt(stat(there, (x) => x.ttft_ms.p50)) : '—'} |\n`;
}
out += '\n### Every concurrency\n\n';
out += '| setup | concurrency | TTFT p50 (ms) | TPOT p50 (ms) | ITL p99 (ms) | stutter p50 | tokens/s | failed | held |\n';
out += '|---|---|---|---|---|---|---|---|---|\n';
out += detail.join('\n') + '\n';
process.stdout.write(out);
