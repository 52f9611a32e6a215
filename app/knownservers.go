package app

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A KnownServer is what Rootkeeper knows of one server program that its
// command does not say: where it keeps its own state. A confined server
// reaches its folders, what it needs to run and its data folder; most
// servers keep their settings where XDG_CONFIG_HOME and friends say
// (pointed into the data folder for every confined server), and those
// that do not are listed here, so that they work confined on their first
// start, when nobody may be there to ask (a host starts them while the
// app is not running).
type KnownServer struct {
	// Name is what people call it.
	Name string
	// Packages are the packages it comes as (npm), which npx-style
	// launchers name; Programs the names of its executable.
	Packages []string
	Programs []string
	// Env are variables that move its state into its data folder, set
	// where its configuration does not set them; {data} is the folder.
	Env map[string]string
	// Own are paths relative to the home folder where it keeps its own
	// settings, logs or data whatever its environment says (a folder ends
	// in /): read-write for it alone, made when missing. They are its own
	// (named after it, holding nothing of the person's), and shown on its
	// card beside its data folder.
	Own []string
	// Source says where this was learned (the package's code, at the
	// version pinned in the tests).
	Source string
}

// KnownServers is the table of servers whose own state needs more than
// the XDG variables, with where each fact comes from. The pinned servers
// of the tests (docs/confinement.md, "The servers people use, confined") work confined
// without it or with the row named here.
var KnownServers = []KnownServer{
	{
		Name:     "server-memory",
		Packages: []string{"@modelcontextprotocol/server-memory"},
		Programs: []string{"mcp-server-memory"},
		Env:      map[string]string{"MEMORY_FILE_PATH": "{data}/memory.jsonl"},
		Source:   "@modelcontextprotocol/server-memory 2026.8.31, dist/index.js: the graph goes to MEMORY_FILE_PATH, else to memory.jsonl beside its own code (which a confined server may not write)",
	},
	{
		Name:     "mcp-taskmanager",
		Packages: []string{"@kazuph/mcp-taskmanager"},
		Programs: []string{"mcp-taskmanager"},
		Env:      map[string]string{"TASK_MANAGER_FILE_PATH": "{data}/tasks.json"},
		Source:   "@kazuph/mcp-taskmanager 1.1.1, dist/index.js: tasks go to TASK_MANAGER_FILE_PATH, else to ~/Documents/tasks.json (the person's Documents folder)",
	},
	{
		Name:     "desktop-commander",
		Packages: []string{"@wonderwhy-er/desktop-commander"},
		Programs: []string{"desktop-commander"},
		Own:      []string{".claude-server-commander/", ".claude-server-commander-logs/"},
		Source:   "@wonderwhy-er/desktop-commander 0.2.52, dist/config.js and dist/utils/toolHistory.js: settings and tool history in ~/.claude-server-commander (made at start, a failure ends the server); dist/utils/fuzzySearchLogger.js: ~/.claude-server-commander-logs",
	},
	{
		Name:     "playwright-mcp-server (ExecuteAutomation)",
		Packages: []string{"@executeautomation/playwright-mcp-server"},
		Programs: []string{"playwright-mcp-server"},
		Env:      map[string]string{"LOG_FILE_PATH": "{data}/mcp-server.log"},
		Own:      []string{"playwright-mcp-server.log"},
		Source:   "@executeautomation/playwright-mcp-server 1.0.12, dist/index.js: its log is $HOME/playwright-mcp-server.log, and a failure to write it is printed on stdout, which breaks the protocol; dist/logging/logger.js: LOG_FILE_PATH, else ./logs/mcp-server.log in its working folder",
	},
}

// KnownServerOf is the row of KnownServers for srv, found from its command:
// the executable's name (as configured, and the package a node_modules/.bin
// link leads into) or a package an npx-style launcher names among its
// arguments (a version after @ is ignored).
func KnownServerOf(srv Server) (KnownServer, bool) {
	for _, k := range KnownServers {
		if knownProgram(srv, k.Packages, k.Programs) {
			return k, true
		}
	}
	return KnownServer{}, false
}

// knownProgram reports whether stdio server srv runs one of programs or
// packages, found as KnownServerOf says.
func knownProgram(srv Server, packages, programs []string) bool {
	if srv.Type != TransportStdio || srv.Command == "" {
		return false
	}
	names := []string{filepath.Base(srv.Command)}
	if r, err := filepath.EvalSymlinks(srv.Command); err == nil {
		names = append(names, r)
	}
	for _, a := range srv.Args {
		if !strings.HasPrefix(a, "-") {
			names = append(names, a)
		}
	}
	for _, n := range names {
		if slices.Contains(programs, n) || slices.Contains(packages, packageName(n)) {
			return true
		}
		for _, p := range packages {
			if strings.Contains(n, "/node_modules/"+p+"/") {
				return true
			}
		}
	}
	return false
}

// packageName is an npm package spec without its version: "@a/b@1.2" is
// "@a/b", "c@latest" is "c".
func packageName(spec string) string {
	at := strings.LastIndex(spec, "@")
	if at > 0 {
		return spec[:at]
	}
	return spec
}

// OwnState is where confined server srv keeps its own state: its data
// folder (made when missing), the variables that point it there (the
// known server's Env, where srv's configuration does not set them) and
// the paths of its own in the home folder home (KnownServer.Own, a
// folder's with a trailing /).
type OwnState struct {
	Data string
	Env  []string
	Own  []string
	// Known is the row of KnownServers it was found in, if any.
	Known *KnownServer
}

// ServerOwnState is OwnState for srv, whose state folder is stateDir.
func ServerOwnState(srv Server, stateDir, home string) (OwnState, error) {
	data, err := ServerData(stateDir, srv.Name)
	if err != nil {
		return OwnState{}, err
	}
	seedGitIdentity(home, filepath.Join(data, "gitconfig"))
	st := OwnState{Data: data}
	k, ok := KnownServerOf(srv)
	if !ok {
		return st, nil
	}
	st.Known = &k
	keys := make([]string, 0, len(k.Env))
	for key := range k.Env {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		if _, set := srv.Env[key]; set {
			continue
		}
		st.Env = append(st.Env, key+"="+strings.ReplaceAll(k.Env[key], "{data}", data))
	}
	if home != "" {
		for _, rel := range k.Own {
			p := filepath.Join(home, rel)
			if strings.HasSuffix(rel, "/") {
				p += string(os.PathSeparator)
			}
			st.Own = append(st.Own, p)
		}
	}
	return st, nil
}

// seedGitIdentity writes, once, the person's git identity (user.name and
// user.email, nothing else) to a confined server's own git settings
// (dst, which GIT_CONFIG_GLOBAL names for it: the person's ~/.gitconfig is
// not readable confined, and git dies on an unreadable one), so that a git
// server commits as the person does. An existing file is the server's
// own and is left as it is.
func seedGitIdentity(home, dst string) {
	if home == "" {
		return
	}
	if _, err := os.Lstat(dst); err == nil {
		return
	}
	if f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.WriteString(gitIdentitySeed(home))
		f.Close()
	}
}

// gitIdentitySeed is what seedGitIdentity writes for the person whose home
// folder is home: the [user] section of their git settings, or nothing.
func gitIdentitySeed(home string) string {
	var name, email string
	for _, src := range []string{filepath.Join(home, ".config", "git", "config"), filepath.Join(home, ".gitconfig")} {
		data, err := os.ReadFile(src)
		if err != nil {
			continue
		}
		n, e := gitIdentity(string(data))
		if n != "" {
			name = n
		}
		if e != "" {
			email = e
		}
	}
	if name == "" && email == "" {
		return ""
	}
	text := "[user]\n"
	if name != "" {
		text += "\tname = " + strconv.Quote(name) + "\n"
	}
	if email != "" {
		text += "\temail = " + strconv.Quote(email) + "\n"
	}
	return text
}

// gitIdentity reads user.name and user.email from a git config file's
// text: the [user] section's plain values (quotes removed; includes and
// conditionals are not followed).
func gitIdentity(text string) (name, email string) {
	section := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			section = strings.ToLower(strings.Trim(strings.Fields(line + " ")[0], "[]"))
			continue
		}
		if section != "user" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if uq, err := strconv.Unquote(v); err == nil {
			v = uq
		} else if i := strings.IndexAny(v, ";#"); i >= 0 {
			v = strings.TrimSpace(v[:i]) // a comment
		}
		if strings.ContainsAny(v, "\n\x00") {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "name":
			name = v
		case "email":
			email = v
		}
	}
	return name, email
}
