#!/usr/bin/env bash
# duet serve, HTTP layer: probes, listings, metrics, limits, the bad-input catalogue, HTTP
# framing, connection limits, the API key, Host/Origin checks, --client-added-tokens.
# Usage: serve_http.sh PATH/TO/duet [GOLDEN_DIR]
set -uo pipefail
DUET=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
NODE_DIR="$HERE/../node"
source "$HERE/lib/serve_lib.bash"

start_server --max-body-kb 1024 --read-timeout 2 --cors-origin http://good.test || exit 1
run_or_dump env DUET_PORT=$PORT node "$NODE_DIR/serve_ops.mjs"
run_or_dump env DUET_PORT=$PORT node "$NODE_DIR/serve_bad_input.mjs"
# Every request line in the log carries a request id.
if grep -E '(GET|POST) /' "$SERVER_LOG" | grep -vqE '\[(req-[0-9a-f]+-[0-9]+|my-id\.1)\]'; then
  echo "log lines without a request id:"; grep -E '(GET|POST) /' "$SERVER_LOG" | grep -vE '\[req-' | head; exit 1
fi
kill -0 "$SERVER_PID" || { echo "server died"; cat "$SERVER_LOG"; exit 1; }

run_or_dump env DUET_PORT=$PORT node "$NODE_DIR/serve_http_framing.mjs"

start_server --max-connections-per-client 8 --first-byte-timeout 1 || exit 1
run_or_dump env DUET_PORT=$PORT node "$NODE_DIR/serve_connections.mjs"
kill -0 "$SERVER_PID" || { echo "server died"; cat "$SERVER_LOG"; exit 1; }

start_server --client-added-tokens non-special || exit 1
run_or_dump env DUET_PORT=$PORT node "$NODE_DIR/serve_client_added_tokens.mjs"

READY_HEADERS="Authorization: Bearer s3cret-key" start_server --api-key s3cret-key || exit 1
run_or_dump env DUET_PORT=$PORT DUET_API_KEY=s3cret-key node "$NODE_DIR/serve_ops.mjs"
echo "serve_http: ok"
