#!/usr/bin/env bash
# `cmake --install` of the build that made PATH/TO/duet, with DESTDIR into a temp dir and the
# prefix /usr: exactly the expected files; the installed binary runs, carries the chat page and
# no path into the build tree; duet.service says what a sandboxed notify service must, and
# `systemd-analyze verify` accepts it; duet(1) renders without warnings and documents every
# subcommand and the serve flags.
# systemd-analyze verify checks that ExecStart's binary exists, and /usr/bin/duet is not
# installed on this machine (DESTDIR is the point): it verifies a copy of the unit whose
# ExecStart names the staged binary instead, after the installed unit's own ExecStart line is
# checked to be exactly /usr/bin/duet. (--root=DESTDIR would find the binary but then none of
# systemd's own units, such as sysinit.target.)
# Usage: install.sh PATH/TO/duet [GOLDEN_DIR]
set -uo pipefail
DUET=$(realpath "$1")
BUILD=$(dirname "$DUET")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ROOT="$T/root"

[ -f "$BUILD/duet.1" ] || fail "$BUILD/duet.1 is missing: build the duet_manpage target (part of 'all')"
DESTDIR="$ROOT" cmake --install "$BUILD" --prefix /usr >"$T/install.log" 2>&1 ||
  { cat "$T/install.log"; fail "cmake --install"; }

# The file list, exactly.
(cd "$ROOT" && find . -type f -o -type l | sort) >"$T/files"
cat >"$T/expected" <<'EOF'
./usr/bin/duet
./usr/lib/systemd/system/duet.service
./usr/share/doc/duet/examples/duet.env
./usr/share/doc/duet/examples/nginx-duet.conf.template
./usr/share/man/man1/duet.1
EOF
diff -u "$T/expected" "$T/files" || fail "the installed files differ from the list"
[ -x "$ROOT/usr/bin/duet" ] || fail "the binary is not executable"
echo "ok: installed files"

# The binary: runs, holds the chat page (with its key form), no RPATH into the build tree.
"$ROOT/usr/bin/duet" serve --help >"$T/help" 2>&1 || fail "the installed duet does not run"
grep -q -- "--api-key-file" "$T/help" || fail "serve --help of the installed binary"
grep -qa 'id="key-dialog"' "$ROOT/usr/bin/duet" || fail "the chat page is not in the installed binary"
if readelf -d "$ROOT/usr/bin/duet" | grep -E 'RPATH|RUNPATH' | grep -qF "$BUILD"; then
  fail "the installed binary has a run path into the build tree"
fi
echo "ok: the installed binary"

# The unit.
UNIT="$ROOT/usr/lib/systemd/system/duet.service"
for line in "Type=notify" "NotifyAccess=main" "ExecStart=/usr/bin/duet serve" "DynamicUser=yes" \
            "ProtectSystem=strict" "StateDirectory=duet" "Environment=DUET_HOME=%S/duet" \
            "EnvironmentFile=-/etc/duet/duet.env" "WantedBy=multi-user.target"; do
  grep -qxF -- "$line" "$UNIT" || fail "duet.service has no line '$line'"
done
[ "$(grep -c '^ExecStart=' "$UNIT")" -eq 1 ] || fail "duet.service: one ExecStart"
grep -q '@' <(grep -v '^#' "$UNIT" | grep -v '^$') && fail "duet.service: a placeholder is left: $(grep -n '@' "$UNIT")"
command -v systemd-analyze >/dev/null || fail "systemd-analyze not found (scripts/setup installs systemd)"
mkdir -p "$T/verify"
sed "s|^ExecStart=/usr/bin/duet |ExecStart=$ROOT/usr/bin/duet |" "$UNIT" >"$T/verify/duet.service"
grep -q "^ExecStart=$ROOT/usr/bin/duet serve$" "$T/verify/duet.service" || fail "the copy for verify"
# MANPATH: Documentation=man:duet(1) is looked up with man, in the staged tree.
MANPATH="$ROOT/usr/share/man" systemd-analyze verify "$T/verify/duet.service" >"$T/verify.log" 2>&1
rc=$?
# Other units of this machine may draw warnings of their own; any about duet.service fails.
if [ "$rc" -ne 0 ] || grep -q "duet.service" "$T/verify.log"; then
  cat "$T/verify.log"; fail "systemd-analyze verify (exit status $rc)"
fi
echo "ok: systemd-analyze verify duet.service"

# The man page: renders with no warning, names every subcommand, documents serve's flags.
MAN="$ROOT/usr/share/man/man1/duet.1"
groff -man -ww -z "$MAN" 2>"$T/groff.log" || { cat "$T/groff.log"; fail "groff"; }
[ -s "$T/groff.log" ] && { cat "$T/groff.log"; fail "groff warns about duet.1"; }
MANWIDTH=100 man -l "$MAN" >"$T/man.txt" 2>"$T/man.err" || { cat "$T/man.err"; fail "man -l"; }
head -1 "$T/man.txt" | grep -q "^DUET(1)" || fail "man page header: $(head -1 "$T/man.txt")"
subcommands=$("$DUET" --help | awk '/^Subcommands:$/ { on = 1; next } /^$/ { on = 0 } on { print $1 }')
[ -n "$subcommands" ] || fail "no subcommands in duet --help"
for sub in $subcommands; do
  grep -qE "^ +duet $sub\$" "$T/man.txt" || fail "no section for 'duet $sub' in the man page"
done
grep -qE "^ +duet bench serve\$" "$T/man.txt" || fail "no section for 'duet bench serve'"
for flag in --api-key --api-key-file --host --port --model --drain-seconds; do
  grep -qE -- "(^|[ ,])$flag( |,|\$)" "$T/man.txt" || fail "the man page does not document serve's $flag"
done
grep -q "NOTIFY_SOCKET" "$T/man.txt" || fail "the man page does not mention NOTIFY_SOCKET"
echo "ok: duet(1)"

# The nginx example is the configuration the streaming tests run through.
cmp -s "$ROOT/usr/share/doc/duet/examples/nginx-duet.conf.template" \
  "$(dirname "$0")/../../packaging/nginx/duet.conf.template" || fail "the nginx example differs"
echo "install: ok"
