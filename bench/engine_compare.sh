#!/usr/bin/env bash
# The engine comparison of docs/PERF.md: `duet bench engine` against llama.cpp's llama-bench
# on the same GGUF files with the same threads, alternating A B A B so that drift on a shared
# machine hits both, and quoting the median of each program's per-run medians and their
# ratio. llama-bench is only run from the path given, never built here.
#
#   bench/engine_compare.sh --llama-bench PATH [--duet PATH] [--threads N] [--rounds N]
#                           [-p 512] [-n 128] [-r 3] [-d 0,4096,...] [--kv-type f16|q8_0]
#                           [--llama-args "-fa 1"] FILE.gguf...
#
# -d: depths (tokens already in the cache before each test, llama-bench's -d), one row each;
# --kv-type goes to duet and, as -ctk/-ctv, to llama-bench; --llama-args to llama-bench only
# (its flash attention, say, which its quantized V cache needs).
# Prints a markdown table (prefill pp and decode tg tok/s, ratios, duet's decode against its
# floor of weight and KV bytes) and keeps the raw JSON of every run in OUT (default
# bench/results/engine-<time>/).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DUET=${DUET:-$ROOT/build/duet}
LLAMA_BENCH=${LLAMA_BENCH:-}
THREADS=${THREADS:-$(nproc)}
ROUNDS=${ROUNDS:-3}
P=512 N=128 R=3 DEPTHS=0 KV_TYPE=f16 LLAMA_ARGS=""
OUT=${OUT:-$ROOT/bench/results/engine-$(date -u +%Y%m%d-%H%M%S)}
FILES=()
while (($#)); do
  case "$1" in
    --llama-bench) LLAMA_BENCH=$2; shift 2 ;;
    --duet) DUET=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    -p) P=$2; shift 2 ;;
    -n) N=$2; shift 2 ;;
    -r) R=$2; shift 2 ;;
    -d) DEPTHS=$2; shift 2 ;;
    --kv-type) KV_TYPE=$2; shift 2 ;;
    --llama-args) LLAMA_ARGS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    -*) echo "engine_compare: unknown option $1 (see --help)" >&2; exit 1 ;;
    *) FILES+=("$1"); shift ;;
  esac
done
((${#FILES[@]})) || { echo "engine_compare: give at least one GGUF file" >&2; exit 1; }
[[ -x "$LLAMA_BENCH" ]] || { echo "engine_compare: --llama-bench PATH is required" >&2; exit 1; }
[[ -x "$DUET" ]] || { echo "engine_compare: no duet binary at $DUET" >&2; exit 1; }
mkdir -p "$OUT"

IFS=, read -r -a DEPTH_LIST <<< "$DEPTHS"
read -r -a EXTRA <<< "$LLAMA_ARGS"
for f in "${FILES[@]}"; do
  name=$(basename "$f" .gguf)
  for d in "${DEPTH_LIST[@]}"; do
    for ((round = 1; round <= ROUNDS; round++)); do
      echo "engine_compare: $name depth $d round $round/$ROUNDS" >&2
      "$LLAMA_BENCH" -m "$f" -t "$THREADS" -p "$P" -n "$N" -r "$R" -d "$d" -ctk "$KV_TYPE" \
        -ctv "$KV_TYPE" "${EXTRA[@]}" -o json > "$OUT/$name.d$d.llama.$round.json" 2>/dev/null
      "$DUET" bench engine -m "$f" -t "$THREADS" -p "$P" -n "$N" -r "$R" -d "$d" \
        --kv-type "$KV_TYPE" --json > "$OUT/$name.d$d.duet.$round.json" 2>/dev/null
    done
  done
done

{
  echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; threads $THREADS; $(date -u +%Y-%m-%d)"
  echo "duet: $(git -C "$ROOT" rev-parse --short HEAD); llama-bench: $LLAMA_BENCH $LLAMA_ARGS; KV $KV_TYPE"
} > "$OUT/machine.txt"
node "$ROOT/bench/engine_compare_table.mjs" "$OUT" "$P" "$N" "$DEPTHS" "${FILES[@]}" | tee "$OUT/table.md"
