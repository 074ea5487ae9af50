#!/usr/bin/env bash
# duet behind nginx with packaging/nginx/duet.conf.template (the configuration
# docs/BENCHMARKS.md measures and the container setup uses): the config loads and proxies streams, tokens reach the client in many separate reads rather
# than in one piece at the end, and the counts through the proxy equal the server's. (With the
# demo model a stream lasts ~0.1 s, too short to tell proxy_buffering on from off with a
# fast client: nginx forwards each upstream read either way; the setting matters for slow
# clients and is kept off as nginx's SSE advice says.)
# Usage: bench_serve_nginx.sh PATH/TO/duet [GOLDEN_DIR]
set -uo pipefail
DUET=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib/serve_lib.bash"
T="$SERVE_TMP"
start_server || exit 1
start_nginx "$PORT" || exit 1
LISTEN=$NGINX_PORT

BAN=$(node -e "import('$HERE/../node/lib/demo_model.mjs').then(m => console.log(JSON.stringify({logit_bias: m.BAN_SPECIAL})))")
N=4 OUT=400
run_or_dump timeout 120 "$DUET" bench serve --url "http://127.0.0.1:$LISTEN" -n $N --input-len 8 --output-len $OUT \
  --max-concurrency 1 --ignore-eos --extra-body "$BAN" --json "$T/nginx.json" >/dev/null
run_or_dump env DUET_PORT=$PORT node --input-type=module -e "
  import fs from 'node:fs';
  import { getMetrics, metric, check, checkEq, finish } from '$HERE/../node/lib/http_util.mjs';
  const j = JSON.parse(fs.readFileSync('$T/nginx.json', 'utf8'));
  const m = await getMetrics();
  checkEq(j.summary.completed, $N, 'all requests completed through nginx');
  checkEq(metric(m, 'vllm:generation_tokens_total'), $N * $OUT, 'server generated N x output_len');
  checkEq(j.summary.total_output_tokens, $N * $OUT, 'usage through nginx');
  for (const r of j.requests) {
    // Events that came in separate reads (distinct arrival times): held-back UTF-8 bytes merge
    // a few tokens into one event, and a busy client finds several events in one read (about
    // 40-80% of the tokens arrive apart here, idle or beside a parallel build); a
    // stream held by the proxy until its end arrives in one or two reads.
    const reads = new Set(r.arrival_ms).size;
    check(reads >= $OUT / 8, 'request ' + r.index + ': ' + reads + ' separate arrivals for $OUT tokens');
  }
  console.log(j.requests.map((r) => new Set(r.arrival_ms).size + ' arrivals, TTFT ' + r.ttft_ms.toFixed(1) + ' / E2E ' + r.e2e_ms.toFixed(1) + ' ms').join('; '));
  finish('bench_serve_nginx');"
echo "bench_serve_nginx: ok"
