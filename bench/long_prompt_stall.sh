#!/usr/bin/env bash
# The decoding streams' gaps while a long prompt is prefilled (docs/BENCHMARKS.md, "A long
# prompt among streams"), for one or more duet binaries alternately (A B A B, so that a
# shared machine's drift hits each alike): bench/long_prompt_stall.mjs against a server on
# MODEL with 2 threads, one JSON line per run, labelled with the binary.
#
#   bench/long_prompt_stall.sh MODEL.gguf [--rounds 2] [--streams 4] [--prompt-tokens 16000] DUET...
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MODEL=$1
shift
ROUNDS=2 STREAMS=4 PROMPT=16000 BINS=()
while (($#)); do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --streams) STREAMS=$2; shift 2 ;;
    --prompt-tokens) PROMPT=$2; shift 2 ;;
    -*) echo "long_prompt_stall: unknown option $1" >&2; exit 1 ;;
    *) BINS+=("$(realpath "$1")"); shift ;;
  esac
done
((${#BINS[@]})) || BINS=("$ROOT/build/duet")
source "$ROOT/tests/cli/lib/serve_lib.bash"

echo "$(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, $(date -u +%F); model $MODEL"
for ((round = 1; round <= ROUNDS; round++)); do
  for DUET in "${BINS[@]}"; do
    start_server -m "$MODEL" -t 2 -c $((PROMPT + 4096)) --parallel $((STREAMS + 1)) \
      --kv-budget-mb 8192 || exit 1
    result=$(node "$ROOT/bench/long_prompt_stall.mjs" "http://127.0.0.1:$PORT" --streams "$STREAMS" \
      --prompt-tokens "$PROMPT")
    echo "{\"duet\": \"$DUET\", \"round\": $round, \"result\": $result}"
    kill -TERM "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null || true
  done
done
