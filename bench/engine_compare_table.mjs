// Reads the runs bench/engine_compare.sh saved and prints the markdown table: per file and
// depth, the median over rounds of each program's prefill and decode tok/s, duet / llama.cpp,
// and duet's decode against its floor (weight and KV bytes over the measured bandwidth).
import { readFileSync, readdirSync } from 'node:fs';
import { basename } from 'node:path';

const [dir, p, n, depths, ...files] = process.argv.slice(2);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const runs = (name, who) =>
  readdirSync(dir)
    .filter((f) => f.startsWith(`${name}.${who}.`) && f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(`${dir}/${f}`, 'utf8')));

console.log(`| file | depth | llama.cpp pp${p} | duet pp${p} | ratio | llama.cpp tg${n} | duet tg${n} | ratio | duet decode GB/s (of measured) | duet decode of its floor |`);
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const f of files) for (const d of depths.split(',')) {
  const name = basename(f, '.gguf');
  const llama = runs(`${name}.d${d}`, 'llama');
  const duet = runs(`${name}.d${d}`, 'duet');
  // llama-bench: one record per test; samples_ts holds each repetition's tok/s.
  const lpp = median(llama.map((r) => median(r.find((t) => t.n_prompt > 0 && t.n_gen === 0).samples_ts)));
  const ltg = median(llama.map((r) => median(r.find((t) => t.n_gen > 0 && t.n_prompt === 0).samples_ts)));
  const dpp = median(duet.map((r) => r.prefill_tok_s.median));
  const dtg = median(duet.map((r) => r.decode_tok_s.median));
  const gbs = median(duet.map((r) => r.achieved_gb_s));
  const bw = median(duet.map((r) => r.measured_read_gb_s));
  const floor = median(duet.map((r) => r.decode_floor_tok_s));
  const fmt = (x) => x.toFixed(1);
  console.log(`| ${name} | ${d} | ${fmt(lpp)} | ${fmt(dpp)} | ${(dpp / lpp).toFixed(2)}× | ${fmt(ltg)} | ${fmt(dtg)} | ${(dtg / ltg).toFixed(2)}× | ${fmt(gbs)} (${fmt(bw)}) | ${Math.round((100 * dtg) / floor)} % of ${fmt(floor)} |`);
}
