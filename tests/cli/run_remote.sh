#!/usr/bin/env bash
# duet run --url: a conversation with a running server over its OpenAI API (no model loaded by
# run itself): replies, reasoning and the mode the server chose, the model named or found, the
# API key from the flag or DUET_API_KEY, Ctrl-C during a reply (the server sees the client go),
# a conversation that outgrows the server's context, and a server that is not there.
# Usage: run_remote.sh PATH/TO/duet [GOLDEN_DIR]
set -uo pipefail
DUET=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib/serve_lib.bash"
find_scripted || exit 1
T="$SERVE_TMP"
RUN_PID=""
fail() { echo "FAIL: $*"; for f in "$T"/*.out "$T"/*.err; do [ -f "$f" ] && { echo "-- $f"; head -c 2000 "$f"; echo; }; done;
  [ -n "${SERVER_LOG:-}" ] && { echo "-- server log"; tail -30 "$SERVER_LOG"; }; exit 1; }
stat_lines() { grep -cE '^\[[0-9]+ tokens, [0-9.]+ tokens/s, first token [0-9]+ ms, (thinking|non-thinking) mode, (stop|length|interrupted)\]$' "$1"; }

printf '%s' '{"REMOTE_KEY": "<think>\nremote thought\n</think>\n\nremote answer"}' >"$T/script.json"
SERVE_BIN=("$SCRIPTED" --script "$T/script.json")
READY_HEADERS="Authorization: Bearer sesame" start_server -t 1 --api-key sesame || fail "server"
URL="http://127.0.0.1:$PORT"

# One-shot, the key from the flag: reasoning apart, the mode the server reports, usage counted.
"$DUET" run --url "$URL" --api-key sesame "REMOTE_KEY go" --think on >"$T/once.out" 2>"$T/once.err" ||
  fail "one-shot exit status"
[ "$(cat "$T/once.out")" = $'[thinking]\nremote thought\n[/thinking]\nremote answer' ] || fail "one-shot reply"
grep -qE '^\[[0-9]+ tokens, .* thinking mode, stop\]$' "$T/once.err" || fail "one-shot stats line"
grep -q 'demo model' "$T/once.err" && fail "run loaded a model of its own"
# The key from the environment; the model named as the first word; a conversation on stdin.
model=$(curl -sf -H 'Authorization: Bearer sesame' "$URL/v1/models" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).data[0].id))')
[ -n "$model" ] || fail "no model id from /v1/models"
printf 'REMOTE_KEY one\n/no_think\nREMOTE_KEY two\n/save %s\n/bye\n' "$T/chat.json" |
  DUET_API_KEY=sesame "$DUET" run --url "$URL" "$model" --think on >"$T/conv.out" 2>"$T/conv.err" || fail "conversation exit status"
[ "$(stat_lines "$T/conv.err")" -eq 2 ] || fail "conversation: expected 2 replies"
[ "$(grep -oE '(non-thinking|thinking) mode' "$T/conv.err" | tr '\n' ,)" = "thinking mode,non-thinking mode," ] ||
  fail "conversation: /no_think did not reach the server"
node -e 'const c = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const got = JSON.stringify(c.messages.map(m => m.content));
  if (got !== JSON.stringify(["REMOTE_KEY one", "remote answer", "REMOTE_KEY two", "remote answer"])) {
    console.error(got); process.exit(1); }' "$T/chat.json" || fail "conversation as saved"

# Mistakes: a missing or wrong key, a model the server does not have, nobody at the address.
expect_refused() {
  local what=$1 pattern=$2; shift 2
  env -u DUET_API_KEY "$DUET" run "$@" >"$T/bad.out" 2>"$T/bad.err" </dev/null
  local rc=$?
  [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || fail "$what: exit status $rc"
  grep -qiE -- "$pattern" "$T/bad.err" || fail "$what: stderr does not mention $pattern"
  [ ! -s "$T/bad.out" ] || fail "$what: wrote to stdout"
}
expect_refused "no key" 'refused a request without an API key.*--api-key or DUET_API_KEY' --url "$URL" hi
expect_refused "wrong key" 'refused the API key' --url "$URL" --api-key wrong hi
expect_refused "unknown model" "has no model 'nosuch'; it has $model" --url "$URL" --api-key sesame nosuch hi
expect_refused "unknown model (-m)" "has no model 'nosuch'" --url "$URL" --api-key sesame -m nosuch hi
expect_refused "bad url" 'must start with http://' --url "ftp://x" hi
closed=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
expect_refused "nobody there" "no server answers at http://127.0.0.1:$closed" --url "http://127.0.0.1:$closed" hi

# Ctrl-C during a reply: the reply stops, the server cancels it (its stream ends), the
# conversation goes on. A forged model slower than the demo, made to write a long reply (so it
# cannot stop early), keeps the first reply running; the second is short.
"$DUET" forge --vocab bytes --layers 8 --hidden 512 --heads 8 --kv-heads 4 --head-dim 64 \
  --ffn 1536 --context 8192 --type q8_0 --seed 5 --out "$T/slow.gguf" 2>/dev/null || fail "forge"
node -e 'console.log(JSON.stringify({ A_SHORT: "short answer", B_LONG: "story ".repeat(1200) }))' >"$T/long_script.json"
SERVE_BIN=("$SCRIPTED" --script "$T/long_script.json")
start_server -m "$T/slow.gguf" -t 1 || fail "slow server"
SLOW_URL="http://127.0.0.1:$PORT"
mkfifo "$T/in"
"$DUET" run --url "$SLOW_URL" --think off -n 4000 <"$T/in" >"$T/int.out" 2>"$T/int.err" &
RUN_PID=$!
exec 3>"$T/in"
echo "B_LONG please" >&3
for _ in $(seq 1 400); do [ -s "$T/int.out" ] && break; sleep 0.025; done
[ -s "$T/int.out" ] || fail "the remote reply did not start"
kill -INT "$RUN_PID"
for _ in $(seq 1 400); do grep -q 'interrupted\]' "$T/int.err" && break; sleep 0.025; done
echo "A_SHORT now" >&3
echo "/bye" >&3
exec 3>&-
wait "$RUN_PID"; rc=$?; RUN_PID=""
[ "$rc" -eq 0 ] || fail "after Ctrl-C: exit status $rc"
[ "$(stat_lines "$T/int.err")" -eq 2 ] || fail "after Ctrl-C the conversation did not go on"
[ "$(grep -c ', interrupted\]$' "$T/int.err")" -eq 1 ] || fail "Ctrl-C did not stop the reply"
grep -q 'short answer' "$T/int.out" || fail "the turn after Ctrl-C was not answered"
# The server freed the cancelled requests: nothing is left running.
for _ in $(seq 1 200); do
  running=$(curl -sf "$SLOW_URL/metrics" | grep -E '^vllm:num_requests_running' | grep -oE '[0-9.]+$')
  [ "${running%.*}" = 0 ] && break; sleep 0.05
done
[ "${running%.*}" = 0 ] || fail "the server still runs the cancelled requests ($running)"

# A conversation that outgrows the server's context: the server refuses it (HTTP 400) and run
# leaves out the oldest turns.
"$DUET" forge --vocab bytes --layers 1 --hidden 64 --heads 2 --kv-heads 1 --head-dim 32 \
  --ffn 128 --context 512 --type f32 --seed 3 --out "$T/small.gguf" 2>/dev/null || fail "forge small"
unset SERVE_BIN
start_server -m "$T/small.gguf" -t 1 || fail "small server"
long=$(printf 'x%.0s' $(seq 1 150))
for i in 1 2 3 4; do echo "turn $i $long"; done | "$DUET" run --url "http://127.0.0.1:$PORT" -n 8 --think off \
  >"$T/long.out" 2>"$T/long.err" || fail "long conversation: exit status"
[ "$(grep -c 'tokens/s' "$T/long.err")" -eq 4 ] || fail "long conversation: every turn should be answered"
grep -qE '^\[left out the [0-9]+ oldest turns?' "$T/long.err" || fail "long conversation: no note about dropped turns"
echo "run_remote: ok"
