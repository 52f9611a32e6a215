#!/bin/sh
# Regenerates the screenshots in docs/: each tab of the main window, the
# first launch and the consent dialogs, from the real binary under Xvfb
# with a demo state.
#
#   sh docs/screenshots.sh        (from the module root)
#
# Needs xvfb-run, xwininfo, ImageMagick's import, git and python3; the demo servers are
# the npm ones in .ci/npm (npm ci there first).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/docs
DEMO=$(mktemp -d /tmp/rootkeeper-demo.XXXXXX)
trap 'rm -rf "$DEMO"' EXIT
BIN=$DEMO/rootkeeper
NPM=$ROOT/.ci/npm/node_modules/.bin
(cd "$ROOT" && go build -o "$BIN" .) # before HOME changes: keep the Go caches
export LANG=en_US.UTF-8 LC_ALL=en_US.UTF-8
export HOME=$DEMO/home/ada

# A home with a few projects, and credentials in it.
mkdir -p "$HOME/.ssh" "$HOME/notes" "$HOME/src/website" "$HOME/datasets"
for repo in rootkeeper infra; do
	mkdir -p "$HOME/src/$repo"
	git -C "$HOME/src/$repo" init -q -b main
	echo "module example.com/$repo" >"$HOME/src/$repo/go.mod"
done
git -C "$HOME/src/infra" checkout -q -b terraform-upgrade
echo '{"name": "website"}' >"$HOME/src/website/package.json"

state() { # state DIR: the demo state, every decision made
	d=$1
	"$BIN" --state-dir "$d" roots add "$HOME/src/rootkeeper" --enable >/dev/null
	"$BIN" --state-dir "$d" roots add "$HOME/src/website" --enable >/dev/null
	"$BIN" --state-dir "$d" roots add "$HOME/src/infra" >/dev/null
	"$BIN" --state-dir "$d" roots add "$HOME/notes" --enable >/dev/null
	"$BIN" --state-dir "$d" servers add filesystem -- "$NPM/mcp-server-filesystem" >/dev/null
	"$BIN" --state-dir "$d" servers add everything -- "$NPM/mcp-server-everything" >/dev/null
	for r in src/rootkeeper src/website src/infra; do "$BIN" --state-dir "$d" grant filesystem "$HOME/$r" >/dev/null; done
	"$BIN" --state-dir "$d" grant everything "$HOME/src/rootkeeper" >/dev/null
	"$BIN" --state-dir "$d" deny everything "$HOME/src/website" >/dev/null
	for s in filesystem everything; do "$BIN" --state-dir "$d" deny $s "$HOME/notes" >/dev/null; done
}

# shot NAME STATE_DIR [VAR=VALUE...]: run the app with the settings and
# capture its window.
shot() {
	name=$1 dir=$2
	shift 2
	env "$@" xvfb-run -a -s "-screen 0 1280x800x24" sh -c '
		"$0" --state-dir "$1" 2>>"$1/app.log" &
		pid=$!
		sleep 6
		id=$(xwininfo -root -tree | awk "/\"Rootkeeper\"/ {print \$1; exit}")
		import -window "${id:-root}" "$2"
		kill $pid
		wait $pid || true
	' "$BIN" "$dir" "$OUT/$name.png"
	echo "wrote docs/$name.png"
}

main=$DEMO/main
state "$main"
# The command line has no verb for search folders (the Discover tab edits
# them); write one into the state while no app runs.
python3 - "$main/state.json" "$HOME/src" <<'PY'
import json, sys
path, folder = sys.argv[1], sys.argv[2]
st = json.load(open(path))
st["searchFolders"] = [folder]
json.dump(st, open(path, "w"), indent=2)
PY
shot roots "$main" ROOTKEEPER_SHOW_TAB=roots
shot discover "$main" ROOTKEEPER_SHOW_TAB=discover
shot activity "$main" ROOTKEEPER_SHOW_TAB=activity
shot access "$main" ROOTKEEPER_SHOW_TAB=access
shot dialog-share "$main" ROOTKEEPER_SHOW_SHARE="$HOME"
# A git server limited to ~/src/infra by its own configuration, that folder
# denied: it is held, and its card says why and the way out.
"$BIN" --state-dir "$main" servers add git --env GIT_BASE_DIR="$HOME/src/infra" -- "$NPM/git-mcp-server" >/dev/null
"$BIN" --state-dir "$main" deny git "$HOME/src/infra" >/dev/null
shot servers "$main" ROOTKEEPER_SHOW_TAB=servers

# A server's network: everything (open, watched, by default) reached two
# names and was refused a third, which the person denied; its record is
# written into the state folder as the observer writes it.
network=$DEMO/network
state "$network"
"$BIN" --state-dir "$network" servers network everything deny telemetry.example.net:443 >/dev/null
mkdir -p "$network/network"
python3 - "$network/network/everything.json" <<'PY'
import datetime, json, sys
now = datetime.datetime.now(datetime.timezone.utc)
stamp = lambda m: (now - datetime.timedelta(minutes=m)).strftime("%Y-%m-%dT%H:%M:%SZ")
dest = lambda d, name, addr, first, last, count, allowed: {"dest": d, "proto": "tcp", "name": name, "address": addr,
    "port": 443, "first": stamp(first), "last": stamp(last), "count": count, "refused": 0 if allowed else count, "allowed": allowed}
json.dump({"server": "everything", "destinations": [
    dest("api.github.com:443", "api.github.com", "140.82.121.6", 50, 1, 12, True),
    dest("raw.githubusercontent.com:443", "raw.githubusercontent.com", "185.199.108.133", 48, 3, 4, True),
    dest("telemetry.example.net:443", "telemetry.example.net", "203.0.113.9", 47, 20, 2, False),
]}, open(sys.argv[1], "w"), indent=2)
PY
shot servers-network "$network" ROOTKEEPER_SHOW_TAB=servers
# A connect of everything waits for the person (written into the state as
# the observer records it).
python3 - "$network/state.json" <<'PY'
import datetime, json, sys
path = sys.argv[1]
now = datetime.datetime.now(datetime.timezone.utc)
stamp = lambda t: t.strftime("%Y-%m-%dT%H:%M:%SZ")
st = json.load(open(path))
st.setdefault("requests", []).append({
    "server": "everything", "path": "collector.example.net:443", "from": "network",
    "first": stamp(now), "last": stamp(now), "tried": "198.51.100.4:443", "op": "connect",
    "calls": [{"id": "n1", "op": "connect", "path": "collector.example.net:443"}],
    "until": stamp(now + datetime.timedelta(minutes=10)),
})
json.dump(st, open(path, "w"), indent=2)
PY
shot dialog-network "$network"

# The first launch: a fresh state folder. Rootkeeper looks for projects
# by itself and the Roots tab offers what it found, grouped by folder.
first=$DEMO/first
mkdir -p "$first"
shot first-launch "$first" ROOTKEEPER_SHOW_TAB=roots

# A folder enabled that no server has been asked about: both servers ask
# when they connect, one dialog at a time.
pending=$DEMO/pending
state "$pending"
"$BIN" --state-dir "$pending" roots add "$HOME/datasets" --enable >/dev/null
shot dialog-pending "$pending"

# A folder given on a server's command line is a request, asked about in
# the small dialog.
request=$DEMO/request
state "$request"
"$BIN" --state-dir "$request" servers add datasets -- "$NPM/mcp-server-filesystem" "$HOME/datasets" >/dev/null
shot dialog-request "$request"

# A confined server reached past its folders: it read a file, then tried
# to empty another and make a folder, all waiting on one request (written
# into the state as the observer records it; the command line cannot).
reach=$DEMO/reach
state "$reach"
mkdir -p "$HOME/secrets"
python3 - "$reach/state.json" "$HOME/secrets" <<'PY'
import datetime, json, sys
path, folder = sys.argv[1], sys.argv[2]
now = datetime.datetime.now(datetime.timezone.utc)
stamp = lambda t: t.strftime("%Y-%m-%dT%H:%M:%SZ")
st = json.load(open(path))
st.setdefault("requests", []).append({
    "server": "filesystem", "path": folder, "from": "reach",
    "first": stamp(now), "last": stamp(now),
    "tried": folder + "/api-token.txt", "op": "read",
    "calls": [
        {"id": "c1", "op": "read", "path": folder + "/api-token.txt"},
        {"id": "c2", "op": "truncate", "path": folder + "/notes.md"},
        {"id": "c3", "op": "mkdir", "path": folder + "/cache", "notOnce": "a folder cannot be made for it once"},
    ],
    # Long enough to be on screen when the shot is taken.
    "until": stamp(now + datetime.timedelta(minutes=10)),
})
json.dump(st, open(path, "w"), indent=2)
PY
shot dialog-reach "$reach"

# Hosts: another home where Claude Code and Cursor run servers that see
# folders without asking. The first launch offers to protect them.
bob=$DEMO/home/bob
mkdir -p "$bob/src/api" "$bob/.cursor"
cat >"$bob/.claude.json" <<JSON
{
  "numStartups": 12,
  "mcpServers": {
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "$bob/src"]},
    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"}
  },
  "projects": {"$bob/src/api": {"mcpServers": {"postgres": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-postgres", "postgresql://localhost/api"]}}}}
}
JSON
cat >"$bob/.cursor/mcp.json" <<JSON
{"mcpServers": {"everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]}}}
JSON
hostsdir=$DEMO/hosts
mkdir -p "$hostsdir"
shot guide "$hostsdir" HOME="$bob" ROOTKEEPER_SHOW_TAB=hosts
# Answered: Cursor protected, Claude Code not yet.
mkdir -p "$hostsdir/hosts" && : >"$hostsdir/hosts/guided"
HOME="$bob" "$BIN" --state-dir "$hostsdir" hosts protect cursor >/dev/null
shot hosts "$hostsdir" HOME="$bob" ROOTKEEPER_SHOW_TAB=hosts
