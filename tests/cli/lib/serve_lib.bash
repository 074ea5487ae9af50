# Helpers for the tests/cli/serve_*.sh scripts (sourced; not a test itself).
# start_server FLAGS... starts `$DUET serve --port 0 FLAGS...`, reads the port it bound from
# its log, waits for /ready, and sets PORT, SERVER_PID and SERVER_LOG. Every server started
# is killed when the script exits.

SERVE_PIDS=()
SERVE_TMP=$(mktemp -d)
cleanup_servers() {
  for pid in "${SERVE_PIDS[@]}"; do
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  rm -rf "$SERVE_TMP"
}
trap cleanup_servers EXIT

start_server() {
  SERVER_LOG="$SERVE_TMP/server-${#SERVE_PIDS[@]}.log"
  "$DUET" serve --port 0 "$@" >"$SERVER_LOG" 2>&1 &
  SERVER_PID=$!
  SERVE_PIDS+=("$SERVER_PID")
  PORT=""
  for _ in $(seq 1 300); do
    PORT=$(grep -oE 'listening on http://[^ ]*:[0-9]+' "$SERVER_LOG" | grep -oE '[0-9]+$' | head -1)
    [ -n "$PORT" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.05
  done
  if [ -z "$PORT" ]; then
    echo "server did not start:"; cat "$SERVER_LOG"; return 1
  fi
  for _ in $(seq 1 600); do
    if curl -sf -o /dev/null "http://127.0.0.1:$PORT/ready" ${READY_HEADERS:+-H "$READY_HEADERS"}; then
      return 0
    fi
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.05
  done
  echo "server did not become ready:"; cat "$SERVER_LOG"; return 1
}

# Fails the script with the server's log when a command fails.
run_or_dump() {
  if ! "$@"; then
    echo "---- server log ($SERVER_LOG) ----"; tail -50 "$SERVER_LOG"
    exit 1
  fi
}
