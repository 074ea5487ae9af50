#!/usr/bin/env bash
# Emit→arrival latency of streamed tokens, in milliseconds: p50/p99/max directly and through
# Debian's nginx with packaging/nginx/duet.conf.template. The same run as the test
# tests/cli/serve_stream_latency.sh, which asserts only structure; this prints the numbers
# that docs/BENCHMARKS.md records (machine, build and date beside them).
# The engine runs the demo model on one compute thread with a 4 ms pause after each step, so
# that each token is measured on its own rather than queued behind the previous one's write.
# Usage: bench/stream_latency.sh [PATH/TO/duet]   (default build/duet, the release build)
#   DUET_LATENCY_STREAMS (6) and DUET_LATENCY_TOKENS (150) set the size of each run.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DUET=$(realpath "${1:-$ROOT/build/duet}")
HERE=$ROOT/tests/cli
source "$HERE/lib/serve_lib.bash"

start_server --threads 1 --debug-timestamps --debug-step-pause-ms 4 || exit 1
start_nginx "$PORT" || exit 1
STREAMS=${DUET_LATENCY_STREAMS:-6} TOKENS=${DUET_LATENCY_TOKENS:-150}
echo "duet $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null), $(nproc) cores, $(date -u +%F)"
node "$ROOT/tests/node/serve_stream_latency.mjs" bench direct "$PORT" "$STREAMS" "$TOKENS" || exit 1
node "$ROOT/tests/node/serve_stream_latency.mjs" bench nginx "$NGINX_PORT" "$STREAMS" "$TOKENS" || exit 1
