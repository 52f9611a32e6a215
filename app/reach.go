package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"rootkeeper/app/words"
)

// FromReach is Request.From for a folder a confined server tried to reach
// past its ruleset (seen by the observer of mcp/confine): "fs tried to read
// ~/Documents/taxes/2025.pdf — allow ~/Documents/taxes?".
const FromReach = "reach"

// A Once is an "allow once" given to calls of a confined server that
// wait on a folder: the observer opens each answered call's path beneath
// the folder itself, with the call's own access, and hands the server the
// descriptor, without widening its ruleset. It is recorded in the state so
// that whichever process holds the calls (the app for a managed server, a
// bridge for a bridged one) learns of it, and dropped after OnceLasts.
type Once struct {
	Server string    `json:"server"`
	Path   string    `json:"path"`
	At     time.Time `json:"at"`
	// Calls are the IDs of the calls it answers (ReachCall.ID): the ones
	// the person was shown, and no other.
	Calls []string `json:"calls,omitempty"`
	// By is where it was given (dialog, command line).
	By Source `json:"by,omitempty"`
}

// neverAsked are the folders whose reach is never asked about: what
// runtimes and libraries probe (system folders, devices, kernel files).
var neverAsked = []string{
	"/proc", "/sys", "/dev", "/usr", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin",
	"/boot", "/run", "/var", "/snap", "/nix", "/opt",
}

// neverAskedHome are folders in the home folder that hold caches, package
// stores and runtimes, not a person's files.
var neverAskedHome = []string{
	".cache", ".npm", ".node-gyp", ".yarn", ".pnpm-store", ".local/share/pnpm", ".local/lib",
	".local/bin", ".local/share/uv", ".pyenv", ".nvm", ".volta", ".asdf", ".rbenv", ".nodenv",
	".goenv", ".sdkman", ".local/share/mise", ".local/share/fnm", ".fnm", ".bun", ".deno",
	".cargo", ".rustup", "go/pkg", ".m2", ".gradle",
	// what launchers and runtimes read for their own settings
	".config/git", ".config/npm", ".config/pip", ".config/uv", ".config/pnpm", ".config/yarn",
	".config/configstore",
}

// runtimeProbes are files that runtimes look for in every folder above
// the code they run (node reads each package.json up to /, for its module
// type): reading one is never asked about.
var runtimeProbes = []string{
	"package.json", "tsconfig.json", "jsconfig.json", ".npmrc", ".yarnrc", ".yarnrc.yml", "deno.json",
	"deno.jsonc", "pyvenv.cfg", "pyproject.toml", "setup.cfg", "go.mod", "go.work", ".python-version",
	".node-version", ".nvmrc", ".tool-versions",
}

// ReachContext is what ReachFolder needs besides the path.
type ReachContext struct {
	// Home is the person's home folder.
	Home string
	// Skip are more folders never asked about: the server's private temp
	// folder, Rootkeeper's state folder.
	Skip []string
	// Roots are the known roots (any server's, enabled or not): a path
	// inside one is asked about as that root.
	Roots []string
	// IsProject reports whether a folder is a project (holds .git or a
	// project marker); nil means none is.
	IsProject func(dir string) bool
}

// ReachFolder is the folder a person is asked about when a confined server
// tried path (op as in confine.Attempt: the Op… constants): the nearest
// enclosing project, else the enclosing root, else the path's own folder
// (the path itself for a list or a watch, which learn the names in it).
// ok is false for a path never asked about: in system folders, caches and
// runtimes, the private temp folder, beneath a node_modules folder, or
// when the folder would be / or the home folder (or above it) as a whole.
func ReachFolder(path, op string, c ReachContext) (folder string, ok bool) {
	path = filepath.Clean(path)
	if !filepath.IsAbs(path) || strings.Contains(path+"/", "/node_modules/") {
		return "", false
	}
	if op == OpRead && slices.Contains(runtimeProbes, filepath.Base(path)) {
		return "", false
	}
	skip := slices.Clone(neverAsked)
	if c.Home != "" {
		for _, h := range neverAskedHome {
			skip = append(skip, filepath.Join(c.Home, h))
		}
	}
	for _, d := range append(skip, c.Skip...) {
		if d != "" && (path == d || IsWithin(path, d)) {
			return "", false
		}
	}
	start := filepath.Dir(path)
	if op == OpList || op == OpWatch {
		start = path
	}
	top := func(d string) bool { return d == "/" || (c.Home != "" && (d == c.Home || IsWithin(c.Home, d))) }
	if top(start) || mountPoint(start) {
		return "", false
	}
	if c.IsProject != nil {
		for d := start; !top(d); d = filepath.Dir(d) {
			if c.IsProject(d) {
				return d, true
			}
		}
	}
	best := ""
	for _, r := range c.Roots {
		if (start == r || IsWithin(start, r)) && !top(r) && len(r) > len(best) {
			best = r
		}
	}
	if best != "" {
		return best, true
	}
	return start, true
}

// mountPoints are where removable media and other volumes are mounted:
// programs list them (and the per-user folder in them) to find volumes.
// Those folders themselves are never asked about; a volume's own folders,
// deeper, are.
var mountPoints = []string{"/mnt", "/media", "/run/media"}

// mountPoint reports whether dir is one of mountPoints or a per-user
// folder right in one (/media/USER, /run/media/USER).
func mountPoint(dir string) bool {
	for _, m := range mountPoints {
		if dir == m || (m != "/mnt" && filepath.Dir(dir) == m) {
			return true
		}
	}
	return false
}

// reachText is RequestText for a reach request.
func reachText(r Request, home string, name func(string) string) string {
	return words.SafeText(name(r.Server) + " tried to " + OpText(r.Op) + " " + words.HomeShort(r.Tried, home) + " — allow " + words.HomeShort(r.Path, home) + "?")
}

// A ReachLimiter decides which attempts of confined servers become
// requests: one per server and folder while it is open, and at most Burst
// new ones per server each Per (a server probing ten thousand paths raises
// a handful, never a storm). Its memory is one bucket per server.
type ReachLimiter struct {
	Burst int
	Per   time.Duration

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// NewReachLimiter allows 5 new requests a minute per server.
func NewReachLimiter() *ReachLimiter {
	return &ReachLimiter{Burst: 5, Per: time.Minute, buckets: map[string]*bucket{}}
}

// Allow reports whether server may raise one more request at now, and
// takes it.
func (l *ReachLimiter) Allow(server string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[server]
	if !ok {
		b = &bucket{tokens: float64(l.Burst), at: now}
		l.buckets[server] = b
	}
	b.tokens = min(float64(l.Burst), b.tokens+now.Sub(b.at).Seconds()*float64(l.Burst)/l.Per.Seconds())
	b.at = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// projectMarkers are the files (or folders) that make the folder holding
// them a project, for LooksLikeProject: .git and the commonest markers of
// detect's longer list (app does not import detect).
var projectMarkers = []string{
	".git", "go.mod", "package.json", "Cargo.toml", "pyproject.toml", "setup.py", "pom.xml",
	"build.gradle", "build.gradle.kts", "CMakeLists.txt", "Gemfile", "composer.json", "mix.exs",
	"deno.json", ".hg",
}

// LooksLikeProject reports whether dir holds .git or a project marker: a
// folder a person would recognise (ReachContext.IsProject).
func LooksLikeProject(dir string) bool {
	for _, m := range projectMarkers {
		if _, err := os.Lstat(filepath.Join(dir, m)); err == nil {
			return true
		}
	}
	return false
}
