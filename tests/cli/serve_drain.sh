#!/usr/bin/env bash
# duet serve: SIGTERM drains — readiness 503, streams in flight finish within
# --drain-seconds (or end as "abort" when it runs out), then exit status 0; a client that
# stopped reading does not hold the exit up.
# Usage: serve_drain.sh PATH/TO/duet [GOLDEN_DIR]
set -uo pipefail
DUET=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib/serve_lib.bash"

"$DUET" forge --vocab bytes --layers 8 --hidden 512 --heads 8 --kv-heads 4 --head-dim 64 \
  --ffn 1536 --context 8192 --type q8_0 --seed 5 --out "$SERVE_TMP/slow.gguf" 2>/dev/null || exit 1

# Objects of requests still open when the server stops must be freed before it exits: in the
# ASan build LeakSanitizer checks that on every exit below (a leak makes the status non-zero).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1"

for mode in finish deadline; do
  drain=20
  [ "$mode" = deadline ] && drain=1
  start_server -m "$SERVE_TMP/slow.gguf" --drain-seconds "$drain" || exit 1
  run_or_dump env DUET_PORT=$PORT DUET_PID=$SERVER_PID node "$HERE/../node/serve_drain.mjs" "$mode"
  wait "$SERVER_PID"
  rc=$?
  if [ "$rc" -ne 0 ]; then echo "exit status $rc after the drain ($mode)"; tail -20 "$SERVER_LOG"; exit 1; fi
  grep -q "draining" "$SERVER_LOG" || { echo "no drain in the log"; cat "$SERVER_LOG"; exit 1; }
done

# SIGTERM while one long engine step (a whole prompt in one batch) outlasts the drain window.
start_server -m "$SERVE_TMP/slow.gguf" --max-batch-tokens 4096 --drain-seconds 0.1 || exit 1
run_or_dump env DUET_PORT=$PORT DUET_PID=$SERVER_PID node "$HERE/../node/serve_drain.mjs" longstep
wait "$SERVER_PID"
rc=$?
[ "$rc" -eq 0 ] || { echo "exit status $rc after the drain (long step)"; tail -20 "$SERVER_LOG"; exit 1; }

# A client that stopped reading mid-stream: the server still stops, on time and cleanly.
start_server --drain-seconds 1 || exit 1
t0=$(date +%s)
run_or_dump env DUET_PORT=$PORT DUET_PID=$SERVER_PID node "$HERE/../node/serve_drain.mjs" stalled
wait "$SERVER_PID"
rc=$?
[ "$rc" -eq 0 ] || { echo "exit status $rc after the drain (stalled client)"; tail -20 "$SERVER_LOG"; exit 1; }
took=$(( $(date +%s) - t0 ))
[ "$took" -le 12 ] || { echo "stopping took ${took} s with a stalled client"; tail -20 "$SERVER_LOG"; exit 1; }
# A FIFO as the model file: refused as not a regular file, without waiting for a writer.
mkfifo "$SERVE_TMP/fifo.gguf"
timeout 60 "$DUET" serve -m "$SERVE_TMP/fifo.gguf" --port 0 >"$SERVE_TMP/fifo.log" 2>&1
rc=$?
[ "$rc" -eq 1 ] && grep -q "not a regular file" "$SERVE_TMP/fifo.log" ||
  { echo "a FIFO model: exit status $rc (124: it hung)"; cat "$SERVE_TMP/fifo.log"; exit 1; }

# SIGTERM while the model loads: the load stops at its next step and the server exits 0 (a
# signal that lands after the load drains as usual; the log says which it was).
"$DUET" serve -m "$SERVE_TMP/slow.gguf" --port 0 >"$SERVE_TMP/load.log" 2>&1 &
pid=$!
SERVE_PIDS+=("$pid")
for _ in $(seq 1 600); do grep -q "listening on" "$SERVE_TMP/load.log" && break; sleep 0.02; done
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 0 ] || { echo "exit status $rc after SIGTERM during the load"; cat "$SERVE_TMP/load.log"; exit 1; }
grep -E "stopped while loading the model|draining" "$SERVE_TMP/load.log" ||
  { echo "SIGTERM during the load: neither stopped nor drained"; cat "$SERVE_TMP/load.log"; exit 1; }
echo "serve_drain: ok"
