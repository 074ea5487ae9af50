#!/usr/bin/env bash
# What structured output costs while serving: decode throughput of eight streams with a nested
# JSON Schema against the same eight streams without one, on the same server, model and
# prompts, measured by `duet bench serve`; and the schema again on a second server started with
# --no-jump-forward (every token sampled), for what jump-forward is worth. Runs alternate (free,
# schema, schema without jump-forward, free, ...) and the table quotes each run, because shared
# machines drift. (Against llama-server, whose chat
# endpoint rejects a random-weight model's text, docs/PERF.md uses bench/completions_load.mjs
# on the raw-prompt endpoint with the same schema in its `json_schema` field.)
#
#   bench/structured_compare.sh --model FILE.gguf [--rounds N] [--concurrency N]
#                               [--output-len N] [--threads N] [--quick]
#
# Every request asks for --output-len tokens (ignore_eos): the schema allows far longer
# replies than that, so constrained and free replies are equally long. Prints one line per run.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DUET=${DUET:-$ROOT/build/duet}
MODEL="" ROUNDS=2 CONC=8 OUTLEN=128 THREADS=$(nproc) N=16
while (($#)); do
  case "$1" in
    --model) MODEL=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --concurrency) CONC=$2; shift 2 ;;
    --output-len) OUTLEN=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --quick) ROUNDS=1 CONC=2 OUTLEN=16 N=2; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "structured_compare: unknown argument $1 (see --help)" >&2; exit 1 ;;
  esac
done
[[ -n "$MODEL" && -f "$MODEL" ]] || { echo "structured_compare: --model FILE.gguf is required" >&2; exit 1; }
N=$(( N < CONC * 2 ? CONC * 2 : N ))

# A nested schema of the kind extraction prompts use: an object holding an array of objects
# with enums, bounded numbers, formats and free strings.
SCHEMA='{"type":"object","properties":{"orders":{"type":"array","minItems":100,"maxItems":100,"items":{"type":"object",
"properties":{"id":{"type":"string","format":"uuid"},"status":{"enum":["new","paid","shipped"]},
"qty":{"type":"integer","minimum":1,"maximum":99},"price":{"type":"number","minimum":0,"maximum":10000},
"customer":{"type":"object","properties":{"name":{"type":"string","maxLength":40},"email":{"type":"string","format":"email"}},
"required":["name","email"]},"note":{"type":["string","null"]}},"required":["id","status","qty","price","customer","note"]}}},
"required":["orders"]}'
SCHEMA=$(tr -d '\n' <<<"$SCHEMA")
DUET_SCHEMA_BODY="{\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"orders\",\"schema\":$SCHEMA}}}"

PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done; PIDS=(); }
trap cleanup EXIT
TMP=$(mktemp -d)

wait_ready() {  # URL
  for _ in $(seq 1 1200); do curl -sf -o /dev/null "$1" && return 0; sleep 0.1; done
  echo "structured_compare: $1 never answered" >&2; return 1
}

# One measured run: prints output tokens/s and the median inter-token latency.
measure() {  # URL LABEL EXTRA_BODY
  local json="$TMP/run.json" extra=(--think off)
  [[ -n "$3" ]] && extra+=(--extra-body "$3")
  "$DUET" bench serve --url "$1" -n "$N" --max-concurrency "$CONC" --input-len 64 \
    --output-len "$OUTLEN" --ignore-eos --temperature 1 --seed 1 "${extra[@]}" --json "$json" >/dev/null
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const m = r.summary;
    const f = (v) => Number(v).toFixed(1);
    console.log(`${process.argv[2].padEnd(30)} output ${f(m.output_throughput)} tok/s (${m.total_output_tokens} tokens in ${f(m.duration_s)} s)  ` +
                `ITL median ${f(m.itl_ms.median)} p99 ${f(m.itl_ms.p99)} ms  TTFT median ${f(m.ttft_ms.median)} ms  failed ${m.failed}`);
  ' "$json" "$2"
}

"$DUET" serve -m "$MODEL" --port 18431 --threads "$THREADS" --max-running "$CONC" >"$TMP/duet.log" 2>&1 &
PIDS+=($!)
wait_ready http://127.0.0.1:18431/ready
"$DUET" serve -m "$MODEL" --port 18432 --threads "$THREADS" --max-running "$CONC" --no-jump-forward \
  >"$TMP/duet-nojump.log" 2>&1 &
PIDS+=($!)
wait_ready http://127.0.0.1:18432/ready
for r in $(seq 1 "$ROUNDS"); do
  measure http://127.0.0.1:18431 "duet, free (round $r)" ""
  measure http://127.0.0.1:18431 "duet, schema (round $r)" "$DUET_SCHEMA_BODY"
  measure http://127.0.0.1:18432 "duet, schema, no jump (round $r)" "$DUET_SCHEMA_BODY"
done
cleanup
rm -rf "$TMP"
