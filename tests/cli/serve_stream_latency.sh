#!/usr/bin/env bash
# Zero buffering, by structure: with --debug-timestamps the server stamps each token when the
# engine samples it; the client stamps its arrival. Each token must be its own event, and
# nearly every token must reach the client before the engine samples the next one, directly
# and through Debian's nginx with packaging/nginx/duet.conf.template (the test starts nginx
# itself). No number of milliseconds is asserted (bench/stream_latency.sh measures those).
# The engine is paced (--debug-step-pause-ms: a pause after each step, before the next token
# exists), so a path that forwards each token at once has the whole pause to deliver it even
# on a loaded machine or in the sanitizer build, while a path that coalesces tokens or holds
# chunks delivers a token only with or after the next one, and fails for at least half of
# them whatever the machine's speed. See tests/node/serve_stream_latency.mjs.
# Usage: serve_stream_latency.sh PATH/TO/duet [GOLDEN_DIR]
set -uo pipefail
DUET=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib/serve_lib.bash"

start_server --threads 1 --debug-timestamps --debug-step-pause-ms 10 || exit 1
start_nginx "$PORT" || exit 1

STREAMS=${DUET_LATENCY_STREAMS:-4} TOKENS=${DUET_LATENCY_TOKENS:-100}
# A buffering path fails every attempt; a second attempt only absorbs a machine that was
# stalled for seconds during the first.
measure() {
  local label=$1 port=$2
  for attempt in 1 2; do
    node "$HERE/../node/serve_stream_latency.mjs" check "$label" "$port" "$STREAMS" "$TOKENS" && return 0
    echo "($label: attempt $attempt failed)"
  done
  echo "---- server log ($SERVER_LOG) ----"; tail -20 "$SERVER_LOG"
  exit 1
}
measure direct "$PORT"
measure nginx "$NGINX_PORT"

# The check itself: through a proxy that forwards chunks in pairs it must fail.
node "$HERE/../node/coalescing_proxy.mjs" "$PORT" >"$SERVE_TMP/proxy.port" &
SERVE_PIDS+=($!)
for _ in $(seq 1 200); do [ -s "$SERVE_TMP/proxy.port" ] && break; sleep 0.05; done
PROXY_PORT=$(cat "$SERVE_TMP/proxy.port")
if node "$HERE/../node/serve_stream_latency.mjs" check coalescing "$PROXY_PORT" 2 40 >"$SERVE_TMP/proxy.out" 2>&1; then
  cat "$SERVE_TMP/proxy.out"
  echo "FAIL: the check passed a proxy that coalesces tokens"
  exit 1
fi
grep "arrived before" "$SERVE_TMP/proxy.out"
echo "serve_stream_latency: ok"
