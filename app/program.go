package app

import (
	"path"
	"path/filepath"
	"strings"

	"rootkeeper/app/secrets/spot"
)

// ProgramID is the program a server runs, as its data folder knows it: a
// confined server's data folder (STATE/data/NAME) belongs to this program,
// and a server whose command comes to run another one starts with an empty
// folder while the old one is kept aside (PutServer, KeptData).
//
// It is read from the command line alone, without the disk, as a person
// would read it:
//
//   - A launcher that fetches a package or an image counts by the package
//     or image it names, without its version: npx, bunx, pnpx, npm exec,
//     pnpm dlx, yarn dlx and bun x by the npm package ("npm
//     @modelcontextprotocol/server-memory"), uvx, uv tool run and pipx run
//     by the Python package ("pypi mcp-server-git", named as PyPI
//     normalises it), docker, podman and nerdctl run by the image
//     ("image mcp/github"). The same package through another launcher of
//     the same registry (npx or bunx) is the same program.
//   - A runtime started on a script (node, python, deno, bun, ruby, perl,
//     php, tsx, java -jar) counts by the script, made absolute against the
//     server's working folder ("script /opt/srv/dist/index.js"); a script
//     inside node_modules/PKG counts as that package; python -m by the
//     module.
//   - Anything else counts by its command as written ("command
//     /usr/local/bin/mcp-server-x"), and env, cmd /c and pnpm exec by the
//     command they run.
//
// Why this much and no more: what a data folder holds is what a program
// wrote in its own format — a memory graph, settings, tokens — so it
// belongs to whoever wrote it. A new version of the same package reads
// its predecessor's data (updating must not lose the graph), and a folder
// or a flag given to the program on its command line (another project,
// --read-only) is configuration of the same program, so neither changes
// it; decisions are another matter, bound to the whole command
// (SameProgram). What the package or script is does change it: another
// package under the same name is another author's code, which must not
// inherit tokens it never wrote. Where the command line cannot be read
// (a runtime with no script, a launcher with no package), the whole
// command line counts, secrets hidden (spot): strict rather than lenient.
// Flags a table here does not know are taken to have no value, except for
// docker-style launchers, whose unknown flags take one.
//
// A remote server runs nothing here and has no data folder: its ProgramID
// is "".
func ProgramID(srv Server) string {
	if srv.Type != TransportStdio {
		return ""
	}
	return commandID(srv.Command, spot.ShowArgs(srv.Name, srv.Args), srv.Cwd, 0)
}

// maxWrappers bounds how many wrappers (env, cmd /c) are looked through.
const maxWrappers = 4

// commandID is ProgramID for command and args run in cwd; depth counts the
// wrappers already looked through.
func commandID(command string, args []string, cwd string, depth int) string {
	strict := "runs " + strings.Join(append([]string{command}, args...), " ")
	name := exeName(command)
	if depth > maxWrappers {
		return strict
	}
	sub := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	switch {
	case name == "env":
		i := 0
		for i < len(args) && (strings.HasPrefix(args[i], "-") || strings.Contains(args[i], "=")) {
			if args[i] == "-u" || args[i] == "--unset" || args[i] == "-C" || args[i] == "--chdir" {
				i++
			}
			i++
		}
		if i < len(args) {
			return commandID(args[i], args[i+1:], cwd, depth+1)
		}
	case name == "cmd" && strings.EqualFold(sub(0), "/c") && len(args) > 1:
		return commandID(args[1], args[2:], cwd, depth+1)
	case name == "pnpm" && sub(0) == "exec" && len(args) > 1:
		return commandID(args[1], args[2:], cwd, depth+1)
	case name == "npx" || name == "bunx" || name == "pnpx":
		if p := npmPackage(args); p != "" {
			return "npm " + p
		}
	case (name == "npm" && (sub(0) == "exec" || sub(0) == "x")) || (name == "pnpm" && sub(0) == "dlx") ||
		(name == "yarn" && sub(0) == "dlx") || (name == "bun" && sub(0) == "x"):
		if p := npmPackage(args[1:]); p != "" {
			return "npm " + p
		}
	case name == "uvx":
		if p := pythonPackage(args); p != "" {
			return "pypi " + p
		}
	case name == "uv":
		if id := uvID(args, cwd); id != "" {
			return id
		}
	case name == "pipx" && sub(0) == "run":
		if p := pythonPackage(args[1:]); p != "" {
			return "pypi " + p
		}
	case name == "docker" || name == "podman" || name == "nerdctl":
		if img := containerImage(args); img != "" {
			return "image " + img
		}
	case isRuntime(name):
		if id := scriptID(name, args, cwd); id != "" {
			return id
		}
	default:
		return "command " + commandPath(command, cwd)
	}
	return strict
}

// exeName is a command's file name, lower case, without the extension
// Windows runs it by (npx.cmd is npx).
func exeName(command string) string {
	name := strings.ToLower(command[strings.LastIndexAny(command, `/\`)+1:])
	for _, ext := range []string{".exe", ".cmd", ".bat", ".ps1"} {
		if n, ok := strings.CutSuffix(name, ext); ok && n != "" {
			return n
		}
	}
	return name
}

// commandPath is command as written, cleaned; a relative path with a
// folder in it is made absolute against cwd (a bare name is found on
// PATH, and stays a name).
func commandPath(command, cwd string) string {
	if !strings.ContainsAny(command, `/\`) {
		return command
	}
	if !filepath.IsAbs(command) && cwd != "" {
		return filepath.Join(cwd, command)
	}
	return filepath.Clean(command)
}

// flagTable says which flags of a command line take the next argument as
// their value (unless written --flag=value).
type flagTable struct {
	// value are the flags that take one; bools those that take none.
	value, bools []string
	// unknownTakesValue: a flag in neither list takes one (docker run's
	// flags mostly do); otherwise it takes none.
	unknownTakesValue bool
}

func (t flagTable) takesValue(flag string) bool {
	if strings.Contains(flag, "=") {
		return false
	}
	for _, f := range t.value {
		if f == flag {
			return true
		}
	}
	if !t.unknownTakesValue {
		return false
	}
	for _, f := range t.bools {
		if f == flag {
			return false
		}
	}
	// A cluster of short boolean flags (-it, -dit).
	if len(flag) > 2 && flag[1] != '-' {
		for _, c := range flag[1:] {
			if !strings.ContainsRune("ditPq", c) {
				return true
			}
		}
		return false
	}
	return true
}

// scanFlags reads args as flags then positionals: it returns the value of
// each flag of want it met (the last one wins; "--f=v" or "--f v") and
// the index of the first positional argument (len(args) when none).
func scanFlags(args []string, t flagTable, want ...string) (map[string]string, int) {
	got := map[string]string{}
	i := 0
	for i < len(args) {
		a := args[i]
		if a == "--" {
			return got, i + 1
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			return got, i
		}
		name, val, eq := strings.Cut(a, "=")
		if !eq && t.takesValue(a) {
			if i+1 < len(args) {
				val = args[i+1]
			}
			i++
		}
		for _, w := range want {
			if name == w {
				got[w] = val
			}
		}
		i++
	}
	return got, i
}

var npxFlags = flagTable{value: []string{"-p", "--package", "-c", "--call", "--registry", "--cache", "--userconfig", "-w", "--workspace"}}

// npmPackage is the npm package an npx-style command line runs, without
// its version: --package's value, else its first positional argument.
func npmPackage(args []string) string {
	got, i := scanFlags(args, npxFlags, "-p", "--package")
	spec := got["--package"]
	if spec == "" {
		spec = got["-p"]
	}
	if spec == "" && i < len(args) {
		spec = args[i]
	}
	if spec == "" {
		return ""
	}
	if name, ok := strings.CutPrefix(spec, "npm:"); ok {
		spec = name
	}
	if strings.Contains(spec, "://") || strings.HasPrefix(spec, "github:") || strings.HasPrefix(spec, "git+") {
		spec, _, _ = strings.Cut(spec, "#")
		return spec
	}
	return packageName(spec)
}

var pyFlags = flagTable{value: []string{"--from", "--spec", "--with", "-w", "--with-editable", "--with-requirements",
	"--python", "-p", "--index", "--index-url", "-i", "--extra-index-url", "--default-index", "--find-links", "-f",
	"--constraints", "-c", "--overrides", "--directory", "--project", "--cache-dir", "--config-file", "--pip-args"}}

// pythonPackage is the Python package a uvx-style command line runs:
// --from's (or pipx's --spec's) value, else its first positional argument,
// named as PyPI normalises names, without version or extras.
func pythonPackage(args []string) string {
	got, i := scanFlags(args, pyFlags, "--from", "--spec")
	spec := got["--from"]
	if spec == "" {
		spec = got["--spec"]
	}
	if spec == "" && i < len(args) {
		spec = args[i]
	}
	return pythonName(spec)
}

// pythonName is a requirement's project name (PEP 508), normalised (PEP
// 503: lower case, runs of -_. as -); for a URL, the URL without its
// fragment and the ref after its last @.
func pythonName(spec string) string {
	if spec == "" {
		return ""
	}
	if strings.Contains(spec, "://") && !strings.Contains(spec, " @ ") {
		spec, _, _ = strings.Cut(spec, "#")
		if at := strings.LastIndex(spec, "@"); at > strings.LastIndex(spec, "/") {
			spec = spec[:at]
		}
		return spec
	}
	if i := strings.IndexAny(spec, "=<>!~;[@ (,"); i >= 0 {
		spec = spec[:i]
	}
	var b strings.Builder
	sep := false
	for _, c := range strings.ToLower(spec) {
		if c == '-' || c == '_' || c == '.' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('-')
		}
		sep = false
		b.WriteRune(c)
	}
	return b.String()
}

var uvGlobal = flagTable{value: []string{"--directory", "--project", "--cache-dir", "--config-file", "--python", "-p", "--color"}}

// uvID is ProgramID for uv: `uv tool run` as uvx; `uv run` by the script
// or command it runs (a script made absolute against --directory, else
// cwd).
func uvID(args []string, cwd string) string {
	got, i := scanFlags(args, uvGlobal, "--directory")
	if dir := got["--directory"]; dir != "" {
		if !filepath.IsAbs(dir) && cwd != "" {
			dir = filepath.Join(cwd, dir)
		}
		cwd = dir
	}
	rest := args[i:]
	switch {
	case len(rest) > 1 && rest[0] == "tool" && rest[1] == "run":
		if p := pythonPackage(rest[2:]); p != "" {
			return "pypi " + p
		}
	case len(rest) > 0 && rest[0] == "run":
		got, j := scanFlags(rest[1:], pyFlags, "--directory")
		if dir := got["--directory"]; dir != "" {
			if !filepath.IsAbs(dir) && cwd != "" {
				dir = filepath.Join(cwd, dir)
			}
			cwd = dir
		}
		if j+1 < len(rest) {
			target := rest[1+j]
			if strings.HasSuffix(target, ".py") {
				return "script " + scriptPath(target, cwd)
			}
			return commandID(target, rest[2+j:], cwd, maxWrappers)
		}
	}
	return ""
}

var dockerGlobal = flagTable{value: []string{"--context", "-c", "--host", "-H", "--config", "--log-level", "-l", "--tlscacert", "--tlscert", "--tlskey"}}

var dockerRun = flagTable{unknownTakesValue: true, bools: []string{"-d", "--detach", "-i", "--interactive", "-t", "--tty", "--rm",
	"--init", "--privileged", "-P", "--publish-all", "--read-only", "--no-healthcheck", "--oom-kill-disable", "-q", "--quiet",
	"--disable-content-trust", "--sig-proxy", "--help", "--replace", "--tls-verify"}}

// containerImage is the image a docker-style `run` starts, without tag or
// digest, Docker Hub's implicit docker.io/ and library/ taken off.
func containerImage(args []string) string {
	_, i := scanFlags(args, dockerGlobal)
	rest := args[i:]
	switch {
	case len(rest) > 0 && rest[0] == "run":
		rest = rest[1:]
	case len(rest) > 1 && rest[0] == "container" && rest[1] == "run":
		rest = rest[2:]
	default:
		return ""
	}
	_, j := scanFlags(rest, dockerRun)
	if j >= len(rest) {
		return ""
	}
	img := rest[j]
	img, _, _ = strings.Cut(img, "@")
	if colon := strings.LastIndex(img, ":"); colon > strings.LastIndex(img, "/") {
		img = img[:colon]
	}
	img = strings.TrimPrefix(img, "docker.io/")
	img = strings.TrimPrefix(img, "index.docker.io/")
	img = strings.TrimPrefix(img, "library/")
	return strings.ToLower(img)
}

// runtimes are the interpreters that run a script named on their command
// line.
var runtimes = []string{"node", "nodejs", "deno", "bun", "python", "python3", "python2", "py", "pypy", "pypy3",
	"ruby", "perl", "php", "tsx", "ts-node", "java"}

func isRuntime(name string) bool {
	for _, r := range runtimes {
		if name == r {
			return true
		}
	}
	// python3.12 and the like.
	if v, ok := strings.CutPrefix(name, "python"); ok {
		return strings.Trim(v, "0123456789.") == "" && v != ""
	}
	return false
}

var runtimeFlags = flagTable{value: []string{
	// node
	"-r", "--require", "--import", "--loader", "--experimental-loader", "--env-file", "-C", "--conditions", "--title", "--input-type",
	// python
	"-W", "-X", "-m", "-c",
	// java
	"-cp", "-classpath", "--class-path", "-jar", "--module-path",
	// node, deno, ruby, perl, php: code given inline
	"-e", "--eval", "--print",
	// ruby, perl
	"-I",
}}

// scriptID is ProgramID for runtime name run on args: by its script, or
// python's -m module, java's -jar; "" when none is named (inline code).
func scriptID(name string, args []string, cwd string) string {
	if (name == "deno" || name == "bun") && len(args) > 0 && args[0] == "run" {
		args = args[1:]
	}
	got, i := scanFlags(args, runtimeFlags, "-m", "-jar", "-e", "--eval", "--print", "-c")
	if strings.HasPrefix(name, "py") || strings.HasPrefix(name, "python") {
		if m := got["-m"]; m != "" {
			return "python module " + m
		}
	}
	if jar := got["-jar"]; jar != "" {
		return "script " + scriptPath(jar, cwd)
	}
	if got["-e"] != "" || got["--eval"] != "" || got["--print"] != "" || got["-c"] != "" {
		return ""
	}
	if i >= len(args) {
		return ""
	}
	script := args[i]
	switch {
	case strings.HasPrefix(script, "npm:"):
		return "npm " + packageName(strings.TrimPrefix(script, "npm:"))
	case strings.HasPrefix(script, "jsr:"):
		return "jsr " + packageName(strings.TrimPrefix(script, "jsr:"))
	case strings.Contains(script, "://"):
		return "script " + script
	}
	p := scriptPath(script, cwd)
	if pkg, ok := nodePackageOf(p); ok {
		return "npm " + pkg
	}
	return "script " + p
}

// scriptPath is a script's path, absolute against cwd when relative and
// cwd is known.
func scriptPath(script, cwd string) string {
	if !filepath.IsAbs(script) && cwd != "" {
		return filepath.Join(cwd, script)
	}
	return filepath.Clean(script)
}

// nodePackageOf is the package a path inside node_modules belongs to (the
// innermost): …/node_modules/@a/b/dist/x.js is @a/b.
func nodePackageOf(p string) (string, bool) {
	p = filepath.ToSlash(p)
	i := strings.LastIndex(p, "/node_modules/")
	if i < 0 {
		return "", false
	}
	parts := strings.Split(p[i+len("/node_modules/"):], "/")
	if len(parts) < 2 || parts[0] == "" || parts[0] == ".bin" {
		return "", false
	}
	if strings.HasPrefix(parts[0], "@") {
		if len(parts) < 3 {
			return "", false
		}
		return path.Join(parts[0], parts[1]), true
	}
	return parts[0], true
}
