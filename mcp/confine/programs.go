package confine

// What a server needs to run, found from its command: its program's install
// folder, the runtime its #! line names and the version manager it comes
// from, the package of a script handed to a runtime, and the environment
// the command runs with.

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// launcher is what an npx-style launcher needs beyond its own install.
type launcher struct {
	// read are folders, relative to the home folder, it runs packages or
	// runtimes from; read-only.
	read []string
	// cacheEnv names the variable that moves its package cache. The shared
	// cache is not granted: npm and uv write to their cache even to run
	// what is in it, and a writable shared cache would let a confined
	// server plant code that unconfined programs run later. The cache is
	// moved into the private temp folder instead: the first start downloads
	// (the network is not confined), later starts reuse it.
	cacheEnv string
}

// launchers are the npx-style launchers, by name.
var launchers = map[string]launcher{
	"npx":  {cacheEnv: "npm_config_cache"},
	"npm":  {cacheEnv: "npm_config_cache"},
	"pnpm": {read: []string{".local/share/pnpm"}, cacheEnv: "npm_config_cache"},
	"bunx": {read: []string{".bun"}, cacheEnv: "BUN_INSTALL_CACHE_DIR"},
	"bun":  {read: []string{".bun"}, cacheEnv: "BUN_INSTALL_CACHE_DIR"},
	"uvx":  {read: []string{".local/share/uv"}, cacheEnv: "UV_CACHE_DIR"},
	"uv":   {read: []string{".local/share/uv"}, cacheEnv: "UV_CACHE_DIR"},
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
	for _, p := range []string{prog, resolved(prog)} {
		for _, rel := range runtimeManagers {
			if m := filepath.Join(home, rel); within(p, m) {
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
	for _, p := range []string{path, resolved(path)} {
		out = append(out, installFolder(p, home)...)
	}
	return out
}

func resolved(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return path
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
	for d, up := dir, 0; up <= 3 && strings.Count(d, sep) >= 2 && (home == "" || !within(home, d)); d, up = filepath.Dir(d), up+1 {
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
	if dir == "/" || dir == "." || (home != "" && within(home, dir)) {
		return []string{file}
	}
	return []string{dir}
}

// within reports whether path is dir or beneath it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
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
