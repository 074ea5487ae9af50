#!/usr/bin/env bash
# Black-box: `duet quantize` through the real binary. A forged F16 model becomes a Q4_K_M file
# that keeps every metadata key and tensor, with llama.cpp's mixture (output and the more-bits
# layers in Q6_K), and that loads and computes logits close to the original's; a quantized
# input, an unknown type, a missing or broken file and an unwritable output are refused with a
# clear error and no partial file.
#   usage: quantize.sh PATH/TO/duet GOLDEN_DIR
set -euo pipefail
DUET=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$DUET" forge --vocab bytes --layers 8 --hidden 256 --heads 4 --kv-heads 1 --head-dim 64 \
  --ffn 512 --tied no --type f16 --seed 3 --out "$TMP/f16.gguf" 2>/dev/null
"$DUET" quantize "$TMP/f16.gguf" "$TMP/q.gguf" q4_k_m --threads 2 2> "$TMP/log" ||
  fail "quantize failed: $(cat "$TMP/log")"
grep -q "Q4_K_M" "$TMP/log" || fail "no summary line: $(cat "$TMP/log")"
"$DUET" info --json "$TMP/f16.gguf" > "$TMP/a.json"
"$DUET" info --json "$TMP/q.gguf" > "$TMP/b.json"
node -e '
const fs = require("fs");
const a = JSON.parse(fs.readFileSync(process.argv[1])), b = JSON.parse(fs.readFileSync(process.argv[2]));
const want = (c, m) => { if (!c) { console.error("FAIL: " + m); process.exit(1); } };
want(b.runnable === true, "the quantized model runs");
want(JSON.stringify(a.qwen3) === JSON.stringify(b.qwen3), "same shape");
want(String(b.metadata["general.file_type"]) === "15", "file type Q4_K_M (15): " + b.metadata["general.file_type"]);
for (const k of Object.keys(a.metadata))
  if (k !== "general.file_type") want(JSON.stringify(a.metadata[k]) === JSON.stringify(b.metadata[k]), "metadata " + k + " carried over");
const types = {};
for (const t of b.tensors) types[t.name] = t.type;
want(a.tensors.length === b.tensors.length, "every tensor");
want(types["output.weight"] === "Q6_K", "output.weight in Q6_K");
want(types["token_embd.weight"] === "Q4_K", "token_embd.weight in Q4_K");
want(types["blk.0.attn_norm.weight"] === "F32", "norms stay F32");
// 8 layers: layer 0 (the first eighth), 7 (the last) and 3, 6 (every third between) in Q6_K.
for (let i = 0; i < 8; ++i) {
  const more = i === 0 || i === 3 || i === 6 || i === 7;
  want(types[`blk.${i}.attn_v.weight`] === (more ? "Q6_K" : "Q4_K"), `blk.${i}.attn_v`);
  want(types[`blk.${i}.ffn_down.weight`] === (more ? "Q6_K" : "Q4_K"), `blk.${i}.ffn_down`);
  want(types[`blk.${i}.attn_q.weight`] === "Q4_K", `blk.${i}.attn_q`);
}
' "$TMP/a.json" "$TMP/b.json" || fail "quantized file"

# Logits of the quantized model stay near the original's.
"$DUET" logits -m "$TMP/f16.gguf" --tokens 10,20,30,40,50,60 --out "$TMP/a.f32"
"$DUET" logits -m "$TMP/q.gguf" --tokens 10,20,30,40,50,60 --out "$TMP/b.f32"
node -e '
const fs = require("fs");
const a = new Float32Array(fs.readFileSync(process.argv[1]).buffer.slice(0));
const b = new Float32Array(fs.readFileSync(process.argv[2]).buffer.slice(0));
let e = 0, n = 0;
for (let i = 0; i < a.length; ++i) { e += (a[i] - b[i]) ** 2; n += a[i] ** 2; }
const rel = Math.sqrt(e / n);
if (!(a.length === b.length && rel < 0.25)) { console.error("FAIL: rel L2 " + rel); process.exit(1); }
' "$TMP/a.f32" "$TMP/b.f32" || fail "logits"

# Refusals: clear message, non-zero exit, no output file.
expect_refusal() {  # expect_refusal WHAT PATTERN ARGS...
  local what=$1 pattern=$2
  shift 2
  if "$DUET" quantize "$@" 2> "$TMP/err"; then fail "$what: accepted"; fi
  grep -q "$pattern" "$TMP/err" || fail "$what: message was: $(cat "$TMP/err")"
}
expect_refusal "quantized input" "already quantized" "$TMP/q.gguf" "$TMP/r.gguf" q4_0
[[ ! -e "$TMP/r.gguf" && ! -e "$TMP/r.gguf.partial" ]] || fail "a refused run left a file"
expect_refusal "unknown type" "unknown type 'q9_9'" "$TMP/f16.gguf" "$TMP/r.gguf" q9_9
expect_refusal "missing input" "quantize:" "$TMP/none.gguf" "$TMP/r.gguf" q8_0
head -c 1000 "$TMP/f16.gguf" > "$TMP/cut.gguf"
expect_refusal "truncated input" "quantize:" "$TMP/cut.gguf" "$TMP/r.gguf" q8_0
expect_refusal "unwritable output" "quantize:" "$TMP/f16.gguf" "$TMP/no/such/dir/r.gguf" q8_0
[[ ! -e "$TMP/r.gguf" ]] || fail "a refused run left a file"
# --allow-requantize does what it says.
"$DUET" quantize "$TMP/q.gguf" "$TMP/r.gguf" q8_0 --allow-requantize 2>/dev/null || fail "allow-requantize"
"$DUET" info "$TMP/r.gguf" > /dev/null || fail "requantized file does not load"
echo "quantize: ok"
