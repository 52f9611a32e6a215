package hosts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"rootkeeper/app"
)

// NoticePrefix starts the notice topic of each protected file the watcher
// speaks about ("hosts:" + path).
const NoticePrefix = "hosts:"

// WatchOptions is what Watch needs besides the protect options.
type WatchOptions struct {
	Options
	// Notify shows (msg != "") or clears (msg == "") the notice of a
	// topic: in the window and in `status` (app.Core.SetNotice).
	Notify func(topic, msg string)
	// Debounce is how long a file must stay quiet before it is looked at
	// (a host writes its file in bursts); 100 ms when zero.
	Debounce time.Duration
	// Log receives what the watcher did, for the app's log; may be nil.
	Log func(msg string)
	// MaxReprotects is how often a kept file is protected again within a
	// minute before the watcher gives up on it; maxReprotects when zero.
	MaxReprotects int
}

// maxReprotects bounds how often a kept file is protected again in
// reprotectWindow: a host that writes its own copy back each time is told
// about, not fought with.
const (
	maxReprotects   = 5
	reprotectWindow = time.Minute
)

// Watch watches every file Rootkeeper protected (and the record of them,
// so files protected later join) until ctx ends. When an entry no longer
// runs the bridge, or a server Rootkeeper did not protect appears in such
// a file, it says so through Notify; for a file whose host is kept
// (`hosts protect HOST --keep`) it protects the file again, after backing
// it up, and says that.
func Watch(ctx context.Context, o WatchOptions) error {
	if o.Debounce <= 0 {
		o.Debounce = 100 * time.Millisecond
	}
	if o.MaxReprotects <= 0 {
		o.MaxReprotects = maxReprotects
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	ws, err := startWatching(o, w)
	if err != nil {
		return err
	}
	dir, record := hostsDir(o.Store.Dir()), recordPath(o.Store.Dir())
	quiet := newDebouncer(o.Debounce)
	defer quiet.stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err, ok := <-w.Errors:
			if !ok {
				return errors.New("the hosts' file watcher stopped")
			}
			return fmt.Errorf("watching the hosts' files: %w", err)
		case ev, ok := <-w.Events:
			if !ok {
				return errors.New("the hosts' file watcher stopped")
			}
			name := filepath.Clean(ev.Name)
			if name == dir && ev.Has(fsnotify.Create) {
				// The first protect made STATE/hosts: watch it, and
				// read the record it made.
				if err := w.Add(dir); err != nil {
					return err
				}
				name = record
			}
			if name == record || ws.files[name] {
				quiet.touch(ctx, name)
			}
		case name := <-quiet.fire:
			quiet.fired(name)
			if name == record {
				ws.reload()
				continue
			}
			ws.check(name)
		}
	}
}

// startWatching puts w's watches in place and looks once at every
// protected file: a host may have written its file back while the app was
// not running. (The watches are in place first: what a host writes from
// then on is seen.) The record lives in STATE/hosts, made by the first
// protect: the state folder is watched for it to appear.
func startWatching(o WatchOptions, w *fsnotify.Watcher) (*watchState, error) {
	dir := hostsDir(o.Store.Dir())
	if err := w.Add(o.Store.Dir()); err != nil {
		return nil, err
	}
	if err := w.Add(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	ws := &watchState{o: o, w: w, dirs: map[string]bool{}, files: map[string]bool{}, notices: map[string]bool{}, told: map[string]bool{},
		reprotects: map[string][]time.Time{}}
	ws.reload()
	for f := range ws.files {
		ws.check(f)
	}
	ws.log("watching %d protected host files", len(ws.files))
	return ws, nil
}

// debouncer turns a burst of writes to one file into one look at it (a
// host writes its file in bursts): the file's name reaches fire once it
// has been quiet for wait since its last write.
type debouncer struct {
	wait   time.Duration
	fire   chan string
	mu     sync.Mutex
	timers map[string]*time.Timer // the files waiting to be quiet
}

func newDebouncer(wait time.Duration) *debouncer {
	return &debouncer{wait: wait, fire: make(chan string, 64), timers: map[string]*time.Timer{}}
}

// touch says name was written: it reaches fire wait from now, unless
// touched again meanwhile or ctx ends.
func (q *debouncer) touch(ctx context.Context, name string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if t, ok := q.timers[name]; ok {
		t.Reset(q.wait)
		return
	}
	q.timers[name] = time.AfterFunc(q.wait, func() {
		select {
		case q.fire <- name:
		case <-ctx.Done():
		}
	})
}

// fired forgets the timer of name, received from fire: its next write
// starts a new wait.
func (q *debouncer) fired(name string) {
	q.mu.Lock()
	delete(q.timers, name)
	q.mu.Unlock()
}

// stop stops the timers still waiting.
func (q *debouncer) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, t := range q.timers {
		t.Stop()
	}
}

type watchState struct {
	o       WatchOptions
	w       *fsnotify.Watcher
	dirs    map[string]bool // folders watched (a file's folder sees it replaced)
	files   map[string]bool // protected files
	notices map[string]bool // topics shown
	// told are files protected again: their notice stays (the person is
	// told) until the next change of theirs or their restore.
	told       map[string]bool
	reprotects map[string][]time.Time
}

func (ws *watchState) log(format string, args ...any) {
	if ws.o.Log != nil {
		ws.o.Log(fmt.Sprintf(format, args...))
	}
}

// reload reads the record again: files protected since are watched, files
// restored since are forgotten and their notices cleared.
func (ws *watchState) reload() {
	rec, err := loadRecord(ws.o.Store.Dir())
	if err != nil {
		ws.log("reading the record of protected files: %v", err)
		return
	}
	now := map[string]bool{}
	for _, fr := range rec.Files {
		now[fr.Path] = true
		if ws.files[fr.Path] {
			continue
		}
		dir := filepath.Dir(fr.Path)
		if !ws.dirs[dir] {
			if err := ws.w.Add(dir); err != nil {
				ws.log("cannot watch %s: %v", dir, err)
				continue
			}
			ws.dirs[dir] = true
		}
		ws.files[fr.Path] = true
		ws.check(fr.Path)
	}
	for f := range ws.files {
		if !now[f] {
			delete(ws.files, f)
			delete(ws.told, f)
			ws.notify(f, "")
		}
	}
}

func (ws *watchState) notify(file, msg string) {
	topic := NoticePrefix + file
	if msg == "" && !ws.notices[topic] {
		return
	}
	ws.notices[topic] = msg != ""
	if ws.o.Notify != nil {
		ws.o.Notify(topic, msg)
	}
}

// Drift is what changed in a protected file since Rootkeeper protected it.
type Drift struct {
	// Unbridged are recorded entries that no longer run the bridge.
	Unbridged []Entry
	// New are entries Rootkeeper did not protect that a host added (and
	// it could).
	New []Entry
}

func (d Drift) empty() bool { return len(d.Unbridged) == 0 && len(d.New) == 0 }

// driftOf compares a protected file with its record.
func driftOf(h *Host, fr fileRecord, f File) Drift {
	var out Drift
	recorded := map[string]entryRecord{}
	for _, er := range fr.Entries {
		recorded[strings.Join(er.Key, "\x00")] = er
	}
	for _, e := range f.Entries {
		er, had := recorded[strings.Join(e.Key, "\x00")]
		switch {
		case had && !(e.Protected && e.Rootkeeper == er.Name && e.Server.Command == er.Command):
			// Told even when it can no longer be bridged: it runs
			// without Rootkeeper all the same.
			if !e.Protected {
				out.Unbridged = append(out.Unbridged, e)
			}
		case !had && !e.Protected && e.Skip == "":
			out.New = append(out.New, e)
		}
	}
	return out
}

// check looks at one protected file: says what drifted, and protects a
// kept file again.
func (ws *watchState) check(path string) {
	rec, err := loadRecord(ws.o.Store.Dir())
	if err != nil {
		return
	}
	fr, ok := rec.file(path)
	if !ok {
		return
	}
	h, ok := Lookup(fr.Host)
	if !ok {
		return
	}
	ref := fileRef{path: path, project: fr.Project}
	f, found, err := readFile(h, ref)
	switch {
	case err != nil:
		ws.notify(path, fmt.Sprintf("%s: cannot read %s: %v", h.Name, path, err))
		return
	case !found:
		ws.notify(path, "")
		return
	case f.Refused != "":
		ws.notify(path, fmt.Sprintf("%s: %s", h.Name, f.Refused))
		return
	case f.parsed != nil:
		ws.notify(path, fmt.Sprintf("%s's %s no longer parses; Rootkeeper leaves it alone", h.Name, path))
		return
	}
	drift := driftOf(h, *fr, f)
	if drift.empty() {
		if !ws.told[path] {
			ws.notify(path, "")
		}
		return
	}
	ws.told[path] = false
	what := describeDrift(h, drift, ws.o.World.Home)
	var cannot []string
	protectable := len(drift.New)
	for _, e := range drift.Unbridged {
		if e.Skip != "" {
			cannot = append(cannot, e.Name+": "+e.Skip)
		} else {
			protectable++
		}
	}
	if protectable == 0 {
		ws.notify(path, fmt.Sprintf("%s; it cannot be put behind the bridge (%s)", what, strings.Join(cannot, "; ")))
		return
	}
	if !fr.Keep || ws.o.DryRun {
		ws.notify(path, what+" (hosts protect "+h.ID+" puts it back behind Rootkeeper)")
		return
	}
	now := ws.o.now()
	recent := slices.DeleteFunc(ws.reprotects[path], func(t time.Time) bool { return now.Sub(t) > reprotectWindow })
	if len(recent) >= ws.o.MaxReprotects {
		ws.reprotects[path] = recent
		ws.notify(path, fmt.Sprintf("%s; %s keeps writing its own entries back, so Rootkeeper stopped protecting %s again: restart %s, then run hosts protect %s",
			what, h.Name, path, h.Name, h.ID))
		return
	}
	ws.reprotects[path] = append(recent, now)
	res, err := ws.reprotect(h, ref, f)
	if errors.Is(err, errMovedOn) {
		// Restored, no longer kept, or written again meanwhile: the
		// event of that change checks it afresh.
		ws.reprotects[path] = recent
		return
	}
	if err != nil {
		ws.notify(path, fmt.Sprintf("%s; protecting it again failed: %v", what, err))
		return
	}
	ws.told[path] = true
	ws.log("%s: protected %s again (%d entries)", h.Name, path, len(res.Changes))
	ws.notify(path, fmt.Sprintf("%s; Rootkeeper protected it again (the file before: %s)", what, res.Backup))
}

// errMovedOn: what reprotect was to protect again is no longer there.
var errMovedOn = errors.New("the file or its record changed meanwhile")

// reprotect backs up the file as the host left it, then protects it again:
// only if, under the lock that protect and restore hold, the file is still
// recorded as kept and still holds what was checked (a restore that ran
// in between is not undone).
func (ws *watchState) reprotect(h *Host, ref fileRef, f File) (FileResult, error) {
	var res FileResult
	err := withLock(ws.o.Store.Dir(), func() error {
		rec, err := loadRecord(ws.o.Store.Dir())
		if err != nil {
			return err
		}
		if fr, ok := rec.file(f.Path); !ok || !fr.Keep {
			return errMovedOn
		}
		if now, err := readHostFile(f.Path, MaxFileBytes); err != nil || !bytes.Equal(now, f.data) {
			return errMovedOn
		}
		b, err := backup(ws.o.Store.Dir(), h.ID, f.Path, f.data, ws.o.now())
		if err != nil {
			return err
		}
		res, _, err = protectFile(h, ref, ws.o.Options)
		res.Backup = b
		return err
	})
	return res, err
}

// describeDrift says what changed, for people: "Claude Code starts fs on
// its own again, given ~/notes in $NOTES_DIR".
func describeDrift(h *Host, d Drift, home string) string {
	var parts []string
	for _, e := range d.Unbridged {
		parts = append(parts, h.Name+" starts "+e.Name+" on its own again"+given(e, home))
	}
	for _, e := range d.New {
		parts = append(parts, "a new server "+e.Name+" in "+h.Name+"'s "+filepath.Base(e.File)+" runs without Rootkeeper"+given(e, home))
	}
	return strings.Join(parts, "; ")
}

// given names the folders an entry hands its server, and where.
func given(e Entry, home string) string {
	srv := e.Server
	if srv.Type != app.TransportStdio {
		return ""
	}
	srv.Env = e.HostEnv
	var out []string
	for _, sl := range app.FindSlots(srv, home) {
		out = append(out, sl.Path+" in "+sl.Where())
	}
	if len(out) == 0 {
		return ""
	}
	return ", given " + strings.Join(out, ", ")
}

// SetKept records that the protected files of host h are to stay
// protected (or no longer): while the app runs, a change the host makes to
// them is protected again. Files never protected are not touched.
func SetKept(h *Host, o Options, keep bool) error {
	return withLock(o.Store.Dir(), func() error { return markKept(o.Store.Dir(), h.ID, keep) })
}

// markKept records that the files of host h are to stay protected.
func markKept(stateDir, host string, keep bool) error {
	rec, err := loadRecord(stateDir)
	if err != nil {
		return err
	}
	changed := false
	for i := range rec.Files {
		if rec.Files[i].Host == host && rec.Files[i].Keep != keep {
			rec.Files[i].Keep = keep
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return saveRecord(stateDir, rec)
}
