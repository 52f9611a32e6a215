package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"rootkeeper/app"
	"rootkeeper/app/words"
)

// scanLine is one candidate as `scan --json` prints it.
type scanLine struct {
	app.Candidate
	URI string `json:"uri"`
}

func (c *command) scan(args []string) error {
	f := newFlags("scan")
	asJSON := f.Bool("json")
	depth := f.Int("depth", 0)
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if c.ext.Scan == nil {
		return errors.New("this build cannot scan")
	}
	dirs := make([]string, 0, len(pos))
	for _, d := range pos {
		if !filepath.IsAbs(d) {
			d = filepath.Join(c.env.Cwd, d)
		}
		d = filepath.Clean(d)
		fi, err := os.Stat(d)
		if err != nil {
			return &app.InputError{Msg: fmt.Sprintf("cannot scan %q: %v", d, errText(err))}
		}
		if !fi.IsDir() {
			return &app.InputError{Msg: fmt.Sprintf("cannot scan %q: not a folder", d)}
		}
		if err := listable(d); err != nil {
			return &app.InputError{Msg: fmt.Sprintf("cannot scan %q: %v", d, errText(err))}
		}
		dirs = append(dirs, d)
	}
	if len(dirs) == 0 {
		st, err := c.store.Load()
		if err != nil {
			return err
		}
		dirs = st.SearchFolders
		if len(dirs) == 0 && c.ext.DefaultSearchFolders != nil {
			dirs = c.ext.DefaultSearchFolders(c.env.Home)
		}
		if len(dirs) == 0 {
			return &app.InputError{Msg: "no folders to scan: name one, e.g. `rootkeeper scan ~/src`"}
		}
	}
	var mu sync.Mutex
	enc := newLineEncoder(c.env.Stdout)
	found := func(cand app.Candidate) {
		mu.Lock()
		defer mu.Unlock()
		if *asJSON {
			enc.encode(scanLine{Candidate: cand, URI: app.URIFromPath(cand.Path)})
			return
		}
		extra := cand.Branch
		if cand.Kind != "repo" && len(cand.Markers) > 0 {
			extra = cand.Markers[0]
		}
		fmt.Fprintf(enc.w, "%-7s %s  %s\n", cand.Kind, words.SafeText(cand.Path), words.SafeText(extra))
	}
	sum, err := c.ext.Scan(c.ctx, app.ScanRequest{Dirs: dirs, Depth: *depth}, found, func(app.ScanProgress) {})
	enc.flush()
	if err != nil {
		return err
	}
	fmt.Fprintf(c.env.Stderr, "scanned %d folders, found %d candidates", sum.Visited, sum.Found)
	if n := len(sum.Unreadable); n > 0 {
		fmt.Fprintf(c.env.Stderr, ", %d unreadable folders skipped (first: %s)", n, words.SafeText(sum.Unreadable[0]))
	}
	fmt.Fprintln(c.env.Stderr)
	return nil
}

// listable opens a folder and reads one entry: what the scanner will need.
func listable(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.ReadDir(1); err != nil && err != io.EOF {
		return err
	}
	return nil
}
