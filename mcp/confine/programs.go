package confine

// What a server needs to run, found from its command: its program's install
// folder, the runtime its #! line names and the version manager it comes
// from, the package of a script handed to a runtime, and the environment
// the command runs with.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"rootkeeper/app"
	"slices"
	"strings"
)

// launcher is what an npx-style launcher needs beyond its own install.
type launcher struct {
	// read are folders, relative to the home folder, it runs packages or
	// runtimes from; read-only.
	read []string
}

// launchers are the npx-style launchers, by name. Their package caches
// are moved like every other (cacheVars).
var launchers = map[string]launcher{
	"npx":  {},
	"npm":  {},
	"pnpm": {read: []string{".local/share/pnpm"}},
	"bunx": {read: []string{".bun"}},
	"bun":  {read: []string{".bun"}},
	"uvx":  {read: []string{".local/share/uv"}},
	"uv":   {read: []string{".local/share/uv"}},
}

// cacheVars are the variables that move a launcher's or runtime's cache,
// and the folder each gets in the private temp folder's cache. They are
// set for every confined server, whatever its environment says: a
// launcher started by a shell, a script or another launcher writes there
// too, a cache the environment names elsewhere is not writable confined
// (npm then fails before it runs anything: it writes its log there), and
// a shared writable cache would let a confined server plant code that
// unconfined programs run later. The first confined start downloads (the
// network is not confined), later ones reuse it.
var cacheVars = []struct{ name, sub string }{
	{"npm_config_cache", "npm"},
	{"YARN_CACHE_FOLDER", "yarn"},
	{"BUN_INSTALL_CACHE_DIR", "bun"},
	{"UV_CACHE_DIR", "uv"},
	{"PIP_CACHE_DIR", "pip"},
	{"DENO_DIR", "deno"},
	{"GOCACHE", "go-build"},
	{"COREPACK_HOME", "corepack"},
	{"XDG_CACHE_HOME", ""},
}

// dataVars are the XDG base folders a server's own settings, data and
// state go to, and the folder each gets in its data folder. Like the
// cache they are always set: the person's own ~/.config is not the
// server's to read or write.
var dataVars = []struct{ name, sub string }{
	{"XDG_CONFIG_HOME", "config"},
	{"XDG_DATA_HOME", "share"},
	{"XDG_STATE_HOME", "state"},
}

// dataFiles are the person's settings files that programs read from the
// home folder and treat an unreadable one as fatal, with the variable that
// names another and the file of the server's own, in its data folder, it
// gets instead: git dies on an unreadable ~/.gitconfig ("unknown error
// occurred while reading the configuration files"), and the person's
// ~/.npmrc may hold registry tokens no server should have. A missing file
// is fine to both.
var dataFiles = []struct{ name, file string }{
	{"GIT_CONFIG_GLOBAL", "gitconfig"},
	{"npm_config_userconfig", "npmrc"},
}

// browserCaches are where browser automation finds the browsers it
// downloaded, under the cache folder that XDG_CACHE_HOME now moves: they
// are named where the environment does not name them, so that an
// installed browser is still found (and read: programHomes).
var browserCaches = []struct{ name, rel string }{
	{"PLAYWRIGHT_BROWSERS_PATH", ".cache/ms-playwright"},
	{"PUPPETEER_CACHE_DIR", ".cache/puppeteer"},
}

// privateFolders returns env with the temp variables and cacheVars
// pointed into temp, and dataVars (each made, 0700) and dataFiles into
// data.
func privateFolders(env []string, temp, data, home string) []string {
	if temp != "" {
		for _, k := range []string{"TMPDIR", "TMP", "TEMP"} {
			env = setEnv(env, k, temp)
		}
		if home != "" && envValue(env, "XDG_CACHE_HOME") == "" {
			for _, b := range browserCaches {
				if envValue(env, b.name) == "" {
					if _, err := os.Stat(filepath.Join(home, b.rel)); err == nil {
						env = setEnv(env, b.name, filepath.Join(home, b.rel))
					}
				}
			}
		}
		for _, c := range cacheVars {
			dir := filepath.Join(temp, "cache", c.sub)
			os.MkdirAll(dir, 0o700)
			env = setEnvFold(env, c.name, dir)
		}
	}
	if data != "" {
		for _, d := range dataVars {
			dir := filepath.Join(data, d.sub)
			os.MkdirAll(dir, 0o700)
			env = setEnv(env, d.name, dir)
		}
		for _, f := range dataFiles {
			env = setEnvFold(env, f.name, filepath.Join(data, f.file))
		}
	}
	return env
}

// setEnvFold is setEnv, also dropping a setting of key spelled in another
// case: npm reads its npm_config_ variables in any case.
func setEnvFold(env []string, key, value string) []string {
	env = slices.DeleteFunc(env, func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return strings.EqualFold(k, key)
	})
	return append(env, key+"="+value)
}

// programHomes are folders in the home folder that hold programs a server
// runs rather than a person's files: the browsers browser automation
// downloaded. Read-only, for every confined server.
var programHomes = []string{".cache/ms-playwright", ".cache/puppeteer"}

// projectManifests are the files of the project an npx-style launcher runs
// in that it reads to find what to run.
var projectManifests = []string{"package.json", "package-lock.json", "npm-shrinkwrap.json"}

// manifests are the files that end a walk up from a program's folder.
var manifests = []string{"package.json", "pyproject.toml", "setup.py", "go.mod", "Cargo.toml", "deno.json"}

// manifestWalk are the folders above each of folders up to the nearest one
// holding a manifest, that one included: argument parsers and find-up
// walk there from a program's folder. None is the home folder, above it,
// or /; a walk that finds no manifest within eight folders gives none.
func manifestWalk(folders []string, home string) []string {
	var out []string
	for _, f := range folders {
		var walk []string
		for d, up := filepath.Dir(filepath.Clean(f)), 0; up < 8; d, up = filepath.Dir(d), up+1 {
			if d == "/" || d == "." || (home != "" && app.IsWithin(home, d)) {
				walk = nil
				break
			}
			walk = append(walk, d)
			if slices.ContainsFunc(manifests, func(m string) bool {
				_, err := os.Stat(filepath.Join(d, m))
				return err == nil
			}) {
				break
			}
			if up == 7 {
				walk = nil
			}
		}
		out = append(out, walk...)
	}
	return out
}

// makeOwn makes a missing Policy.Own path: a folder when it ends in /,
// else an empty file; the folder above it must exist.
func makeOwn(path string) error {
	if strings.HasSuffix(path, "/") {
		if err := os.Mkdir(path, 0o700); err != nil && !os.IsExist(err) {
			return fmt.Errorf("the server's own folder %s: %w", path, err)
		}
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("the server's own file %s: %w", path, err)
	}
	return f.Close()
}

// runtimeManagers are folders, relative to the home folder, where version
// managers keep runtimes and the shims that pick one (pyenv's python3 is a
// shell script that runs pyenv, which reads its settings there). They hold
// programs, not the person's files.
var runtimeManagers = []string{
	".pyenv", ".nvm", ".volta", ".asdf", ".rbenv", ".nodenv", ".goenv", ".sdkman",
	".local/share/mise", ".local/share/fnm", ".fnm", ".bun", ".deno", ".cargo", ".rustup",
}

// runtimeManager is the version manager's folder prog runs from (as named
// or resolved), or "".
func runtimeManager(prog, home string) string {
	if prog == "" || home == "" {
		return ""
	}
	for _, p := range []string{prog, app.Resolved(prog)} {
		for _, rel := range runtimeManagers {
			if m := filepath.Join(home, rel); app.IsWithin(p, m) {
				return m
			}
		}
	}
	return ""
}

// programFolders are the folders a program at path runs from, as named and
// with symlinks resolved: up to the outermost node_modules for a node
// package (its dependencies are hoisted there), the prefix's bin, lib and
// libexec for something in a bin folder (a venv, ~/.nvm/versions/node/vX),
// and otherwise its own folder. A folder that is the home folder, an
// ancestor of it, or / is never granted; then only the file itself is.
func programFolders(path, home string) []string {
	var out []string
	for _, p := range []string{path, app.Resolved(path)} {
		out = append(out, installFolder(p, home)...)
	}
	return out
}

func installFolder(path, home string) []string {
	path = filepath.Clean(path)
	sep := string(filepath.Separator)
	if i := strings.Index(path, sep+"node_modules"+sep); i >= 0 {
		return safeFolders(path, home, path[:i+len(sep+"node_modules")])
	}
	dir := filepath.Dir(path)
	if b := filepath.Base(dir); b == "bin" || b == "sbin" {
		prefix := filepath.Dir(dir)
		out := safeFolders(path, home, dir)
		for _, sub := range []string{"lib", "lib64", "libexec"} {
			if fi, err := os.Stat(filepath.Join(prefix, sub)); err == nil && fi.IsDir() {
				out = append(out, safeFolders(path, home, filepath.Join(prefix, sub))...)
			}
		}
		if _, err := os.Stat(filepath.Join(prefix, "pyvenv.cfg")); err == nil {
			out = append(out, filepath.Join(prefix, "pyvenv.cfg"))
		}
		return out
	}
	return safeFolders(path, home, projectFolder(dir, home))
}

// projectFolder is the nearest folder from dir upwards, at most three
// levels, that holds a package manifest (a server run from its own checkout,
// dist/index.js, needs its dependencies beside it), or dir itself. It never
// climbs to a top-level folder (/tmp, /home), the home folder or above.
func projectFolder(dir, home string) string {
	sep := string(filepath.Separator)
	for d, up := dir, 0; up <= 3 && strings.Count(d, sep) >= 2 && (home == "" || !app.IsWithin(home, d)); d, up = filepath.Dir(d), up+1 {
		for _, m := range []string{"package.json", "pyproject.toml", "setup.py", "go.mod", "Cargo.toml", "deno.json"} {
			if _, err := os.Stat(filepath.Join(d, m)); err == nil {
				return d
			}
		}
	}
	return dir
}

// isProgram reports whether a file named on a runtime's command line is
// code (a script or a package's file) rather than data.
func isProgram(path string) bool {
	if strings.Contains(path, string(filepath.Separator)+"node_modules"+string(filepath.Separator)) {
		return true
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".py", ".pyz", ".rb", ".pl", ".php", ".jar", ".lua":
		return true
	}
	fi, err := os.Stat(path)
	return err == nil && fi.Mode()&0o111 != 0
}

// safeFolders is dir, unless granting dir would grant the home folder or
// the whole disk; then it is only the file.
func safeFolders(file, home, dir string) []string {
	if dir == "/" || dir == "." || (home != "" && app.IsWithin(home, dir)) {
		return []string{file}
	}
	return []string{dir}
}

// scriptArg is the absolute path of arg when it names an existing regular
// file (a script handed to a runtime), or "".
func scriptArg(arg, dir string) string {
	if arg == "" || strings.HasPrefix(arg, "-") {
		return ""
	}
	if !filepath.IsAbs(arg) {
		if dir == "" {
			wd, err := os.Getwd()
			if err != nil {
				return ""
			}
			dir = wd
		}
		arg = filepath.Join(dir, arg)
	}
	fi, err := os.Stat(arg)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return arg
}

// interpreter is the program a script's #! line runs (through env, looked
// up in path), or "".
func interpreter(exe, path string) string {
	f, err := os.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := f.Read(head)
	head = head[:n]
	if !bytes.HasPrefix(head, []byte("#!")) {
		return ""
	}
	line, _, _ := bytes.Cut(head[2:], []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) == 0 {
		return ""
	}
	if filepath.Base(fields[0]) != "env" {
		return fields[0]
	}
	for _, f := range fields[1:] {
		if strings.HasPrefix(f, "-") || strings.Contains(f, "=") {
			continue // env's own flags (-S) and assignments
		}
		return lookPath(f, path)
	}
	return ""
}

// lookPath finds name in path (a PATH value), as the server's env would.
func lookPath(name, path string) string {
	if strings.Contains(name, "/") {
		return name
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// envPath is PATH in env (the server's environment), or this process's.
func envPath(env []string) string {
	if env == nil {
		return os.Getenv("PATH")
	}
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "PATH="); ok {
			return v
		}
	}
	return ""
}

// envHome is HOME in env, or this process's home folder.
func envHome(env []string) string {
	if h := envValue(env, "HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// envValue is the value of key in env (the last setting wins, as in
// exec.Cmd), or "".
func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

// setEnv returns env with key set to value (replacing earlier settings).
func setEnv(env []string, key, value string) []string {
	env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, key+"=") })
	return append(env, key+"="+value)
}
