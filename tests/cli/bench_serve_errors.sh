#!/usr/bin/env bash
# duet bench serve when things go wrong: bad flags, an unreachable URL, HTTP errors, malformed
# or cut streams and servers that never answer are reported per request with a clear message
# and a non-zero exit — never a crash or a hang. Usage: bench_serve_errors.sh PATH/TO/duet
set -uo pipefail
DUET=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
FAKE_PID=""
trap '[ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# expect_exit CODE STDERR_PATTERN ARGS...: exit status (nz: any failure) and message of one run
# (60 s at most).
expect_exit() {
  local want=$1 pattern=$2
  shift 2
  timeout 60 "$DUET" bench serve "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  [ $rc -eq 124 ] && fail "hung: bench serve $*"
  if [ "$want" = nz ]; then [ $rc -ne 0 ] && want=$rc; fi
  [ $rc -eq "$want" ] || { cat "$T/out" "$T/err"; fail "exit $rc, not $want: bench serve $*"; }
  grep -qiE -- "$pattern" "$T/err" "$T/out" || { cat "$T/err"; fail "no '$pattern' for: bench serve $*"; }
}

# Bad flags: CLI11's usage errors, and duet's own checks.
expect_exit nz "url is required" -n 3
expect_exit nz "think" --url http://127.0.0.1:9 --think maybe
expect_exit nz "num-prompts" --url http://127.0.0.1:9 -n -1
expect_exit 1 "request-rate must be a positive" --url http://127.0.0.1:9 --request-rate -2 --model m
expect_exit 1 "request-rate must be a positive" --url http://127.0.0.1:9 --request-rate fast --model m
expect_exit 1 "must start with http://" --url ftp://127.0.0.1:9
expect_exit 1 "https is not supported" --url https://127.0.0.1:9
expect_exit 1 "bad port" --url http://127.0.0.1:99999
expect_exit 1 "extra-body must be a JSON object" --url http://127.0.0.1:9 --model m --extra-body '[1]'
printf '{"prompt": "x"}\n{"text": 1}\n' >"$T/bad.jsonl"
expect_exit 1 "line 2" --url http://127.0.0.1:9 --model m --dataset "$T/bad.jsonl"

# An unreachable URL: a port nothing listens on (bound, then closed).
DEAD=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
expect_exit 1 "cannot reach http://127.0.0.1:$DEAD.*refused" --url "http://127.0.0.1:$DEAD"
# With --model there is no look-up: every request fails on connect, and says so.
expect_exit 2 "5 of 5 requests failed" --url "http://127.0.0.1:$DEAD" --model m -n 5 --json "$T/dead.json"
node -e "const j=JSON.parse(require('fs').readFileSync('$T/dead.json','utf8'));
  if (j.errors.connect !== 5 || j.summary.failed !== 5 || !/refused/i.test(j.requests[0].error)) process.exit(1)" \
  || fail "connect errors counted per request"

# A misbehaving server.
node "$HERE/../node/fake_openai.mjs" >"$T/fake.log" 2>&1 &
FAKE_PID=$!
for _ in $(seq 1 100); do grep -q listening "$T/fake.log" && break; sleep 0.05; done
FAKE="http://127.0.0.1:$(grep -oE '[0-9]+$' "$T/fake.log")"
[ -n "$FAKE" ] || fail "fake server did not start"

expect_exit 0 "Successful requests: *3" --url "$FAKE" -n 3   # model from /v1/models: "ok"
# kind_count MODEL KIND N [FLAGS]: N requests to the fake MODEL all fail with KIND.
kind_count() {
  local model=$1 kind=$2 n=$3
  shift 3
  expect_exit 2 "$n of $n requests failed" --url "$FAKE" --model "$model" -n "$n" --json "$T/$model.json" "$@"
  node -e "const j=JSON.parse(require('fs').readFileSync('$T/$model.json','utf8'));
    if (j.errors['$kind'] !== $n) { console.error(JSON.stringify(j.errors)); process.exit(1); }" \
    || fail "$model: errors.$kind != $n"
  grep -q "$kind: *$n" "$T/out" || fail "$model: the table lists $kind"
}
kind_count http500 http 4
grep -q "the fake server fails on purpose" "$T/out" || fail "the server's error message is shown"
kind_count malformed malformed_sse 3
kind_count cut incomplete_stream 3
kind_count json not_streaming 2
kind_count empty503 http 2
kind_count empty_sse incomplete_stream 2
start=$(date +%s)
kind_count hang timeout 3 --timeout 1
kind_count slow_headers timeout 2 --timeout 1
# Five requests of at most 1 s each: 30 s is far above that on any machine and far below what
# the default timeout (300 s) or no timeout (each run's own `timeout 60`) would take.
[ $(( $(date +%s) - start )) -le 30 ] || fail "--timeout 1 took more than 30 s"
echo "bench_serve_errors: ok"
