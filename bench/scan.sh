#!/usr/bin/env bash
# Benchmark `rootkeeper scan` against fd and find on a synthetic home-like
# tree (270,000 folders, 2,000 repositories, node_modules folders a scanner
# should skip). Not a timed test: run it by hand or in a perf job.
#
#   bench/scan.sh                 # tree in bench/tree (ignored by git), binary ./rootkeeper
#   TREE=/tmp/t bench/scan.sh     # tree elsewhere (reused when present)
#   RK=/tmp/harness bench/scan.sh # any command taking `scan --json DIR`-like arguments
#
# It also times a re-scan of the unchanged tree with the re-scan cache of
# package detect, through bench/rkscan -cache FILE (the cache loaded from a
# file, used, and saved again, as a later launch would).
#
# Needs python3, hyperfine, fdfind (fd-find) and GNU time (/usr/bin/time).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
mktree=${MKTREE:-$(dirname "$0")/../../shared/bench/mktree.py}
tree=${TREE:-$here/tree}
runs=${RUNS:-5}

for tool in python3 hyperfine fdfind /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "scan.sh: $tool is missing" >&2; exit 2; }
done

# The command under test: ./rootkeeper scan --json, built if missing.
if [ -n "${RK:-}" ]; then
  rk=$RK
else
  rk=$repo/rootkeeper
  if [ ! -x "$rk" ]; then
    echo "building $rk" >&2
    (cd "$repo" && go build -o rootkeeper .)
  fi
  rk="$rk scan --json"
fi

# The tree, made once: mktree.py is deterministic for its seed.
if [ ! -f "$tree/.made" ]; then
  [ -f "$mktree" ] || { echo "scan.sh: $mktree not found (shared/ beside the repository?)" >&2; exit 2; }
  rm -rf "$tree"
  echo "making $tree (slow: 270,000 folders)" >&2
  python3 "$mktree" "$tree" --dirs 270000 --repos 2000 >&2
  touch "$tree/.made"
fi

# Same answer first: every repository found, with its branch and remote.
found=$($rk "$tree" 2>/dev/null | grep -c '"kind":"repo"' || true)
withmeta=$($rk "$tree" 2>/dev/null | grep '"kind":"repo"' | grep '"branch":"main"' | grep -c '"remote":"https://example.org/' || true)
fdfound=$(fdfind -H -I -t d '^\.git$' "$tree" | wc -l)
echo "repositories: rootkeeper $found ($withmeta with branch and remote), fd $fdfound"
if [ "$found" -ne "$fdfound" ] || [ "$withmeta" -ne "$fdfound" ]; then
  echo "scan.sh: rootkeeper and fd disagree on the tree; timings would mean nothing" >&2
  exit 1
fi

json=$(mktemp)
cachefile=$(mktemp -u)
rkscan=$(mktemp)
trap 'rm -f "$json" "$cachefile" "$rkscan"' EXIT
(cd "$repo" && go build -o "$rkscan" ./bench/rkscan)
"$rkscan" -cache "$cachefile" "$tree" >/dev/null 2>&1 # the first scan, which fills the cache
# -N: no shell in between; hyperfine sends the output to /dev/null itself.
hyperfine -N --warmup 1 --runs "$runs" --export-json "$json" \
  -n rootkeeper "$rk $tree" \
  -n fd "fdfind -H -I -t d '^\.git\$' $tree" \
  -n find "find $tree -name .git -type d -prune" \
  -n rescan "$rkscan -cache $cachefile $tree"

rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }
rk_rss=$(rss $rk "$tree")
fd_rss=$(rss fdfind -H -I -t d '^\.git$' "$tree")
re_rss=$(rss "$rkscan" -cache "$cachefile" "$tree")
"$rkscan" -cache "$cachefile" "$tree" 2>&1 >/dev/null | grep '^cache:' || true

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs (wall times need a quiet machine)"
python3 - "$json" "$rk_rss" "$fd_rss" "$re_rss" <<'PY'
import json, sys
res = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
rk, fd, find, re = res["rootkeeper"], res["fd"], res["find"], res["rescan"]
print(f"wall (mean of {len(rk['times'])}): rootkeeper {rk['mean']:.3f} s, fd {fd['mean']:.3f} s, find {find['mean']:.3f} s")
print(f"ratio rootkeeper/fd: {rk['mean']/fd['mean']:.2f} (goal <= 0.60); rootkeeper/find: {rk['mean']/find['mean']:.2f}")
print(f"re-scan with the cache file: {re['mean']:.3f} s; re-scan/first scan {re['mean']/rk['mean']:.2f}, re-scan/fd {re['mean']/fd['mean']:.2f}")
cpu = {k: r["user"] + r["system"] for k, r in res.items()}
print(f"cpu (user+sys, mean): rootkeeper {cpu['rootkeeper']:.3f} s, fd {cpu['fd']:.3f} s, find {cpu['find']:.3f} s; rootkeeper/fd {cpu['rootkeeper']/cpu['fd']:.2f}")
print(f"peak RSS: rootkeeper {int(sys.argv[2])/1024:.1f} MB (goal < 100 MB), fd {int(sys.argv[3])/1024:.1f} MB, re-scan with the cache {int(sys.argv[4])/1024:.1f} MB")
PY
