#!/usr/bin/env bash
# Writes duet(1), a man page, from the binary's own --help texts: `duet --help` and that of
# every subcommand (and of their subcommands), so the page says what the flags say. Run by the
# build (CMakeLists.txt, cmake/install.cmake); no help2man needed.
#   make_manpage.sh OUT.1 VERSION DUET [EMULATOR ARGS...]
# The command that runs duet is everything after VERSION: a cross build passes its emulator
# first (qemu-aarch64 -L ... build/duet).
set -euo pipefail
OUT=$1
VERSION=$2
shift 2
RUN=("$@")

help_of() { "${RUN[@]}" "$@" --help; }

# One help text (stdin) as roff: the first line is the summary (left out with no-summary), "Usage:" the synopsis, each
# "Options:"/"Positionals:"/"Subcommands:" section a list of tagged paragraphs, and the text
# after the last section (the footer) plain paragraphs, refilled by roff. Backslashes and
# leading dots are escaped; a flag's dashes become \- so that they can be copied from the page;
# characters beyond ASCII become \[uXXXX] (perl: Debian's perl-base is always there).
to_roff() {
  awk -v no_summary="${1:-}" '
    function esc(s) {
      gsub(/\\/, "\\e", s)
      if (s ~ /^[.'"'"']/) s = "\\&" s
      return s
    }
    function flagesc(s) { s = esc(s); gsub(/-/, "\\-", s); return s }
    function flush() {
      if (tag != "") {
        print ".TP"
        print "\\fB" flagesc(tag) "\\fR"
        if (desc != "") print desc
        tag = ""; desc = ""
      }
    }
    NR == 1 { if (no_summary == "") { print ".PP"; print esc($0) }; next }
    /^Usage: / {
      flush()
      sub(/^Usage: [^ ]*/, "Usage: duet")
      print ".PP"; print ".B " esc(substr($0, 8)); next
    }
    /^[A-Z][A-Za-z ]*:$/ { flush(); print ".PP"; print "\\fI" esc($0) "\\fR"; insection = 1; next }
    /^$/ { flush(); if (insection) { insection = 0; footer = 1 } ; if (footer) print ".PP"; next }
    insection && /^  [^ ]/ {
      flush()
      line = substr($0, 3)
      if (match(line, /  +/)) {
        tag = substr(line, 1, RSTART - 1)
        desc = esc(substr(line, RSTART + RLENGTH))
      } else {
        tag = line; desc = ""
      }
      next
    }
    insection && /^    / {
      text = $0; sub(/^ +/, "", text)
      desc = desc == "" ? esc(text) : desc "\n" esc(text)
      next
    }
    { print esc($0) }
    END { flush() }
  '
}

# The subcommands a help text lists.
subcommands_of() {
  awk '/^Subcommands:$/ { on = 1; next } /^[^ ]/ || /^$/ { on = 0 } on && /^  [^ ]/ { print $1 }'
}

emit() {  # emit WORDS...: the section of `duet WORDS...`, then those of its subcommands
  local text
  text=$(help_of "$@")
  printf '.SS "duet %s"\n' "$*"
  to_roff <<<"$text"
  local sub
  for sub in $(subcommands_of <<<"$text"); do emit "$@" "$sub"; done
}

top=$(help_of)
summary=$(head -1 <<<"$top" | sed -e 's/^duet: //' -e 's/\\/\\e/g')
{
  printf '.TH DUET 1 "" "duet %s" "User Commands"\n' "$VERSION"
  printf '.SH NAME\nduet \\- %s\n' "$summary"
  printf '.SH SYNOPSIS\n.B duet\n.I SUBCOMMAND\n.RI [ OPTIONS ]\n'
  printf '.SH DESCRIPTION\n'
  to_roff no-summary <<<"$top"  # the summary is the NAME line already
  printf '.PP\nEach subcommand takes its own options, listed below as \\fBduet \\fISUBCOMMAND \\fB\\-\\-help\\fR prints them.\n'
  printf '.SH COMMANDS\n'
  for sub in $(subcommands_of <<<"$top"); do emit "$sub"; done
  cat <<'ROFF'
.SH ENVIRONMENT
.TP
.B DUET_HOME
where duet keeps its state (the history of \fBduet run\fR); the systemd service sets it to its
state directory, /var/lib/duet.
.TP
.B DUET_API_KEY
the API key(s) of \fBduet serve\fR (several separated by commas), and the key \fBduet run
\-\-url\fR sends.
.TP
.B NOTIFY_SOCKET
set by systemd for a \fBType=notify\fR service: \fBduet serve\fR sends READY=1 there once the
model is loaded and /ready answers 200, and STOPPING=1 when it begins to drain.
.SH FILES
.TP
.I /lib/systemd/system/duet.service
the systemd unit (under the installation prefix).
.TP
.I /etc/duet/duet.env
optional settings of the service: DUET_\fIFLAG\fR=\fIvalue\fR lines.
.SH SEE ALSO
.BR systemd.exec (5),
.BR systemd.service (5)
ROFF
} | perl -CSD -pe 's/([^\x00-\x7f])/sprintf("\\[u%04X]", ord($1))/ge' >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
