package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// FromReach is Request.From for a folder a confined server tried to reach
// past its ruleset (seen by the observer of mcp/confine): "fs tried to read
// ~/Documents/taxes/2025.pdf — allow ~/Documents/taxes?".
const FromReach = "reach"

// A Once is an "allow once" given to the attempts of a confined server
// that wait on a folder: the observer opens each waiting path beneath the
// folder itself and hands the server the descriptor, without widening its
// ruleset. It is recorded in the state so that whichever process holds the
// attempts (the app for a managed server, a bridge for a bridged one)
// learns of it; it counts for the attempts made before At, and is dropped
// after OnceLasts.
type Once struct {
	Server string    `json:"server"`
	Path   string    `json:"path"`
	At     time.Time `json:"at"`
	// By is where it was given (dialog, command line).
	By Source `json:"by,omitempty"`
}

// OnceLasts is how long a Once is kept: longer than any attempt waits
// (ReachWait).
const OnceLasts = 2 * time.Minute

// ReachWait is how long a confined server's call waits while the person
// is asked about the folder it tried; then it fails as it would have.
const ReachWait = 30 * time.Second

// GrantOnce answers the open reach request of server for path with allow
// once: the attempts waiting on the folder get it, nothing is widened, and
// the next attempt asks again. The request is dropped.
func (s *State) GrantOnce(server, path string, by Source, at time.Time) error {
	r, ok := s.Request(server, path)
	if !ok || r.From != FromReach {
		return inputErrorf("%s has no attempt waiting on %q (allow once answers a folder a confined server tried to reach)", server, path)
	}
	s.dropRequest(server, path)
	s.Once = slices.DeleteFunc(s.Once, func(o Once) bool { return at.Sub(o.At) > OnceLasts })
	s.Once = append(s.Once, Once{Server: server, Path: path, At: at, By: by})
	if len(s.Once) > MaxRequestsPerServer {
		s.Once = s.Once[len(s.Once)-MaxRequestsPerServer:]
	}
	return nil
}

// OnceAfter reports whether server was allowed folder once at since or
// later.
func (s *State) OnceAfter(server, folder string, since time.Time) bool {
	_, ok := s.OnceSince(server, folder, since)
	return ok
}

// OnceSince is the allow once of server for folder given at since or
// later, if any.
func (s *State) OnceSince(server, folder string, since time.Time) (Once, bool) {
	for i := len(s.Once) - 1; i >= 0; i-- {
		if o := s.Once[i]; o.Server == server && o.Path == folder && !o.At.Before(since) {
			return o, true
		}
	}
	return Once{}, false
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
// tried path (op as in confine.Attempt: read, list, write, create, rename,
// execute): the nearest enclosing project, else the enclosing root, else
// the path's own folder (the path itself for a list). ok is false for a
// path never asked about: in system folders, caches and runtimes, the
// private temp folder, beneath a node_modules folder, or when the folder
// would be / or the home folder (or above it) as a whole.
func ReachFolder(path, op string, c ReachContext) (folder string, ok bool) {
	path = filepath.Clean(path)
	if !filepath.IsAbs(path) || strings.Contains(path+"/", "/node_modules/") {
		return "", false
	}
	if op == "read" && slices.Contains(runtimeProbes, filepath.Base(path)) {
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
	if op == "list" {
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
	op := r.Op
	if op == "" {
		op = "reach"
	}
	return SafeText(name(r.Server) + " tried to " + op + " " + HomeShort(r.Tried, home) + " — allow " + HomeShort(r.Path, home) + "?")
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

// AddReachRequest records that server tried path (op) and that folder is
// what the person is asked about. Like AddRequest it records nothing for
// a decided folder or one the server is allowed.
func (s *State) AddReachRequest(server, folder, path, op string, at time.Time) (bool, error) {
	changed, err := s.AddRequest(server, folder, FromReach, at)
	if err != nil || !changed {
		return changed, err
	}
	if i := slices.IndexFunc(s.Requests, func(r Request) bool { return r.Server == server && r.Path == folder }); i >= 0 {
		s.Requests[i].Tried, s.Requests[i].Op = path, op
	}
	return true, nil
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
