#!/usr/bin/env bash
# Writes an nginx setup for duet into DIR, to run without root:
#   packaging/nginx/render.sh UPSTREAM LISTEN DIR    (e.g. 127.0.0.1:8080 127.0.0.1:8081 /tmp/x)
#   nginx -p DIR -c DIR/nginx.conf -g 'daemon off;'
# DIR/duet.conf is duet.conf.template with its two placeholders filled in, DIR/nginx.conf is
# standalone.conf (plus `user` when run as root, so the workers stay this user and can use
# DIR); logs/ and tmp/ are made inside DIR.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 3 ] || { echo "usage: render.sh UPSTREAM LISTEN DIR" >&2; exit 2; }
UPSTREAM=$1 LISTEN=$2 DIR=$3
mkdir -p "$DIR/logs" "$DIR/tmp"
sed -e "s|\${DUET_UPSTREAM}|$UPSTREAM|g" -e "s|\${NGINX_LISTEN}|$LISTEN|g" \
  "$HERE/duet.conf.template" >"$DIR/duet.conf"
if grep -n '\${' "$DIR/duet.conf" >&2; then
  echo "render.sh: a placeholder is left in $DIR/duet.conf" >&2
  exit 1
fi
{
  if [ "$(id -u)" -eq 0 ]; then echo "user $(id -un);"; fi
  cat "$HERE/standalone.conf"
} >"$DIR/nginx.conf"
