#!/usr/bin/env bash
# duet serve --backend vulkan (lavapipe in CI): the startup log names the device; the OpenAI
# client checks (streaming, modes, usage, errors) pass on the demo model; client disconnects
# in each phase cancel the request and free its KV blocks. The engine around the backend is
# the same as on the CPU; these runs show that nothing in it depends on which backend runs.
# Usage: serve_vulkan.sh PATH/TO/duet [GOLDEN_DIR]
set -uo pipefail
DUET=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib/serve_lib.bash"

if ! "$DUET" info --devices >"$SERVE_TMP/devices.txt" 2>&1; then
  echo "serve_vulkan: no Vulkan device to test the GPU backend on (scripts/setup installs Mesa's lavapipe):"
  cat "$SERVE_TMP/devices.txt"
  exit 1
fi

start_server --backend vulkan --debug-timestamps --think auto || exit 1
if ! grep -q "backend: vulkan on " "$SERVER_LOG"; then
  echo "serve_vulkan: the startup log does not name the Vulkan device"; cat "$SERVER_LOG"; exit 1
fi
run_or_dump env DUET_PORT=$PORT node "$HERE/../node/serve_openai.mjs"

"$DUET" forge --vocab bytes --layers 8 --hidden 512 --heads 8 --kv-heads 4 --head-dim 64 \
  --ffn 1536 --context 8192 --type q8_0 --seed 5 --out "$SERVE_TMP/slow.gguf" 2>/dev/null || exit 1
start_server -m "$SERVE_TMP/slow.gguf" --name slow --backend vulkan --max-running 1 \
  --max-batch-tokens 32 --sse-keepalive-ms 100 || exit 1
run_or_dump env DUET_PORT=$PORT node "$HERE/../node/serve_cancel.mjs"
echo "serve_vulkan: ok"
