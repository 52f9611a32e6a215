package hosts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/serverentry"
)

// Change is what protect did (or, in a dry run, would do) to one entry.
type Change struct {
	Entry Entry `json:"entry"`
	// Server is what Rootkeeper stores for it.
	Server app.Server `json:"-"`
	// Program says what it runs, for people.
	Program string `json:"program"`
	// Slots are the folders and files its configuration names: kept in
	// it, each decided by the person before the server starts.
	Slots []app.Slot `json:"slots,omitempty"`
	// HostEnv names the variables left in the host's file.
	HostEnv []string `json:"hostEnv,omitempty"`
	// Bridge is the command line the entry runs after protect.
	Bridge []string `json:"bridge"`
	// StoredEnv names variables of the entry's env that Rootkeeper keeps
	// from servers' inherited environment (provider keys, private-env):
	// they reach the server only as its own env, so their (literal)
	// values are stored with it.
	StoredEnv []string `json:"storedEnv,omitempty"`
	// LostEnv names such variables whose value the host expands: the
	// server will not get them through the bridge.
	LostEnv []string `json:"lostEnv,omitempty"`
	// NewProgram: a server of that name existed and ran something else;
	// its decisions were dropped.
	NewProgram bool `json:"newProgram,omitempty"`
	// Dropped counts those decisions.
	Dropped int `json:"dropped,omitempty"`
}

// FileResult is what protect or restore did to one file.
type FileResult struct {
	Host    string   `json:"host"`
	Path    string   `json:"path"`
	Backup  string   `json:"backup,omitempty"`
	Changes []Change `json:"changes,omitempty"`
	// Skipped are entries left as they were, with the reason.
	Skipped []Entry `json:"skipped,omitempty"`
	// Already counts entries that already ran the bridge.
	Already int `json:"already,omitempty"`
	// Restore: how the file was given back ("byte for byte", "entries").
	How string `json:"how,omitempty"`
	// Kept are entries restore left alone because they were edited since.
	Kept []string `json:"kept,omitempty"`
	// Written: the file was written.
	Written bool `json:"written"`
	// Refused says why the file was left as it is: it is not a regular
	// file, it is too large, or it is a project's link to a file outside
	// the project. (Restore keeps its record, to give it back later.)
	Refused string `json:"refused,omitempty"`
}

// maxAttempts bounds how often protect starts over when the host keeps
// rewriting its file.
const maxAttempts = 5

// Protect puts every server of host h behind the bridge: each entry is
// imported into Rootkeeper's state and rewritten to run `rootkeeper bridge
// NAME`. A file that does not parse is an error (ParseError) and is not
// touched; nothing is written in a dry run.
func Protect(h *Host, o Options) ([]FileResult, error) {
	var out []FileResult
	err := withLock(o.Store.Dir(), func() error {
		for _, ref := range h.filesFor(o) {
			if ref.managed {
				continue // the organisation's: never rewritten
			}
			res, found, err := protectFile(h, ref, o)
			if err != nil {
				return err
			}
			if found {
				out = append(out, res)
			}
		}
		if o.Keep && !o.DryRun {
			return markKept(o.Store.Dir(), h.ID, true)
		}
		return nil
	})
	return out, err
}

func protectFile(h *Host, ref fileRef, o Options) (FileResult, bool, error) {
	for attempt := 0; ; attempt++ {
		res, found, err := protectOnce(h, ref, o)
		if errors.Is(err, ErrChanged) && attempt+1 < maxAttempts {
			continue // the host wrote its file meanwhile: read it again
		}
		return res, found, err
	}
}

// protectOnce protects the file ref of host h as it reads it now: each
// entry is bridged, skipped or found bridged already; then, when something
// changed and this is no dry run, the file is written (see writeProtected).
// found is false when the file is not there. ErrChanged says the host wrote
// the file meanwhile: protectFile starts over.
func protectOnce(h *Host, ref fileRef, o Options) (res FileResult, found bool, err error) {
	f, found, err := readFile(h, ref)
	if err != nil || !found {
		return FileResult{}, found, err
	}
	if f.Refused != "" {
		return FileResult{Host: h.ID, Path: f.Path, Refused: f.Refused}, true, nil
	}
	if f.parsed != nil {
		return FileResult{}, true, f.parsed
	}
	res = FileResult{Host: h.ID, Path: f.Path}
	var entries []entryRecord
	for _, e := range f.Entries {
		switch {
		case e.Protected:
			res.Already++
			continue
		case e.Skip != "":
			res.Skipped = append(res.Skipped, e)
			continue
		}
		if why := cannotBridge(f.doc, e, o); why != "" {
			e.Skip = why
			res.Skipped = append(res.Skipped, e)
			continue
		}
		ch, er, err := bridgeEntry(f.doc, e, o)
		if err != nil {
			return res, true, fmt.Errorf("%s: %s: %w", f.Path, e.Name, err)
		}
		res.Changes = append(res.Changes, ch)
		entries = append(entries, er)
	}
	if len(res.Changes) == 0 || o.DryRun {
		return res, true, nil
	}
	return res, true, writeProtected(h, ref, f, o, &res, entries)
}

// cannotBridge says why entry e of d, which could run the bridge as far as
// its host goes, is left as it is, or "": a remote server the probe finds
// wanting (o.Probe), or a shape of entry Rootkeeper does not edit.
func cannotBridge(d doc, e Entry, o Options) string {
	if o.Probe != nil && e.Server.Type != app.TransportStdio {
		if why := o.Probe(context.Background(), e.Server); why != "" {
			return why
		}
	}
	if _, err := d.render(append(clone(e.base), e.d.Command), ""); err != nil {
		return err.Error() // a shape Rootkeeper does not edit
	}
	return ""
}

// writeProtected writes file f, whose entries were edited as res says, and
// records what was done so that restore can undo it: entries are the
// edits. The first time Rootkeeper edits a file, a backup of it is kept;
// a file someone else edited since the last protect is marked as no longer
// exactly its backup plus Rootkeeper's edits. The servers are added to the
// state before the file names them.
func writeProtected(h *Host, ref fileRef, f File, o Options, res *FileResult, entries []entryRecord) error {
	rec, err := loadRecord(o.Store.Dir())
	if err != nil {
		return err
	}
	now := o.now()
	fr, had := rec.file(f.Path)
	if !had {
		b, err := backup(o.Store.Dir(), h.ID, f.Path, f.data, now)
		if err != nil {
			return err
		}
		rec.Files = append(rec.Files, fileRecord{Host: h.ID, Path: f.Path, Backup: b, Before: hashOf(f.data), Exact: true, Project: ref.project, Keep: o.Keep})
		fr, _ = rec.file(f.Path)
	} else if hashOf(f.data) != fr.After {
		// Edited by someone else since the last protect: the backup is
		// no longer the file minus Rootkeeper's edits.
		fr.Exact = false
	}
	res.Backup = fr.Backup
	// The servers exist before any entry names them.
	if err := addServers(o, h, res.Changes); err != nil {
		return err
	}
	info, err := os.Stat(f.Path)
	if err != nil {
		return err
	}
	d := f.doc
	if err := writeAtomic(f.Path, d.bytes(), info.Mode().Perm(), f.data); err != nil {
		return err
	}
	res.Written = true
	fr.After = hashOf(d.bytes())
	fr.At = now.UTC()
	fr.Entries = append(fr.Entries, entries...)
	return saveRecord(o.Store.Dir(), rec)
}

// bridgeEntry rewrites one entry in d to run the bridge and says what
// Rootkeeper stores for it. The fields the bridge makes moot go from the
// host's entry: the URL, a remote server's headers, and the environment
// moved into the stored server (see moveSlotEnv).
func bridgeEntry(d doc, e Entry, o Options) (Change, entryRecord, error) {
	srv, movedEnv := moveSlotEnv(e, o.World.Home)
	ch := Change{Entry: e, Server: srv, Slots: app.FindSlots(srv, o.World.Home), Program: app.Program(srv)}
	er := entryRecord{Key: e.Key, Name: e.Rootkeeper, Command: o.Executable}
	ed := entryEditor{d: d, base: e.base, rec: &er}
	dl := e.d
	args := []string{"bridge", e.Rootkeeper}
	if o.StateDirArg != "" {
		args = append([]string{"--state-dir", o.StateDirArg}, args...)
	}
	ch.Bridge = append([]string{o.Executable}, args...)
	anchor := ""
	if dl.Type != "" {
		if _, has := d.get(append(slices.Clone(e.base), dl.Type)); has {
			if err := ed.set([]string{dl.Type}, "", dl.Stdio); err != nil {
				return ch, er, err
			}
			anchor = dl.Type
		}
	}
	if dl.CommandArray {
		if err := ed.set([]string{dl.Command}, anchor, ch.Bridge); err != nil {
			return ch, er, err
		}
	} else {
		if err := ed.set([]string{dl.Command}, anchor, o.Executable); err != nil {
			return ch, er, err
		}
		if err := ed.set([]string{dl.Args}, dl.Command, args); err != nil {
			return ch, er, err
		}
	}
	var moot [][]string
	for _, u := range dl.URLs {
		moot = append(moot, []string{u.Key})
	}
	if dl.Headers != "" && srv.Type != app.TransportStdio {
		moot = append(moot, []string{dl.Headers})
	}
	for _, k := range movedEnv {
		moot = append(moot, []string{dl.Env, k})
	}
	for _, field := range moot {
		if err := ed.remove(field); err != nil {
			return ch, er, err
		}
	}
	for k := range e.HostEnv {
		if !slices.Contains(movedEnv, k) {
			ch.HostEnv = append(ch.HostEnv, k)
		}
	}
	slices.Sort(ch.HostEnv)
	return ch, er, nil
}

// moveSlotEnv is the server Rootkeeper stores for entry e, and the names
// of the variables of the entry's env moved into it. A folder or file in
// the entry's env would reach the server through the bridge's environment,
// where Rootkeeper could not hold it: it moves, as written, into the
// server's stored env (a slot like any other) and off the host's entry;
// restore puts it back.
func moveSlotEnv(e Entry, home string) (app.Server, []string) {
	srv := e.Server
	var moved []string
	for _, k := range slices.Sorted(maps.Keys(e.HostEnv)) {
		if !app.NamesSlot(srv, e.HostEnv[k], home) {
			continue
		}
		if srv.Env == nil {
			srv.Env = map[string]string{}
		}
		srv.Env[k] = e.HostEnv[k]
		moved = append(moved, k)
	}
	return srv, moved
}

// entryEditor edits the fields of one entry of d, whose key is base, and
// records each edit in rec for restore: the field's text before and where
// it stood.
type entryEditor struct {
	d    doc
	base []string
	rec  *entryRecord
}

// set sets field to v, in its place when it is there, else after its
// sibling after.
func (ed entryEditor) set(field []string, after string, v any) error {
	key := append(slices.Clone(ed.base), field...)
	before, had := ed.d.get(key)
	ed.rec.Edits = append(ed.rec.Edits, fieldEdit{Key: key, After: after, Had: had, Before: before})
	raw, err := ed.d.render(key, v)
	if err != nil {
		return err
	}
	return ed.d.put(key, after, raw)
}

// remove deletes field when it is there, noting the field it followed:
// restore puts it back there.
func (ed entryEditor) remove(field []string) error {
	key := append(slices.Clone(ed.base), field...)
	before, had := ed.d.get(key)
	if !had {
		return nil
	}
	after := prevSibling(ed.d, key)
	ed.rec.Edits = append(ed.rec.Edits, fieldEdit{Key: key, After: after, Had: had, Before: before})
	return ed.d.del(key)
}

// addServers imports the changed entries into the state. A server that
// exists and runs the same program keeps its decisions and settings; one
// that now runs something else is a new program for consent (its decisions
// go) but keeps its settings (roots mode, confinement…).
func addServers(o Options, h *Host, changes []Change) error {
	stateDir := ""
	if o.Store != nil {
		stateDir = o.Store.Dir() // where a new program's predecessor's data is kept aside
	}
	_, err := o.update(func(s *app.State) error {
		now := time.Now().UTC()
		for i := range changes {
			ch := &changes[i]
			ch.NewProgram, ch.Dropped = false, 0
			srv := ch.Server
			ch.StoredEnv, ch.LostEnv = nil, nil
			for _, k := range ch.HostEnv {
				if !s.Withheld(k) {
					continue
				}
				v := ch.Entry.HostEnv[k]
				if serverentry.HasHostVariable(v) {
					ch.LostEnv = append(ch.LostEnv, k)
					continue
				}
				if srv.Env == nil {
					srv.Env = map[string]string{}
				}
				srv.Env[k] = v
				ch.StoredEnv = append(ch.StoredEnv, k)
			}
			ch.Server, ch.Program = srv, app.Program(srv)
			// A host's entry states none of Rootkeeper's own settings:
			// a server protected again keeps its roots mode, confinement…
			res, err := s.PutServer(srv, app.PutOptions{Replace: true, Home: o.World.Home, Now: now, StateDir: stateDir})
			if err != nil {
				return err
			}
			ch.Server, ch.Slots = res.Server, res.Server.Slots
			ch.NewProgram, ch.Dropped = res.NewProgram, res.Dropped
			// A local-scope server of Claude Code works in its project:
			// that folder is what it will ask for.
			if dir, ok := localDir(ch.Entry); ok {
				if canon, _, err := app.CanonicalPath(dir, "/"); err == nil {
					if fi, err := os.Stat(canon); err == nil && fi.IsDir() {
						if _, err := s.AddRequest(srv.Name, canon, h.ID, now); err != nil {
							return err
						}
					}
				}
			}
		}
		return nil
	})
	return err
}

func prevSibling(d doc, key []string) string {
	names := d.keys(key[:len(key)-1])
	i := slices.Index(names, key[len(key)-1])
	switch {
	case i < 0:
		return ""
	case i == 0:
		return atStart
	}
	return names[i-1]
}

func localDir(e Entry) (string, bool) {
	if len(e.Key) == 4 && e.Key[0] == "projects" && filepath.IsAbs(e.Key[1]) {
		return e.Key[1], true
	}
	return "", false
}

// managedRules are the host's allow and deny lists of a managed file, one
// line each as the file writes a rule: `denied {"serverName":"x"}`.
func managedRules(d doc) []string {
	var out []string
	for _, key := range []string{"allowedMcpServers", "deniedMcpServers"} {
		v, ok := d.value([]string{key})
		list, isList := v.([]any)
		if !ok || !isList {
			continue
		}
		word := map[string]string{"allowedMcpServers": "allowed", "deniedMcpServers": "denied"}[key]
		for _, r := range list {
			b, err := json.Marshal(r)
			if err == nil {
				out = append(out, word+" "+string(b))
			}
		}
	}
	return out
}
