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
  # SERVE_BIN (an array), when set, replaces "$DUET" (a test binary with flags of its own).
  local bin=("$DUET")
  [ -n "${SERVE_BIN+x}" ] && bin=("${SERVE_BIN[@]}")
  "${bin[@]}" serve --port 0 "$@" >"$SERVER_LOG" 2>&1 &
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

# find_scripted sets SCRIPTED to the duet_scripted test binary beside $DUET: duet whose model
# writes scripted replies (tests/support/scripted_serve.cc).
# A model with random weights, the real Qwen3 vocabulary (its 151,936 tokens) and a tiny shape,
# so that thousands of tokens take seconds: $SERVE_TMP/tiny-qwen3-vocab.gguf, its name in the
# API tiny-qwen3-vocab. Sets MODEL.
forge_tiny_qwen3_vocab() {
  MODEL="$SERVE_TMP/tiny-qwen3-vocab.gguf"
  "$DUET" forge --preset qwen3-0.6b --layers 2 --hidden 64 --heads 4 --kv-heads 2 --head-dim 16 \
    --ffn 128 --vocab qwen3 --type q8_0 --seed 7 --out "$MODEL" >/dev/null
}

find_scripted() {
  SCRIPTED="$(dirname "$DUET")/duet_scripted"
  [ -x "$SCRIPTED" ] || { echo "FAIL: $SCRIPTED not built (a test target beside duet)"; return 1; }
}

# Fails the script with the server's log when a command fails.
run_or_dump() {
  if ! "$@"; then
    echo "---- server log ($SERVER_LOG) ----"; tail -50 "$SERVER_LOG"
    exit 1
  fi
}

# start_nginx UPSTREAM_PORT starts Debian's nginx in front of a duet server with
# packaging/nginx/duet.conf.template (the configuration the docs recommend for streaming, and
# the one the container setup uses), as the current user, with its prefix, pid, logs and temp
# dirs under $SERVE_TMP and a free port (packaging/nginx/render.sh); sets NGINX_PORT. nginx is
# killed with the servers when the script exits.
start_nginx() {
  local upstream=$1 nginx dir
  nginx=${NGINX:-$(command -v nginx || ls /usr/sbin/nginx 2>/dev/null)}
  [ -x "$nginx" ] || { echo "FAIL: nginx not found (scripts/setup installs it)"; return 1; }
  NGINX_PORT=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
  dir="$SERVE_TMP/nginx-$NGINX_PORT"
  "$HERE/../../packaging/nginx/render.sh" "127.0.0.1:$upstream" "127.0.0.1:$NGINX_PORT" "$dir" || return 1
  "$nginx" -p "$dir" -c "$dir/nginx.conf" -g 'daemon off;' >"$dir/nginx.log" 2>&1 &
  SERVE_PIDS+=($!)
  for _ in $(seq 1 400); do  # 20 s: a loaded machine starts nginx slowly
    curl -sf -o /dev/null "http://127.0.0.1:$NGINX_PORT/health" && return 0
    sleep 0.05
  done
  echo "FAIL: nginx did not come up"; cat "$dir/nginx.log" "$dir/logs/error.log" 2>/dev/null
  return 1
}
