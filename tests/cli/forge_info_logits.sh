#!/usr/bin/env bash
# Black-box: the real binary forges a model, describes it, and computes logits; bad input
# gives a clear error and a non-zero exit, never a crash.
#   usage: forge_info_logits.sh PATH/TO/duet GOLDEN_DIR
set -euo pipefail
DUET=$1
GOLDEN=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# shellcheck source=lib/expect.bash
source "$(dirname "$0")/lib/expect.bash"

# A small model with Qwen3's real vocabulary and chat template.
"$DUET" forge --preset qwen3-0.6b --layers 1 --hidden 64 --heads 2 --kv-heads 1 --head-dim 32 \
  --ffn 64 --type q8_0 --seed 7 --out "$TMP/q.gguf" 2>/dev/null
"$DUET" info --json "$TMP/q.gguf" > "$TMP/info.json"
node -e '
const j = JSON.parse(require("fs").readFileSync(process.argv[1]));
const want = (c, m) => { if (!c) { console.error("FAIL: " + m); process.exit(1); } };
want(j.runnable === true, "forged model runnable");
want(j.architecture === "qwen3", "architecture");
want(j.qwen3.vocab === 151936 && j.qwen3.layers === 1 && j.qwen3.head_dim === 32, "shape");
want(j.tokenizer.tokens === 151936 && j.tokenizer.merges > 150000, "qwen3 vocabulary");
want(j.tokenizer.eos === "<|im_end|>", "eos is <|im_end|>");
want(j.chat_template === true, "chat template carried into the file");
want(j.tensor_types.Q8_0.count === 8 && j.tensor_types.F32.count === 5, "tensor types");
' "$TMP/info.json"

# Same seed, same bytes; another seed, other bytes.
"$DUET" forge --preset qwen3-0.6b --layers 1 --hidden 64 --heads 2 --kv-heads 1 --head-dim 32 \
  --ffn 64 --type q8_0 --seed 7 --out "$TMP/q2.gguf" 2>/dev/null
cmp -s "$TMP/q.gguf" "$TMP/q2.gguf" || fail "forge is not deterministic"

# Byte vocabulary, every float type: logits have n_vocab floats per position, finite.
for t in f32 f16 bf16 q8_0 q4_0; do
  "$DUET" forge --vocab bytes --layers 2 --hidden 64 --heads 4 --kv-heads 2 --head-dim 16 --ffn 96 \
    --type $t --out "$TMP/b-$t.gguf" 2>/dev/null
  "$DUET" logits -m "$TMP/b-$t.gguf" --tokens 1,2,3,256,4 --out "$TMP/$t.f32"
  n_vocab=$("$DUET" info --json "$TMP/b-$t.gguf" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).qwen3.vocab))')
  size=$(stat -c %s "$TMP/$t.f32")
  [[ $size -eq $((5 * n_vocab * 4)) ]] || fail "$t: logits file has $size bytes, want $((5 * n_vocab * 4))"
  node -e 'const b=require("fs").readFileSync(process.argv[1]);const f=new Float32Array(b.buffer,b.byteOffset,b.length/4);
    if(!f.every(Number.isFinite)) {console.error("FAIL: non-finite logits");process.exit(1);}' "$TMP/$t.f32"
done

# Bad input: a clear message and exit code 1, never a signal.
expect_error "outside the vocabulary" "$DUET" logits -m "$TMP/b-f32.gguf" --tokens 1,99999 --out "$TMP/x"
expect_error "not a token id" "$DUET" logits -m "$TMP/b-f32.gguf" --tokens 1,-1 --out "$TMP/x"
expect_error "not a token id" "$DUET" logits -m "$TMP/b-f32.gguf" --tokens 1,,2 --out "$TMP/x"
expect_error "cannot open" "$DUET" logits -m "$TMP/missing.gguf" --tokens 1 --out "$TMP/x"
printf 'GGUF' > "$TMP/tiny.gguf"
expect_error "truncated" "$DUET" info "$TMP/tiny.gguf"
head -c 3000 "$TMP/b-f32.gguf" > "$TMP/cut.gguf"
expect_error "truncated" "$DUET" info "$TMP/cut.gguf"
expect_error "unknown preset" "$DUET" forge --preset qwen3-99b --out "$TMP/x.gguf"
expect_error "--type" "$DUET" forge --vocab bytes --type q4_k --out "$TMP/x.gguf"
[[ ! -e "$TMP/x.gguf" ]] || fail "a failed forge left a file behind"

# Golden file: logits through the CLI match the stored reference (the full check is in
# the golden test; this one proves the command's output format).
"$DUET" logits -m "$GOLDEN/models/micro-f16.gguf" --tokens 314,65,66 --out "$TMP/g.f32"
[[ $(stat -c %s "$TMP/g.f32") -eq $((3 * 320 * 4)) ]] || fail "golden logits size"
echo "cli forge/info/logits: ok"
