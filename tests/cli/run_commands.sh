#!/usr/bin/env bash
# duet run's conversation commands, multi-line input, sampling flags, and a conversation that
# outgrows the context: read from stdin, checked through /save (the conversation as duet holds
# it) and the notes on stderr. Usage: run_commands.sh PATH/TO/duet [GOLDEN_DIR]
set -uo pipefail
DUET=$(realpath "$1")
T=$(mktemp -d)
SERVER_PID=""
trap '[ -n "$SERVER_PID" ] && kill -9 "$SERVER_PID" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; for f in "$T"/*.out "$T"/*.err; do [ -f "$f" ] && { echo "-- $f"; head -c 3000 "$f"; echo; }; done; exit 1; }
SCRIPTED="$(dirname "$DUET")/duet_scripted"
[ -x "$SCRIPTED" ] || fail "$SCRIPTED not built (a test target beside duet)"
# jq-like reads of a saved conversation.
field() { node -e 'const c = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(JSON.stringify(eval(process.argv[2])));' "$1" "$2"; }

# Commands: settings change what is sent (the scripted model answers in the mode it was asked
# for), /show shows them, mistakes are reported and the conversation goes on.
printf '%s' '{"HELLO": "<think>\nhmm\n</think>\n\nhi there"}' >"$T/script.json"
cat >"$T/commands.in" <<IN
/set temperature 0.5
/set parameter top_k 7
/set temperature 7
/set bogus 1
/frobnicate
/no_think
HELLO one
/think
HELLO two
/show
/set system You are terse.
/save $T/saved.json
/clear
/load $T/saved.json
/load $T/nowhere.json
HELLO three
/save $T/after.json
/bye
never read
IN
"$SCRIPTED" --script "$T/script.json" run -t 1 <"$T/commands.in" >"$T/commands.out" 2>"$T/commands.err" ||
  fail "commands: exit status"
grep -q 'temperature must be between 0 and 2' "$T/commands.err" || fail "bad /set value not reported"
grep -q "no setting 'bogus'" "$T/commands.err" || fail "unknown setting not reported"
grep -q 'unknown command /frobnicate' "$T/commands.err" || fail "unknown command not reported"
grep -q 'cannot read .*nowhere.json' "$T/commands.err" || fail "/load of a missing file not reported"
modes=$(grep -oE '(non-thinking|thinking) mode' "$T/commands.err" | tr '\n' ,)
[ "$modes" = "non-thinking mode,thinking mode,thinking mode," ] || fail "modes per turn: $modes"
grep -qE '^  temperature 0.5$' "$T/commands.out" || fail "/show: temperature"
grep -qE '^  top_k       7$' "$T/commands.out" || fail "/show: top_k"
grep -qE '^  think       on$' "$T/commands.out" || fail "/show: think"
[ "$(field "$T/saved.json" 'c.messages.length')" = 4 ] || fail "/save: 4 messages expected"
[ "$(field "$T/saved.json" 'c.settings')" = '{"max_tokens":512,"think":"on","temperature":0.5,"top_k":7,"system":"You are terse."}' ] ||
  fail "/save: settings $(field "$T/saved.json" 'c.settings')"
# Reasoning is not kept in the conversation: the assistant turn is the answer alone.
[ "$(field "$T/saved.json" 'c.messages[1]')" = '{"role":"assistant","content":"hi there"}' ] ||
  fail "assistant turn: $(field "$T/saved.json" 'c.messages[1]')"
# /clear then /load: the conversation goes on from the file.
[ "$(field "$T/after.json" 'c.messages.map(m => m.content)')" = '["HELLO one","hi there","HELLO two","hi there","HELLO three","hi there"]' ] ||
  fail "after /load: $(field "$T/after.json" 'c.messages.map(m => m.content)')"
grep -q 'never read' "$T/commands.out" && fail "input after /bye was read"

# Multi-line input: a trailing backslash and a """ block are one turn each.
printf 'HELLO first\\\nsecond line\n"""\nblock one\n\n  block two\n"""\n/save %s\n' "$T/multi.json" |
  "$SCRIPTED" --script "$T/script.json" run -t 1 >"$T/multi.out" 2>"$T/multi.err" || fail "multi-line: exit status"
[ "$(field "$T/multi.json" 'c.messages.filter(m => m.role === "user").map(m => m.content)')" = '["HELLO first\nsecond line","block one\n\n  block two"]' ] ||
  fail "multi-line turns: $(field "$T/multi.json" 'c.messages.filter(m => m.role === "user").map(m => m.content)')"

# Sampling flags: the same checks as /set; a good set of them runs.
expect_refused() {
  local what=$1 pattern=$2; shift 2
  "$DUET" run "$@" >"$T/bad.out" 2>"$T/bad.err" </dev/null
  local rc=$?
  [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || fail "$what: exit status $rc"
  grep -qiE -- "$pattern" "$T/bad.err" || fail "$what: stderr does not mention $pattern"
  [ ! -s "$T/bad.out" ] || fail "$what: wrote to stdout"
}
expect_refused "--temperature 3" 'temperature must be between 0 and 2' --temperature 3 hi
expect_refused "--top-p 0" 'top_p must be above 0' --top-p 0 hi
expect_refused "--top-k x" 'top_k must be a whole number' --top-k x hi
expect_refused "--min-p -1" 'min_p must be between 0 and 1' --min-p -1 hi
expect_refused "--seed -3" 'seed must be 0 or more' --seed -3 hi
expect_refused "--budget x" 'budget must be a whole number' --budget x hi
expect_refused "two prompts" 'one prompt at most' "one" "two"
"$DUET" run --temperature 0.6 --top-p 0.95 --top-k 20 --min-p 0 --seed 1 --budget 4 --think on \
  --system "be brief" -n 6 -t 1 "hello" >"$T/flags.out" 2>"$T/flags.err" || fail "sampling flags: exit status"
grep -q ' thinking mode' "$T/flags.err" || fail "--think on with the other flags"
# The same seed gives the same reply (the flags reach the sampler).
"$DUET" run --temperature 1 --seed 11 -n 24 -t 1 --think off "say something" >"$T/seed1.out" 2>/dev/null &&
  "$DUET" run --temperature 1 --seed 11 -n 24 -t 1 --think off "say something" >"$T/seed2.out" 2>/dev/null &&
  "$DUET" run --temperature 1 --seed 12 -n 24 -t 1 --think off "say something" >"$T/seed3.out" 2>/dev/null ||
  fail "seeded runs: exit status"
cmp -s "$T/seed1.out" "$T/seed2.out" || fail "--seed 11 twice gave two replies"
cmp -s "$T/seed1.out" "$T/seed3.out" && fail "--seed 11 and --seed 12 gave the same 24 tokens"

# A conversation that outgrows the context: a model with 512 tokens of context and one token a
# byte, turns of ~170 tokens. The oldest turns are left out, with a note; the system message and
# the newest turn stay.
"$DUET" forge --vocab bytes --layers 1 --hidden 64 --heads 2 --kv-heads 1 --head-dim 32 \
  --ffn 128 --context 512 --type f32 --seed 3 --out "$T/small.gguf" 2>/dev/null || fail "forge"
long=$(printf 'x%.0s' $(seq 1 150))
for i in 1 2 3 4 5; do echo "turn $i $long"; done >"$T/long.in"
echo "/save $T/long.json" >>"$T/long.in"
"$DUET" run -m "$T/small.gguf" --system "SYS" -n 8 -t 1 --think off <"$T/long.in" >"$T/long.out" 2>"$T/long.err" ||
  fail "long conversation: exit status"
[ "$(grep -c 'tokens/s' "$T/long.err")" -eq 5 ] || fail "long conversation: every turn should be answered"
grep -qE '^\[left out the [0-9]+ oldest turns?' "$T/long.err" || fail "no note about dropped turns"
first=$(field "$T/long.json" 'c.messages[0].content.slice(0, 6)')
[ "$first" != '"turn 1"' ] || fail "the oldest turn is still there"
[ "$(field "$T/long.json" 'c.messages.at(-2).content.slice(0, 6)')" = '"turn 5"' ] || fail "the newest turn is gone"
[ "$(field "$T/long.json" 'c.settings.system')" = '"SYS"' ] || fail "the system message is gone"
# One turn longer than the whole context is refused, and the conversation goes on.
{ printf 'y%.0s' $(seq 1 600); echo; echo "short"; } |
  "$DUET" run -m "$T/small.gguf" -n 4 -t 1 --think off >"$T/over.out" 2>"$T/over.err" || fail "overlong turn: exit status"
grep -q "context holds 512 tokens" "$T/over.err" || fail "overlong turn: no error with the numbers"
[ "$(grep -c 'tokens/s' "$T/over.err")" -eq 1 ] || fail "overlong turn: the next turn was not answered"

# A duet server already running on the default address: `duet run` says it could use it.
if ! (exec 3<>/dev/tcp/127.0.0.1/8080) 2>/dev/null; then
  "$DUET" serve --port 8080 -t 1 >"$T/serve8080.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 300); do curl -sf -o /dev/null http://127.0.0.1:8080/ready && break; sleep 0.05; done
  "$DUET" run -n 2 -t 1 hi >/dev/null 2>"$T/probe.err" || fail "run beside a server: exit status"
  grep -q 'duet run --url http://127.0.0.1:8080' "$T/probe.err" || fail "no hint about the running server"
  kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""
else
  echo "run_commands: port 8080 is taken; the hint about a running server was not checked"
fi
echo "run_commands: ok"
