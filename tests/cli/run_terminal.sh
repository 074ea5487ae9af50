#!/usr/bin/env bash
# duet run on a terminal (script(1) gives it a pseudo-terminal): a reply full of escape
# sequences is shown escaped — reasoning too — and duet's dimming is the only
# escape sequence written; piped, the same reply is byte-exact. Line editing: the up arrow brings
# back the last input, history is kept in $DUET_HOME, Ctrl-D quits.
# Usage: run_terminal.sh PATH/TO/duet [GOLDEN_DIR]
set -uo pipefail
DUET=$(realpath "$1")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; for f in "$T"/*.out; do [ -f "$f" ] && { echo "-- $f"; od -c "$f" | head -40; }; done; exit 1; }
command -v script >/dev/null || fail "script(1) not found (util-linux's bsdutils)"
SCRIPTED="$(dirname "$DUET")/duet_scripted"
[ -x "$SCRIPTED" ] || fail "$SCRIPTED not built (a test target beside duet)"
export DUET_HOME="$T/home"

# A hostile reply: a window-title change, a screen clear, a bell, cursor moves, an 8-bit CSI
# (U+009B), a DEL; in the reasoning and in the answer.
node -e '
  const esc = "\x1b";
  console.log(JSON.stringify({
    EVIL_KEY: "<think>\nplan " + esc + "]0;pwned\x07 quietly\n</think>\n\nhi " + esc + "[2J" + esc + "[H\u009b31m\x7f done\r\nbye"}));' >"$T/script.json" || fail "node"

# Piped: the model's bytes exactly.
"$SCRIPTED" --script "$T/script.json" run "EVIL_KEY" --think on -t 1 >"$T/pipe.out" 2>/dev/null || fail "piped exit status"
expected=$'[thinking]\nplan \x1b]0;pwned\x07 quietly\n[/thinking]\nhi \x1b[2J\x1b[H\xc2\x9b31m\x7f done\r\nbye'
[ "$(cat "$T/pipe.out")" = "$expected" ] || fail "piped output is not the model's bytes"

# On a terminal: every control shown as text. The pty turns \n into \r\n; take those off first.
script -qec "'$SCRIPTED' --script '$T/script.json' run EVIL_KEY --think on -t 1 2>/dev/null" /dev/null >"$T/tty_raw.out" ||
  fail "terminal exit status"
tr -d '\r' <"$T/tty_raw.out" >"$T/tty.out"
want=$'\x1b[2mplan ^[]0;pwned^G quietly\x1b[0m\nhi ^[[2J^[[H\\u009b31m^? done\nbye'
[ "$(cat "$T/tty.out")" = "$want" ] || fail "terminal output: $(od -c "$T/tty.out" | head -20)"
# The only escape sequences are duet's own dimming, and no bell or 8-bit control is left.
others=$(grep -aoE $'\x1b[^[]|\x1b\\[[^02]|\x1b\\[[02][^m]' "$T/tty.out" | wc -l)
[ "$others" -eq 0 ] || fail "escape sequences other than duet's dimming reached the terminal"
LC_ALL=C grep -q $'[\x07\x7f]' "$T/tty.out" && fail "a bell or DEL reached the terminal"
LC_ALL=C grep -q $'\xc2\x9b' "$T/tty.out" && fail "an 8-bit CSI reached the terminal"

# Line editing. Typed text reaches the pseudo-terminal at once, and a line typed before libedit
# reads it is kept by the terminal; a Ctrl-D is not (the terminal takes it as end-of-file while
# it is still in line mode), so it is sent once the prompt is on the screen.
# type_then_ctrl_d OUT TEXT: runs `duet run` on a terminal, types TEXT, waits for the prompt
# that follows the last reply, then presses Ctrl-D; the run must end by itself.
type_then_ctrl_d() {
  local out=$1 text=$2 replies=$3 pid
  rm -f "$T/tty_in"; mkfifo "$T/tty_in"
  script -qec "'$DUET' run -n 3 -t 1 --think off" /dev/null <"$T/tty_in" >"$out" 2>&1 &
  pid=$!
  exec 3>"$T/tty_in"
  printf '%s' "$text" >&3
  for _ in $(seq 1 600); do
    [ "$(grep -c 'tokens/s' "$out")" -ge "$replies" ] && [ "$(tail -c 4 "$out")" = ">>> " ] && break
    sleep 0.05
  done
  printf '\x04' >&3
  for _ in $(seq 1 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  exec 3>&-
  if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fail "Ctrl-D did not end the run"; fi
  wait "$pid" || fail "line editing: exit status"
}
# The up arrow brings back the last input; /save writes the conversation.
type_then_ctrl_d "$T/edit.out" $'first question\n\x1b[A\n/save '"$T/chat.json"$'\nsecond question\n' 3
user_turns() {
  node -e 'const c = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    console.log(JSON.stringify(c.messages.filter(m => m.role === "user").map(m => m.content)));' "$1"
}
[ "$(user_turns "$T/chat.json")" = '["first question","first question"]' ] ||
  fail "the up arrow did not bring the last input back: $(user_turns "$T/chat.json")"
grep -q '>>> ' "$T/edit.out" || fail "no prompt on a terminal"
[ -f "$DUET_HOME/run_history" ] || fail "no history file in \$DUET_HOME"
grep -q 'second' "$DUET_HOME/run_history" || fail "the history file does not hold the input (libedit writes a space as \\040)"
# The next run starts with that history: the up arrow alone brings the last question back.
printf '\x1b[A\n/save %s\n/bye\n' "$T/chat2.json" |
  script -qec "'$DUET' run -n 3 -t 1 --think off" /dev/null >"$T/edit2.out" 2>&1 || fail "second run: exit status"
[ "$(user_turns "$T/chat2.json")" = '["second question"]' ] ||
  fail "history was not kept across runs: $(user_turns "$T/chat2.json")"
# Typed UTF-8 arrives whole, even with no locale in the environment (libedit decodes by it).
printf 'привет 你好 café\n/save %s\n/bye\n' "$T/utf8.json" |
  env -u LANG -u LC_ALL -u LC_CTYPE script -qec "'$DUET' run -n 2 -t 1 --think off" /dev/null >"$T/utf8.out" 2>&1 ||
  fail "UTF-8 input: exit status"
[ "$(user_turns "$T/utf8.json")" = '["привет 你好 café"]' ] || fail "UTF-8 input mangled: $(user_turns "$T/utf8.json")"
echo "run_terminal: ok"
