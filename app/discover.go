package app

import "context"

// Candidate is a folder discovery found: a repository or a project. It is only
// a candidate: nothing is exposed until a person adds and shares it.
//
// detect.Candidate has the same fields, so main converts one to the other with
// a plain type conversion; keep the two in step.
type Candidate struct {
	Path      string   `json:"path"`              // absolute, as found (never through a symlinked directory)
	Kind      string   `json:"kind"`              // "repo" or "project"
	Markers   []string `json:"markers,omitempty"` // project marker files found
	Branch    string   `json:"branch,omitempty"`
	Remote    string   `json:"remote,omitempty"` // credentials stripped
	Repo      string   `json:"repo,omitempty"`   // enclosing repository's path, if any
	Worktree  bool     `json:"worktree,omitempty"`
	Submodule bool     `json:"submodule,omitempty"`
	Bare      bool     `json:"bare,omitempty"`
}

// ScanRequest says where and how deep to look. Zero values mean defaults.
type ScanRequest struct {
	Dirs  []string // search folders; empty means the default folders
	Depth int      // maximum depth below each folder; 0 means the default
	Skip  []string // extra folder names to skip
}

// ScanProgress is reported often enough to drive a progress bar.
type ScanProgress struct {
	Visited int    // folders read so far
	Found   int    // candidates so far
	Current string // the folder being read
}

// ScanSummary is what a finished scan reports.
type ScanSummary struct {
	Visited    int
	Found      int
	Unreadable []string // folders that could not be read (skipped)
}

// Scanner finds candidates. found and progress may be called from several
// goroutines at once; Scanner returns once every call has returned. It is
// provided by main from package detect.
type Scanner func(ctx context.Context, req ScanRequest, found func(Candidate), progress func(ScanProgress)) (ScanSummary, error)

// ServerController is what the running app can ask of the MCP side without
// knowing it: restart a server and read its recent stderr. mcp.Manager
// implements it; main hands it to the GUI.
type ServerController interface {
	Restart(name string)
	Log(name string) string
}
