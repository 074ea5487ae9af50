#!/usr/bin/env bash
# duet run, black-box: one-shot and stdin conversations with the demo model, the reasoning
# markers and the tokens/s line, Ctrl-C during a reply, and bad input (flags, files).
# Usage: run_chat.sh PATH/TO/duet [GOLDEN_DIR]
set -uo pipefail
DUET=$(realpath "$1")
T=$(mktemp -d)
RUN_PID=""
trap '[ -n "$RUN_PID" ] && kill -9 "$RUN_PID" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; for f in "$T"/*.out "$T"/*.err; do [ -f "$f" ] && { echo "-- $f"; head -c 2000 "$f"; echo; }; done; exit 1; }
stat_lines() { grep -cE '^\[[0-9]+ tokens, [0-9.]+ tokens/s, first token [0-9]+ ms, (thinking|non-thinking) mode, (stop|length|interrupted)\]$' "$1"; }

# One-shot, non-thinking: an answer, one stats line with at most -n tokens, no reasoning.
"$DUET" run "why is the sky blue" --think off -n 12 -t 1 >"$T/once.out" 2>"$T/once.err" || fail "one-shot exit status $?"
[ "$(stat_lines "$T/once.err")" -eq 1 ] || fail "one-shot: expected one stats line"
n=$(grep -oE '^\[[0-9]+ tokens' "$T/once.err" | grep -oE '[0-9]+')
[ "$n" -ge 1 ] && [ "$n" -le 12 ] || fail "one-shot: $n tokens, expected 1..12"
grep -q 'non-thinking mode' "$T/once.err" || fail "one-shot: --think off did not run non-thinking"
grep -q 'demo model' "$T/once.err" || fail "no -m: the demo model is not announced"
# (Whether the reply shows reasoning is checked below with scripted replies: the demo model's
# random reply may itself open with <think>…</think>, which duet reports as reasoning.)
# Only duet's own styling counts: the demo model writes random bytes, ESC among them.
grep -qE $'\x1b\[[02]m' "$T/once.out" && fail "ANSI styling written to a pipe"

# Thinking mode: the mode is reported; any reasoning shown is closed by its end marker.
"$DUET" run "prove that 17 is prime" --think on -n 40 -t 1 >"$T/think.out" 2>"$T/think.err" || fail "thinking exit status"
grep -q ' thinking mode' "$T/think.err" || fail "--think on did not run thinking"
[ "$(grep -c '^\[thinking\]$' "$T/think.out")" -eq "$(grep -c '^\[/thinking\]$' "$T/think.out")" ] ||
  fail "reasoning markers unbalanced"

# Reasoning shown apart, with duet_scripted (the test build's duet whose model writes a
# scripted reply when the prompt holds its key): between markers when piped, dimmed with
# ANSI on a terminal (script(1) gives it one).
SCRIPTED="$(dirname "$DUET")/duet_scripted"
[ -x "$SCRIPTED" ] || fail "$SCRIPTED not built (a test target beside duet)"
printf '%s' '{"REASON_KEY": "<think>\nsteps of thought\n</think>\n\nthe answer"}' >"$T/script.json"
"$SCRIPTED" --script "$T/script.json" run "REASON_KEY please" --think on -t 1 >"$T/reason.out" 2>"$T/reason.err" ||
  fail "scripted reasoning exit status"
[ "$(cat "$T/reason.out")" = $'[thinking]\nsteps of thought\n[/thinking]\nthe answer' ] ||
  fail "reasoning not set apart from the answer: $(od -c "$T/reason.out" | head -5)"
grep -q ' thinking mode, stop\]$' "$T/reason.err" || fail "scripted reply: stats line"
# The demo's byte vocabulary: <think> + 18 bytes + </think> + 12 bytes, then <|im_end|>.
grep -q '^\[33 tokens, ' "$T/reason.err" || fail "scripted reply: expected 33 tokens: $(cat "$T/reason.err")"
# Non-thinking: a plain reply is all answer, and the empty think block a model may repeat
# is dropped, not shown as reasoning.
printf '%s' '{"PLAIN_KEY": "just the answer", "EMPTY_KEY": "<think>\n\n</think>\n\nanswer after an empty block"}' >"$T/plain.json"
"$SCRIPTED" --script "$T/plain.json" run "PLAIN_KEY please" --think off -t 1 >"$T/plain.out" 2>"$T/plain.err" ||
  fail "scripted non-thinking exit status"
[ "$(cat "$T/plain.out")" = "just the answer" ] || fail "non-thinking reply: $(od -c "$T/plain.out" | head -5)"
grep -q ' non-thinking mode, stop\]$' "$T/plain.err" || fail "scripted non-thinking: stats line"
"$SCRIPTED" --script "$T/plain.json" run "EMPTY_KEY please" --think off -t 1 >"$T/empty.out" 2>"$T/empty.err" ||
  fail "scripted empty-block exit status"
[ "$(cat "$T/empty.out")" = "answer after an empty block" ] ||
  fail "empty think block in non-thinking mode: $(od -c "$T/empty.out" | head -5)"
if command -v script >/dev/null; then
  script -qec "'$SCRIPTED' --script '$T/script.json' run 'REASON_KEY please' --think on -t 1 2>/dev/null" /dev/null >"$T/tty.out" ||
    fail "scripted reply on a terminal: exit status"
  grep -q $'\x1b\[2msteps of thought' "$T/tty.out" || fail "reasoning not dimmed on a terminal: $(od -c "$T/tty.out" | head -5)"
  grep -q '\[thinking\]' "$T/tty.out" && fail "markers on a terminal (dimming expected instead)"
  grep -q 'the answer' "$T/tty.out" || fail "no answer on the terminal"
fi

# A conversation on stdin: blank lines skipped, /exit ends it (what follows is not read).
printf 'hello\n\n   \nsecond question\n/exit\nnever answered\n' |
  "$DUET" run --think off -n 6 -t 1 >"$T/repl.out" 2>"$T/repl.err" || fail "stdin conversation exit status"
[ "$(stat_lines "$T/repl.err")" -eq 2 ] || fail "stdin conversation: expected 2 replies"
grep -q '>>>' "$T/repl.out" && fail "prompt printed when stdin is not a terminal"
# End of input ends it too.
printf 'one\ntwo\nthree\n' | "$DUET" run --think off -n 4 -t 1 >"$T/eof.out" 2>"$T/eof.err" || fail "EOF exit status"
[ "$(stat_lines "$T/eof.err")" -eq 3 ] || fail "EOF conversation: expected 3 replies"

# Ctrl-C during a long reply stops that reply only; the conversation goes on. A slower
# forged model (a few ms a token), so that the reply is still running when the signal comes.
"$DUET" forge --vocab bytes --layers 8 --hidden 512 --heads 8 --kv-heads 4 --head-dim 64 \
  --ffn 1536 --context 8192 --type q8_0 --seed 5 --out "$T/slow.gguf" 2>/dev/null || fail "forge"
mkfifo "$T/in"
"$DUET" run -m "$T/slow.gguf" --think off -n 4000 -t 1 <"$T/in" >"$T/int.out" 2>"$T/int.err" &
RUN_PID=$!
exec 3>"$T/in"
# Two replies, each interrupted once it has started writing: the first Ctrl-C must leave the
# program reading the next line.
seen=0
for turn in 1 2; do
  echo "tell me a long story, part $turn" >&3
  # Until this reply has written something (stdout grew since the last turn).
  for _ in $(seq 1 400); do [ "$(stat -c %s "$T/int.out")" -gt "$seen" ] && break; sleep 0.025; done
  [ "$(stat -c %s "$T/int.out")" -gt "$seen" ] || fail "reply $turn did not start"
  kill -INT "$RUN_PID"
  for _ in $(seq 1 400); do [ "$(grep -c 'interrupted\]' "$T/int.err")" -eq "$turn" ] && break; sleep 0.025; done
  seen=$(stat -c %s "$T/int.out")
done
echo "/exit" >&3
exec 3>&-
wait "$RUN_PID"; rc=$?; RUN_PID=""
[ "$rc" -eq 0 ] || fail "after Ctrl-C: exit status $rc"
[ "$(grep -c ', interrupted\]$' "$T/int.err")" -eq 2 ] || fail "Ctrl-C did not stop each reply"
[ "$(stat_lines "$T/int.err")" -eq 2 ] || fail "after Ctrl-C the conversation did not go on"

# Bad input: exit status non-zero, a message on stderr, nothing on stdout.
expect_refused() {
  local what=$1 pattern=$2; shift 2
  "$DUET" run "$@" >"$T/bad.out" 2>"$T/bad.err" </dev/null
  local rc=$?
  [ "$rc" -ne 0 ] || fail "$what: exit status 0"
  [ "$rc" -lt 128 ] || fail "$what: crashed (status $rc)"
  grep -qiE "$pattern" "$T/bad.err" || fail "$what: stderr does not mention $pattern"
  [ ! -s "$T/bad.out" ] || fail "$what: wrote to stdout"
}
expect_refused "--think maybe" 'think' --think maybe "hi"
expect_refused "unknown flag" 'bogus' --bogus "hi"
expect_refused "-n 0" 'max-tokens|-n' -n 0 "hi"
expect_refused "missing model file" 'not exist|no such' -m "$T/nowhere.gguf" "hi"
head -c 4096 /dev/urandom >"$T/garbage.gguf"
expect_refused "not a GGUF file" 'gguf|magic' -m "$T/garbage.gguf" "hi"
echo "run_chat: ok"
