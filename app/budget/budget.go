// Package budget keeps the state folder within a size on disk.
//
// What Rootkeeper writes itself is bounded where it is written: the state
// file (requests are capped per server), the audit log (the trail and the
// noise, each rotated; a server's noise budgeted) and each server's log
// (logs/NAME.log, rotated while it is written). One part is not: a confined server's private temp folder holds
// whatever that server puts there, and Landlock cannot cap sizes. It lives
// outside the state folder (so that the server's TMPDIR does not lead to
// it: app.ServerTemp) and is reached through the link
// STATE/tmp/server-NAME; a real folder there (the old layout) counts too.
// Check measures the whole state folder and the temp folders and, when
// they are over the budget, frees space in this order until it fits: the temp
// folders, largest first, are emptied (the folders stay, since a running
// server's ruleset names them); then old log generations (NAME.log.1, …)
// go, largest first. The state file, the audit log, the logs being
// written, the hosts' backups and the data folders (data/, and those of
// earlier programs kept aside in previous-data/: app.KeptData) are counted
// and never touched: they are the person's decisions, history, way back
// and data, which the person removes (servers data NAME remove).
package budget

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"rootkeeper/app"
)

// Defaults for Run.
const (
	// DefaultLimit is the state folder's budget: far above what
	// Rootkeeper's own bounded files take with dozens of servers, far
	// below what a runaway server can write.
	DefaultLimit = 512 << 20
	// DefaultEvery is how often Run measures the folder.
	DefaultEvery = time.Minute
)

// Report says what one Check found and did.
type Report struct {
	// Before and After are the folder's size on disk, in bytes, before
	// and after trimming.
	Before, After int64
	// Emptied lists the temp folders emptied (paths relative to the state
	// folder), Removed the old log generations deleted.
	Emptied, Removed []string
}

// Trimmed reports whether Check freed anything.
func (r Report) Trimmed() bool { return len(r.Emptied)+len(r.Removed) > 0 }

// String says what was done, for a notice.
func (r Report) String() string {
	s := fmt.Sprintf("the state folder took %s, over its budget", mib(r.Before))
	if len(r.Emptied) > 0 {
		s += fmt.Sprintf("; emptied the private temp folder of %d confined server(s) (%s)", len(r.Emptied), joinBase(r.Emptied))
	}
	if len(r.Removed) > 0 {
		s += fmt.Sprintf("; removed %d old server log(s)", len(r.Removed))
	}
	return s + fmt.Sprintf("; now %s", mib(r.After))
}

// oldLog matches a rotated generation of a server's log.
var oldLog = regexp.MustCompile(`\.log\.[0-9]+$`)

// part is something Check may free, with its size on disk.
type part struct {
	rel  string
	size int64
	// linked is the temp folder a link at rel leads to (outside the
	// state folder, so not in its usage), or "".
	linked string
}

// Check measures the state folder dir and, when it takes more than limit
// bytes on disk, frees what it may (see the package doc) until it fits or
// nothing is left to free.
func Check(dir string, limit int64) (Report, error) {
	var r Report
	total, err := usage(dir)
	if err != nil {
		return r, err
	}
	temps, logs, err := freeable(dir)
	if err != nil {
		return r, err
	}
	total += linkedUsage(temps)
	r.Before, r.After = total, total
	if total <= limit {
		return r, nil
	}
	for _, p := range temps {
		if r.After <= limit {
			break
		}
		folder := filepath.Join(dir, p.rel)
		if p.linked != "" {
			folder = p.linked
		}
		if err := empty(folder); err != nil {
			return r, err
		}
		r.Emptied = append(r.Emptied, p.rel)
		r.After -= p.size
	}
	for _, p := range logs {
		if r.After <= limit {
			break
		}
		if err := os.Remove(filepath.Join(dir, p.rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return r, err
		}
		r.Removed = append(r.Removed, p.rel)
		r.After -= p.size
	}
	// What the servers wrote meanwhile counts too: measure again.
	if after, err := usage(dir); err == nil {
		r.After = after + linkedUsage(temps)
	}
	return r, nil
}

// linkedUsage is the size on disk of the temp folders outside the state
// folder.
func linkedUsage(temps []part) int64 {
	var n int64
	for _, p := range temps {
		if p.linked != "" {
			size, _ := usage(p.linked)
			n += size
		}
	}
	return n
}

// freeable lists the temp folders (tmp/*) and old log generations
// (logs/*.log.N) of dir, each largest first.
func freeable(dir string) (temps, logs []part, err error) {
	entries, err := os.ReadDir(filepath.Join(dir, "tmp"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	for _, e := range entries {
		rel := filepath.Join("tmp", e.Name())
		var linked string
		if e.Type()&fs.ModeSymlink != 0 {
			// Followed only to a temp folder app.ServerTemp made: a link
			// to anywhere else is not.
			p, ok := app.ResolveServerTemp(filepath.Join(dir, rel))
			if !ok {
				continue
			}
			linked = p
		} else if !e.IsDir() {
			continue
		}
		size, err := usage(cmp.Or(linked, filepath.Join(dir, rel)))
		if err != nil {
			return nil, nil, err
		}
		temps = append(temps, part{rel, size, linked})
	}
	entries, err = os.ReadDir(filepath.Join(dir, "logs"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !oldLog.MatchString(e.Name()) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // rotated away meanwhile
		}
		logs = append(logs, part{rel: filepath.Join("logs", e.Name()), size: onDisk(info)})
	}
	bySize := func(a, b part) int { return cmp.Compare(b.size, a.size) }
	slices.SortStableFunc(temps, bySize)
	slices.SortStableFunc(logs, bySize)
	return temps, logs, nil
}

// usage is the size on disk of everything under path, symlinks not
// followed. Files that vanish while it walks are skipped.
func usage(path string) (int64, error) {
	var total int64
	err := filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		info, err := d.Info()
		if err != nil {
			return nil // gone meanwhile
		}
		total += onDisk(info)
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	return total, err
}

// empty removes everything inside folder and keeps the folder itself.
func empty(folder string) error {
	entries, err := os.ReadDir(folder)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	var first error
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(folder, e.Name())); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Options configure Run.
type Options struct {
	// Limit is the budget in bytes (DefaultLimit when <= 0).
	Limit int64
	// Every is how often the folder is measured (DefaultEvery when <= 0).
	Every time.Duration
	// OnTrim is called with each report that freed something, and with
	// the zero Report when the folder is back within its budget.
	OnTrim func(Report)
}

// Run checks dir at once and then every opts.Every until ctx ends. It
// returns an error only when the folder cannot be measured, for its
// supervisor to retry.
func Run(ctx context.Context, dir string, opts Options) error {
	if opts.Limit <= 0 {
		opts.Limit = DefaultLimit
	}
	if opts.Every <= 0 {
		opts.Every = DefaultEvery
	}
	t := time.NewTicker(opts.Every)
	defer t.Stop()
	trimmed := false
	for {
		r, err := Check(dir, opts.Limit)
		if err != nil {
			return fmt.Errorf("measuring the state folder: %w", err)
		}
		if opts.OnTrim != nil {
			switch {
			case r.Trimmed():
				opts.OnTrim(r)
				trimmed = true
			case trimmed && r.After <= opts.Limit:
				opts.OnTrim(Report{})
				trimmed = false
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func mib(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }

func joinBase(rels []string) string {
	names := make([]string, len(rels))
	for i, r := range rels {
		names[i] = filepath.Base(r)
	}
	return fmt.Sprint(names)
}
