#!/usr/bin/env bash
# Rootkeeper's memory beside servers that flood it with requests: headless
# runs with the servers of one group for SECONDS, its resident memory read
# every second; then its peak (VmHWM). The anchor is the same app beside
# one honest server that asks for nothing, measured in the same run.
#
#   bench/flood.sh [SECONDS]           # default 60; groups: anchor, deaf, roots, set
#   FLOODS="anchor deaf" bench/flood.sh 20
#   RK=/tmp/other-build bench/flood.sh # another build of rootkeeper
#
# Groups (the modes of mcp/testdata/hostile):
#   anchor  one server that serves and asks nothing
#   deaf    one server asking roots/list in a tight loop, never reading the answers
#   roots   one server asking roots/list in a tight loop, reading the answers
#   set     the hostile set of main_hostile_test.go and the deaf flooder, together
#
# Not a timed test: run it by hand or in a perf job. Linux only (/proc).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
secs=${1:-60}
groups=${FLOODS:-anchor deaf roots set}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

rk=${RK:-$work/rootkeeper}
if [ -z "${RK:-}" ]; then
  (cd "$repo" && go build -o "$rk" .)
fi
hostile=$work/hostile
(cd "$repo" && go build -o "$hostile" ./mcp/testdata/hostile)

modes() {
  case $1 in
    anchor) echo "honest" ;;
    deaf) echo "deaf-flood" ;;
    roots) echo "roots-flood" ;;
    set) echo "giant sampling-flood roots-flood notify-flood stderr-flood no-handshake crash escape bad-json deaf-flood" ;;
    *) echo "flood.sh: unknown group $1" >&2; exit 2 ;;
  esac
}

args() {
  case $1 in
    sampling-flood) echo "-mode sampling-flood -n 2000" ;;
    stderr-flood) echo "-mode stderr-flood -mb 300" ;;
    escape) echo "-mode escape -pidfile $2/escaped.pid" ;;
    *) echo "-mode $1" ;;
  esac
}

printf '%-7s' "group"
for ((i = 1; i <= secs; i++)); do
  if ((i == 1 || i % 5 == 0)); then printf ' %5ss' "$i"; fi
done
printf '  %8s\n' "peak"

for group in $groups; do
  state=$work/$group
  mkdir -p "$state/folder"
  "$rk" --state-dir "$state" roots add "$state/folder" --enable >/dev/null
  for mode in $(modes "$group"); do
    # shellcheck disable=SC2046
    "$rk" --state-dir "$state" servers add "$mode" -- "$hostile" $(args "$mode" "$state") >/dev/null
    "$rk" --state-dir "$state" grant "$mode" "$state/folder" >/dev/null
  done
  "$rk" --state-dir "$state" headless 2>"$state/headless.log" &
  pid=$!
  printf '%-7s' "$group"
  for ((i = 1; i <= secs; i++)); do
    sleep 1
    rss=$(awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/$pid/status")
    if ((i == 1 || i % 5 == 0)); then printf ' %5sM' "$rss"; fi
  done
  peak=$(awk '/^VmHWM/ {print int($2 / 1024)}' "/proc/$pid/status")
  printf '  %7sM\n' "$peak"
  kill -TERM "$pid"
  wait "$pid" || true
  if [ -f "$state/escaped.pid" ]; then kill -9 "$(cat "$state/escaped.pid")" 2>/dev/null || true; fi
done
