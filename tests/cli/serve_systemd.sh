#!/usr/bin/env bash
# duet serve under systemd's readiness protocol (Type=notify), with the test playing systemd:
# duet_notify_listen (tests/support/notify_listen.cc) binds the unix datagram socket that
# NOTIFY_SOCKET names, and the moment READY=1 arrives it asks /ready, so READY=1 must come
# only once /ready answers 200 (the model loaded). SIGTERM sends STOPPING=1 and drains. A model
# that fails to load sends no READY=1 (only STOPPING=1) and the exit status is 1.
# Usage: serve_systemd.sh PATH/TO/duet [GOLDEN_DIR]
set -uo pipefail
DUET=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib/serve_lib.bash"
fail() { echo "FAIL: $*"; exit 1; }
LISTEN="$(dirname "$DUET")/duet_notify_listen"
[ -x "$LISTEN" ] || fail "$LISTEN not built (a test target beside duet)"

# A model that takes a moment to load, so that a READY=1 sent too early would find /ready 503.
"$DUET" forge --vocab bytes --layers 8 --hidden 512 --heads 8 --kv-heads 4 --head-dim 64 \
  --ffn 1536 --context 8192 --type q8_0 --seed 5 --out "$SERVE_TMP/model.gguf" 2>/dev/null || exit 1
free_port() {
  node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

# start_notified NAME MODEL: the listener, then duet with NOTIFY_SOCKET; sets NPID, DPID, NLOG.
start_notified() {
  local name=$1 model=$2 port
  port=$(free_port)
  NLOG="$SERVE_TMP/$name.notify"
  "$LISTEN" "$SERVE_TMP/$name.sock" "$port" 120 >"$NLOG" 2>&1 &
  NPID=$!
  SERVE_PIDS+=("$NPID")
  for _ in $(seq 1 200); do grep -q '^listening$' "$NLOG" && break; sleep 0.05; done
  grep -q '^listening$' "$NLOG" || { cat "$NLOG"; fail "$name: the listener did not start"; }
  NOTIFY_SOCKET="$SERVE_TMP/$name.sock" "$DUET" serve --port "$port" -m "$model" \
    >"$SERVE_TMP/$name.log" 2>&1 &
  DPID=$!
  SERVE_PIDS+=("$DPID")
  PORT=$port
}

# 1. A model that loads: READY=1 (with /ready 200 at that moment), then on SIGTERM STOPPING=1.
start_notified ok "$SERVE_TMP/model.gguf"
for _ in $(seq 1 1200); do grep -q '^READY=1$' "$NLOG" && break; kill -0 "$DPID" 2>/dev/null || break; sleep 0.05; done
grep -q '^READY=1$' "$NLOG" || { cat "$NLOG" "$SERVE_TMP/ok.log"; fail "no READY=1"; }
grep -qx '/ready=200' "$NLOG" || { cat "$NLOG"; fail "READY=1 came while /ready said $(grep '^/ready=' "$NLOG")"; }
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/ready")
[ "$code" = 200 ] || fail "/ready after READY=1: $code"
grep -q '^STOPPING=1$' "$NLOG" && fail "STOPPING=1 before any signal"
kill -TERM "$DPID"
wait "$DPID"
rc=$?
[ "$rc" -eq 0 ] || { cat "$SERVE_TMP/ok.log"; fail "exit status $rc after SIGTERM"; }
wait "$NPID" || { cat "$NLOG"; fail "the listener got no STOPPING=1"; }
# Exactly these lines, in this order.
printf 'listening\n/ready=200\nREADY=1\nSTATUS=model loaded, serving\nSTOPPING=1\nSTATUS=draining\n' >"$SERVE_TMP/expected"
diff -u "$SERVE_TMP/expected" "$NLOG" || fail "the notifications differ"
echo "ok: READY=1 once /ready is 200, STOPPING=1 on SIGTERM"

# 2. A model that fails to load: no READY=1, STOPPING=1, exit status 1.
printf 'GGUF' >"$SERVE_TMP/broken.gguf"
start_notified broken "$SERVE_TMP/broken.gguf"
wait "$DPID"
rc=$?
[ "$rc" -eq 1 ] || { cat "$SERVE_TMP/broken.log"; fail "a broken model: exit status $rc, not 1"; }
wait "$NPID" || { cat "$NLOG"; fail "a broken model: the listener got no STOPPING=1"; }
printf 'listening\nSTOPPING=1\n' >"$SERVE_TMP/expected"
diff -u "$SERVE_TMP/expected" "$NLOG" || fail "a broken model: the notifications differ"
echo "ok: no READY=1 when the model fails to load"
echo "serve_systemd: ok"
