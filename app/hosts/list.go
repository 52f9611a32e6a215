package hosts

// What the hosts' files hold: the files of each host (its own, a
// project's, a managed one), read and their MCP server entries listed,
// with what protect, restore and list are told (Options).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"rootkeeper/app"
)

// Options is what protect, restore and list need to know.
type Options struct {
	// World locates the hosts' files.
	World World
	// Store is Rootkeeper's state; servers are added to it.
	Store *app.Store
	// Executable is the absolute path of rootkeeper, symlinks resolved:
	// what the rewritten entries run.
	Executable string
	// StateDirArg, when not empty, is passed to the bridge as --state-dir
	// (when the state folder is not the default).
	StateDirArg string
	// Projects are project folders whose per-project files (.mcp.json,
	// .vscode/mcp.json…) are included.
	Projects []string
	// DryRun computes everything and writes nothing.
	DryRun bool
	// Keep (protect): the files stay protected; while the app runs, a
	// host writing its own entries back is protected again.
	Keep bool
	// Update, when set, applies a change to the state instead of Store's
	// Update: the running app passes its core's, so that what protect
	// stores is shown at once rather than when the file watcher sees it.
	Update func(func(*app.State) error) error
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Probe (protect), when set, asks a remote entry's server whether the
	// bridge can stand in for the host; a reason not to leaves the entry
	// to the host (ProbeOAuth: the server wants an OAuth sign-in).
	Probe func(ctx context.Context, srv app.Server) string
}

// update applies fn to Rootkeeper's state: through Options.Update when set
// (the running app's core, which publishes the change at once), else
// through the store.
func (o Options) update(fn func(*app.State) error) (app.State, error) {
	if o.Update != nil {
		return app.State{}, o.Update(fn)
	}
	return o.Store.Update(fn)
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// File is one config file of a host, as found.
type File struct {
	Host    string `json:"host"`
	Path    string `json:"path"`
	Format  Format `json:"format"`
	Project bool   `json:"project,omitempty"`
	// ProjectDir is the project of a project's file.
	ProjectDir string  `json:"projectDir,omitempty"`
	Err        string  `json:"error,omitempty"`
	Entries    []Entry `json:"servers"`
	// Protected counts entries that run the bridge.
	Protected int `json:"protected"`
	// Recorded: Rootkeeper protected this file and remembers how.
	Recorded bool `json:"recorded"`
	// Kept: the person asked that it stay protected (protect --keep, or
	// the Hosts tab's switch).
	Kept bool `json:"kept,omitempty"`
	// ChangedSinceProtect: the file changed since Rootkeeper last wrote it.
	ChangedSinceProtect bool `json:"changedSinceProtect"`

	// Refused says why the file is not read nor touched: it is not a
	// regular file, it is too large (readHostFile), or it is a project's
	// link to a file outside the project.
	Refused string `json:"refused,omitempty"`
	// Managed: the organisation put it in the system's place (Claude
	// Code's managed-mcp.json, managed-settings.json); its servers are
	// listed as managed and protect leaves the file be.
	Managed bool `json:"managed,omitempty"`
	// Rules are the host's own allow and deny lists of servers in a
	// managed file (Claude Code's allowedMcpServers, deniedMcpServers),
	// as the file writes them.
	Rules []string `json:"rules,omitempty"`

	data   []byte
	doc    doc
	parsed error
}

// Found is a host with the files of it that exist.
type Found struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Files []File `json:"files"`
	// Servers and Protected count the entries of all its files, Managed
	// those of its managed files.
	Servers   int `json:"servers"`
	Protected int `json:"protected"`
	Managed   int `json:"managed"`
}

// filesFor lists a host's files for o: user files and, for hosts that have
// them, the project files of o.Projects; globs are expanded to the files
// they match.
func (h *Host) filesFor(o Options) []fileRef {
	var out []fileRef
	seen := map[string]bool{}
	one := func(p, project string) {
		// A project that is the home folder holds user files too
		// (~/.codex/config.toml): each file is read once, as the host's.
		if p = filepath.Clean(p); !seen[p] {
			seen[p] = true
			out = append(out, fileRef{path: p, project: project})
		}
	}
	add := func(p, project string) {
		if !strings.ContainsAny(p, "*?[") {
			one(p, project)
			return
		}
		matches, _ := filepath.Glob(p)
		for _, m := range matches {
			one(m, project)
		}
	}
	for _, p := range h.files(o.World) {
		add(p, "")
	}
	if h.managed != nil {
		for _, p := range h.managed(o.World) {
			if !seen[filepath.Clean(p)] {
				seen[filepath.Clean(p)] = true
				out = append(out, fileRef{path: filepath.Clean(p), managed: true})
			}
		}
	}
	for _, dir := range o.Projects {
		for _, p := range h.ProjectFiles(dir) {
			add(p, dir)
		}
	}
	return out
}

// fileRef is a file to look at, and for a project's file the project.
type fileRef struct {
	path    string
	project string
	managed bool // the organisation's (Host.managed): listed, never written
}

// readFile reads and parses one file; ok is false when it does not exist.
func readFile(h *Host, ref fileRef) (File, bool, error) {
	path := ref.path
	outside := ""
	if real, err := filepath.EvalSymlinks(path); err == nil {
		// A dotfile manager's symlink stays a symlink: the file it
		// points to is what gets edited. But a project's file is the
		// project's: a link out of it (an untrusted repository pointing
		// at another host's user file) is never edited through.
		if ref.project != "" && real != path {
			dir, derr := filepath.EvalSymlinks(ref.project)
			if derr != nil || !app.IsWithin(real, dir) {
				outside = fmt.Sprintf("%s is a link to %s, outside the project: left as it is", path, real)
			}
		}
		path = real
	}
	if outside != "" {
		f := File{Host: h.ID, Path: ref.path, Format: h.formatOf(ref.path), Project: true, ProjectDir: ref.project, Err: outside, Refused: outside}
		return f, true, nil
	}
	f := File{Host: h.ID, Path: path, Format: h.formatOf(path), Project: ref.project != "", ProjectDir: ref.project, Managed: ref.managed}
	// Read through the host's own path, so that a refusal names it (and
	// where its links lead).
	data, err := readHostFile(ref.path, MaxFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return f, false, nil
	}
	if why, ok := isRefused(err); ok {
		f.Path, f.Err, f.Refused = ref.path, why, why
		return f, true, nil
	}
	if err != nil {
		return f, true, err
	}
	f.data = data
	d, err := parseDoc(h.formatOf(path), path, ref.project, data)
	if err != nil {
		f.parsed = err
		f.Err = err.Error()
		return f, true, nil
	}
	f.doc = d
	f.Entries = entriesOf(h, d)
	if ref.managed {
		f.Rules = managedRules(d)
	}
	for _, e := range f.Entries {
		if e.Protected {
			f.Protected++
		}
	}
	return f, true, nil
}

func entriesOf(h *Host, d doc) []Entry {
	var out []Entry
	for _, t := range h.servers(d) {
		for _, name := range d.keys(t.key) {
			out = append(out, readEntry(h, d, t, name))
		}
	}
	return out
}

// List finds every host that has a config file here, with its servers and
// what Rootkeeper protected.
func List(o Options) ([]Found, error) {
	rec, err := loadRecord(o.Store.Dir())
	if err != nil {
		return nil, err
	}
	var out []Found
	for _, h := range Hosts {
		fd := Found{ID: h.ID, Name: h.Name}
		for _, ref := range h.filesFor(o) {
			f, ok, err := readFile(h, ref)
			if err != nil {
				f.Err = err.Error()
			} else if !ok {
				continue
			}
			if r, ok := rec.file(f.Path); ok {
				f.Recorded = true
				f.Kept = r.Keep
				f.ChangedSinceProtect = hashOf(f.data) != r.After
			}
			fd.Servers += len(f.Entries)
			fd.Protected += f.Protected
			if f.Managed {
				fd.Managed += len(f.Entries)
			}
			fd.Files = append(fd.Files, f)
		}
		if len(fd.Files) > 0 {
			out = append(out, fd)
		}
	}
	return out, nil
}
