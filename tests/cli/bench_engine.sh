#!/usr/bin/env bash
# Black-box: `duet bench engine` measures prefill and decode at a depth (llama-bench's -d),
# in each KV type, and says what it read; a depth past the context is refused with the
# numbers. Structure only: no speed is asserted here (docs/PERF.md has the measured runs).
#   usage: bench_engine.sh PATH/TO/duet GOLDEN_DIR
set -euo pipefail
DUET=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# shellcheck source=lib/expect.bash
source "$(dirname "$0")/lib/expect.bash"

"$DUET" forge --vocab bytes --layers 2 --hidden 64 --heads 4 --kv-heads 2 --head-dim 32 --ffn 96 \
  --context 512 --type q8_0 --seed 3 --out "$TMP/m.gguf" 2>/dev/null

run() { "$DUET" bench engine -m "$TMP/m.gguf" -t 2 -r 1 --json "$@" 2>/dev/null; }
run -p 40 -n 6 -b 16 > "$TMP/d0.json"
run -p 40 -n 6 -b 16 -d 300 > "$TMP/d300.json"
run -p 40 -n 6 -b 7 -d 300 > "$TMP/d300-b7.json"
run -p 40 -n 6 -b 16 -d 300 --kv-type q8_0 > "$TMP/q8.json"
node -e '
const fs = require("fs");
const [d0, d300, b7, q8] = process.argv.slice(1).map(f => JSON.parse(fs.readFileSync(f)));
const want = (c, m) => { if (!c) { console.error("FAIL: " + m); process.exit(1); } };
want(d0.depth === 0 && d300.depth === 300 && d300.batch === 16, "depth and batch reported");
want(d0.kv_type === "f16" && q8.kv_type === "q8_0", "KV type reported");
want(d300.prefill_tok_s.median > 0 && d300.decode_tok_s.median > 0, "both tests ran at depth");
// K and V of 2 layers × 2 heads × 32 dims in F16: 512 bytes a position; decode reads on
// average depth + gen/2 of them.
want(d0.kv_bytes_per_token === 512 * 3, "KV bytes at depth 0: " + d0.kv_bytes_per_token);
want(d300.kv_bytes_per_token === 512 * 303, "KV bytes at depth 300: " + d300.kv_bytes_per_token);
want(q8.kv_bytes_per_token === 272 * 303, "Q8_0 KV bytes at depth 300: " + q8.kv_bytes_per_token);
want(d300.weight_bytes_per_token === d0.weight_bytes_per_token, "weights read do not change");
want(d300.decode_floor_tok_s < d0.decode_floor_tok_s, "the floor counts the KV read");
want(d0.logits_hash !== d300.logits_hash, "the context changes the last logits");
want(b7.batch === 7 && b7.prefill_tok_s.median > 0, "prefill in steps of 7");
want(q8.logits_hash !== d300.logits_hash, "Q8_0 KV computes on other values");
' "$TMP/d0.json" "$TMP/d300.json" "$TMP/d300-b7.json" "$TMP/q8.json"

# Bad input: a clear message and exit code 1, never a signal.
bench=("$DUET" bench engine -m "$TMP/m.gguf" -t 2 -r 1)
expect_error "exceed the model's context of 512" "${bench[@]}" -p 40 -n 6 -d 500
expect_error "must not be negative" "${bench[@]}" -p 40 -n 6 -d -1
expect_error "kv-type" "${bench[@]}" -p 40 -n 6 --kv-type q4_0
expect_error "at least 1" "${bench[@]}" -p 40 -n 6 -b 0
echo "bench_engine: ok"
