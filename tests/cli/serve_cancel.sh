#!/usr/bin/env bash
# duet serve: client disconnects in each phase (queued, prefill, decode) cancel the request
# and free its KV blocks; the bounded queue answers 429.
# Usage: serve_cancel.sh PATH/TO/duet [GOLDEN_DIR]
set -uo pipefail
DUET=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib/serve_lib.bash"

# Slower than the demo model, so each phase lasts long enough to be caught.
"$DUET" forge --vocab bytes --layers 8 --hidden 512 --heads 8 --kv-heads 4 --head-dim 64 \
  --ffn 1536 --context 8192 --type q8_0 --seed 5 --out "$SERVE_TMP/slow.gguf" 2>/dev/null || exit 1

start_server -m "$SERVE_TMP/slow.gguf" --name slow --max-running 1 --max-batch-tokens 32 \
  --sse-keepalive-ms 100 || exit 1
run_or_dump env DUET_PORT=$PORT node "$HERE/../node/serve_cancel.mjs"

start_server -m "$SERVE_TMP/slow.gguf" --max-running 1 --max-queue 0 || exit 1
run_or_dump env DUET_PORT=$PORT node "$HERE/../node/serve_queue.mjs"
echo "serve_cancel: ok"
