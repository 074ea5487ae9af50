#!/usr/bin/env bash
# The serving comparison of docs/BENCHMARKS.md: duet direct, duet behind nginx and llama.cpp's
# llama-server, on the same GGUF file, the same threads and the same machine, all measured by
# `duet bench serve`. Servers run one at a time, in rounds (A B C, A B C, ...), and the table
# quotes the median over rounds, because shared machines drift.
#
#   bench/serve_compare.sh --model FILE.gguf [--llama-server PATH] [--nginx PATH] [--duet PATH]
#                          [--threads N] [--rounds N] [--out DIR] [--quick]
#
# Environment equivalents: MODEL, LLAMA_SERVER, NGINX, DUET, THREADS, ROUNDS, OUT; HELD_IGNORE
# (failure kinds not counted against "held", e.g. server_error; see docs/BENCHMARKS.md). A setup
# whose program is not given or not found is skipped with a note. llama-server is only
# started from the path given, never built here. --quick: tiny runs that prove the script
# works (numbers meaningless). Writes OUT/table.md, OUT/machine.txt, per-run JSON and SVG.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DUET=${DUET:-$ROOT/build/duet}
MODEL=${MODEL:-}
LLAMA_SERVER=${LLAMA_SERVER:-}
NGINX=${NGINX:-$(command -v nginx || true)}
THREADS=${THREADS:-$(nproc)}
ROUNDS=${ROUNDS:-3}
OUT=${OUT:-$ROOT/bench/results/$(date -u +%Y%m%d-%H%M%S)}
QUICK=0
while (($#)); do
  case "$1" in
    --model) MODEL=$2; shift 2 ;;
    --llama-server) LLAMA_SERVER=$2; shift 2 ;;
    --nginx) NGINX=$2; shift 2 ;;
    --duet) DUET=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --quick) QUICK=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "serve_compare: unknown argument $1 (see --help)" >&2; exit 1 ;;
  esac
done
[[ -n "$MODEL" && -f "$MODEL" ]] || { echo "serve_compare: --model FILE.gguf is required" >&2; exit 1; }
[[ -x "$DUET" ]] || { echo "serve_compare: no duet binary at $DUET (scripts/setup builds it)" >&2; exit 1; }

# The workload. Same question in both modes at concurrency 1 (latency as one user sees it),
# then a concurrency sweep on random prompts (throughput and the largest concurrency held:
# no errors and a median TPOT at or under SLO_TPOT_MS, i.e. at least reading speed).
if ((QUICK)); then
  ROUNDS=1 Q_N=2 Q_OUT=16 SWEEP=${SWEEP:-"1 2"} S_IN=32 S_OUT=16 S_PER_SLOT=2
else
  Q_N=${Q_N:-5} Q_OUT=${Q_OUT:-256} SWEEP=${SWEEP:-"1 2 4 8 16"} S_IN=${S_IN:-256} S_OUT=${S_OUT:-128} S_PER_SLOT=${S_PER_SLOT:-4}
fi
SLO_TPOT_MS=${SLO_TPOT_MS:-200}
C_MAX=$(tr ' ' '\n' <<<"$SWEEP" | sort -n | tail -1)
CTX_PER_SLOT=$(( (S_IN > Q_OUT ? S_IN : Q_OUT) + S_OUT + 512 ))

mkdir -p "$OUT"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  PIDS=()
}
trap cleanup EXIT

free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
wait_http() {  # URL PID LOG: until URL answers 200 (model loading can take a while)
  for _ in $(seq 1 1200); do
    curl -sf -o /dev/null "$1" && return 0
    kill -0 "$2" 2>/dev/null || { echo "serve_compare: server died:"; tail -20 "$3"; return 1; }
    sleep 0.1
  done
  echo "serve_compare: $1 never answered"; tail -20 "$3"; return 1
}

start_duet() {  # sets URL
  local log="$RUN_DIR/$1.server.log" port
  port=$(free_port)
  "$DUET" serve -m "$MODEL" -t "$THREADS" --port "$port" --max-running "$C_MAX" >"$log" 2>&1 &
  PIDS+=($!)
  wait_http "http://127.0.0.1:$port/ready" $! "$log"
  URL="http://127.0.0.1:$port"
}
start_duet_nginx() {
  start_duet "$1"
  local prefix="$RUN_DIR/nginx" port
  port=$(free_port)
  "$ROOT/packaging/nginx/render.sh" "127.0.0.1:${URL##*:}" "127.0.0.1:$port" "$prefix"
  "$NGINX" -p "$prefix" -c "$prefix/nginx.conf" -g 'daemon off;' >"$RUN_DIR/$1.nginx.log" 2>&1 &
  PIDS+=($!)
  wait_http "http://127.0.0.1:$port/ready" $! "$RUN_DIR/$1.nginx.log"
  URL="http://127.0.0.1:$port"
}
start_llama() {
  local log="$RUN_DIR/$1.server.log" port
  port=$(free_port)
  # One slot per concurrent request, each with room for the longest request; reasoning
  # returned apart (reasoning_content), as duet does.
  "$LLAMA_SERVER" -m "$MODEL" -t "$THREADS" --host 127.0.0.1 --port "$port" --parallel "$C_MAX" \
    -c $((C_MAX * CTX_PER_SLOT)) --jinja --reasoning-format deepseek >"$log" 2>&1 &
  PIDS+=($!)
  wait_http "http://127.0.0.1:$port/health" $! "$log"
  URL="http://127.0.0.1:$port"
}

bench() {  # NAME ARGS...: one `duet bench serve` run into RUN_DIR/NAME.{json,svg,txt}
  local name=$1
  shift
  "$DUET" bench serve --url "$URL" --ignore-eos --seed 1 --timeout 600 \
    --json "$RUN_DIR/$name.json" --plot "$RUN_DIR/$name.svg" "$@" >"$RUN_DIR/$name.txt" || true
}

measure() {  # SETUP
  bench "$1-think-on" --dataset "$ROOT/bench/question.jsonl" -n "$Q_N" --warmup 1 --max-concurrency 1 --output-len "$Q_OUT" --think on
  bench "$1-think-off" --dataset "$ROOT/bench/question.jsonl" -n "$Q_N" --warmup 1 --max-concurrency 1 --output-len "$Q_OUT" --think off
  for c in $SWEEP; do
    bench "$1-c$c" -n $((c * S_PER_SLOT)) --warmup 1 --max-concurrency "$c" --input-len "$S_IN" --output-len "$S_OUT" --think off
  done
}

SETUPS=(duet)
if [[ -n "$NGINX" && -x "$NGINX" ]]; then SETUPS+=(duet-nginx); else echo "serve_compare: no nginx; skipping duet-nginx (--nginx PATH)"; fi
if [[ -n "$LLAMA_SERVER" && -x "$LLAMA_SERVER" ]]; then SETUPS+=(llama-server); else echo "serve_compare: no --llama-server PATH; skipping llama-server"; fi

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "cores: $(nproc); threads used: $THREADS"
  echo "memory: $(free -g | awk '/Mem:/ {print $2}') GiB"
  echo "kernel: $(uname -r)"
  echo "model: $MODEL ($(du -h "$MODEL" | cut -f1))"
  echo "duet: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  [[ " ${SETUPS[*]} " == *" llama-server "* ]] && echo "llama-server: $("$LLAMA_SERVER" --version 2>&1 | grep -m1 version)"
  [[ " ${SETUPS[*]} " == *" duet-nginx "* ]] && echo "nginx: $("$NGINX" -v 2>&1)"
  echo "workload: question x$Q_N per mode, $Q_OUT tokens, concurrency 1; sweep $SWEEP, $S_PER_SLOT requests per slot, $S_IN words in, $S_OUT tokens out; rounds $ROUNDS; SLO $SLO_TPOT_MS ms/token"
  ((QUICK)) && echo "QUICK RUN: numbers prove the script works, nothing more"
} >"$OUT/machine.txt"
cat "$OUT/machine.txt"

for round in $(seq 1 "$ROUNDS"); do
  RUN_DIR="$OUT/round$round"
  mkdir -p "$RUN_DIR"
  for setup in "${SETUPS[@]}"; do
    echo "serve_compare: round $round, $setup"
    case "$setup" in
      duet) start_duet "$setup" ;;
      duet-nginx) start_duet_nginx "$setup" ;;
      llama-server) start_llama "$setup" ;;
    esac
    measure "$setup"
    cleanup
  done
done

node "$ROOT/bench/compare_table.mjs" "$OUT" "$SLO_TPOT_MS" "$SWEEP" "${SETUPS[@]}" >"$OUT/table.md"
cat "$OUT/table.md"
echo "serve_compare: results in $OUT"
