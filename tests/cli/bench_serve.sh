#!/usr/bin/env bash
# duet bench serve against a real duet (the demo model): its counts and timings agree with
# the server's /metrics and usage, --json has the documented fields, --plot is valid SVG, and
# Poisson arrivals are seeded and have the asked-for rate, both planned and as sent.
# Usage: bench_serve.sh PATH/TO/duet [GOLDEN_DIR]
set -uo pipefail
DUET=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib/serve_lib.bash"
T="$SERVE_TMP"
fail() { echo "FAIL: $*"; exit 1; }

start_server --think off || exit 1
URL="http://127.0.0.1:$PORT"
# Special tokens banned (as tests/node/lib/demo_model.mjs does) so that every request yields
# exactly --output-len text tokens; --think mix sends both modes.
BAN=$(node -e "import('$HERE/../node/lib/demo_model.mjs').then(m => console.log(JSON.stringify({logit_bias: m.BAN_SPECIAL})))")
N=12 WARM=2 OUT=20
run_or_dump timeout 120 "$DUET" bench serve --url "$URL" -n $N --warmup $WARM --input-len 24 \
  --output-len $OUT --max-concurrency 3 --ignore-eos --think mix --seed 3 --extra-body "$BAN" \
  --json "$T/report.json" --plot "$T/report.svg" >"$T/table.txt"
grep -q "Successful requests: *$N" "$T/table.txt" || { cat "$T/table.txt"; fail "summary table"; }
grep -q "Time per Output Token" "$T/table.txt" || fail "table has TPOT"
echo "{\"num_prompts\":$N,\"warmup\":$WARM,\"output_len\":$OUT,\"slack_ms\":40}" >"$T/expect.json"
run_or_dump env DUET_PORT=$PORT node "$HERE/../node/bench_serve_check.mjs" "$T/report.json" "$T/expect.json"
run_or_dump node "$HERE/../node/svg_check.mjs" "$T/report.svg" "Time to first token" "Inter-token latency"

# --json - puts the report on stdout and the table on stderr; --progress writes the progress
# line to stderr even though it is not a terminal here.
timeout 60 "$DUET" bench serve --url "$URL" -n 2 --input-len 4 --output-len 3 --progress --json - >"$T/stdout.json" 2>"$T/stderr.txt" \
  || fail "--json -"
node -e "const j=JSON.parse(require('fs').readFileSync('$T/stdout.json','utf8')); if (j.summary.completed!==2) process.exit(1)" \
  || fail "--json - is JSON on stdout"
grep -q "Serving Benchmark Result" "$T/stderr.txt" || fail "table on stderr with --json -"
grep -qE "bench serve: 2/2 done, 0 in flight, 0 errors" "$T/stderr.txt" || { cat "$T/stderr.txt"; fail "progress line"; }

# Poisson arrivals: the plan is a function of the seed, its mean gap is 1/rate, and the real
# run sends on that plan.
"$DUET" bench serve --url "$URL" --model x --dry-run -n 4000 --request-rate 20 --seed 5 --json "$T/plan1.json" || fail "dry run"
"$DUET" bench serve --url "$URL" --model x --dry-run -n 4000 --request-rate 20 --seed 5 --json "$T/plan2.json" || fail "dry run"
"$DUET" bench serve --url "$URL" --model x --dry-run -n 4000 --request-rate 20 --seed 6 --json "$T/plan3.json" || fail "dry run"
cmp -s "$T/plan1.json" "$T/plan2.json" || fail "the same seed gives the same plan"
cmp -s "$T/plan1.json" "$T/plan3.json" && fail "another seed gives another plan"
run_or_dump node -e "
  const t = JSON.parse(require('fs').readFileSync('$T/plan1.json','utf8')).requests.map(r => r.scheduled_s);
  const gaps = t.slice(1).map((x, i) => x - t[i]);
  const mean = gaps.reduce((a, b) => a + b) / gaps.length;
  // 3999 exponential gaps of mean 50 ms: the sample mean is within 4 standard errors.
  const se = 0.05 / Math.sqrt(gaps.length);
  if (Math.abs(mean - 0.05) > 4 * se) { console.error('mean gap', mean); process.exit(1); }
  const below = gaps.filter(g => g < 0.05).length / gaps.length;  // 1 - 1/e for an exponential
  if (Math.abs(below - (1 - Math.exp(-1))) > 0.03) { console.error('share below mean', below); process.exit(1); }
  if (gaps.some(g => g < 0)) process.exit(1);
  console.log('poisson plan: mean gap', (mean * 1e3).toFixed(2), 'ms; share below mean', below.toFixed(3));"
"$DUET" bench serve --url "$URL" --dry-run -n 16 --request-rate 40 --seed 9 --input-len 4 --output-len 2 --json "$T/plan_small.json" || fail "dry run"
run_or_dump timeout 60 "$DUET" bench serve --url "$URL" -n 16 --request-rate 40 --seed 9 --input-len 4 --output-len 2 \
  --json "$T/rated.json" >/dev/null
run_or_dump node -e "
  const fs = require('fs');
  const plan = JSON.parse(fs.readFileSync('$T/plan_small.json','utf8')).requests;
  const run = JSON.parse(fs.readFileSync('$T/rated.json','utf8')).requests;
  let worst = 0;
  for (let i = 0; i < plan.length; i++) {
    if (plan[i].scheduled_s !== run[i].scheduled_s) { console.error('plan differs at', i); process.exit(1); }
    const late = run[i].sent_s - run[i].scheduled_s;
    if (late < 0) { console.error('sent early', i); process.exit(1); }
    worst = Math.max(worst, late);
  }
  // Sent on time: a timer wake-up on a busy machine, never a request's length (no concurrency cap).
  if (worst > 0.1) { console.error('sent', worst, 's late'); process.exit(1); }
  console.log('rated run: worst send lag', (worst * 1e3).toFixed(2), 'ms');"
echo "bench_serve: ok"
