package hosts

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
)

// Restore gives back host h's files as they were before protect: byte for
// byte when nobody edited them since, otherwise by putting back only the
// fields Rootkeeper changed in the entries that still run the bridge (the
// others were edited since, and are left as they are: Kept says which).
func Restore(h *Host, o Options) ([]FileResult, error) {
	var out []FileResult
	err := withLock(o.Store.Dir(), func() error {
		rec, err := loadRecord(o.Store.Dir())
		if err != nil {
			return err
		}
		for _, fr := range slices.Clone(rec.Files) {
			if fr.Host != h.ID {
				continue
			}
			var res FileResult
			for attempt := 0; ; attempt++ {
				res, err = restoreFile(h, fr, o)
				if errors.Is(err, ErrChanged) && attempt+1 < maxAttempts {
					continue
				}
				break
			}
			if err != nil {
				return err
			}
			out = append(out, res)
			if !o.DryRun && res.Refused == "" {
				rec.drop(fr.Path)
				if err := saveRecord(o.Store.Dir(), rec); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return out, err
}

func restoreFile(h *Host, fr fileRecord, o Options) (FileResult, error) {
	res := FileResult{Host: h.ID, Path: fr.Path, Backup: fr.Backup}
	data, err := readHostFile(fr.Path, MaxFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		res.How = "file is gone; nothing to restore"
		return res, nil
	}
	if why, ok := isRefused(err); ok {
		res.Refused = why
		return res, nil
	}
	if err != nil {
		return res, err
	}
	info, err := os.Stat(fr.Path)
	if err != nil {
		return res, err
	}
	if fr.Exact && hashOf(data) == fr.After {
		orig, err := readHostFile(fr.Backup, MaxFileBytes)
		if err == nil && hashOf(orig) == fr.Before {
			res.How = "byte for byte"
			if o.DryRun {
				return res, nil
			}
			if err := writeAtomic(fr.Path, orig, info.Mode().Perm(), data); err != nil {
				return res, err
			}
			res.Written = true
			return res, nil
		}
	}
	d, err := parseDoc(h.formatOf(fr.Path), fr.Path, fr.Project, data)
	if err != nil {
		return res, err
	}
	res.How = "entries"
	for _, er := range fr.Entries {
		if !stillBridged(h, d, er) {
			res.Kept = append(res.Kept, er.Key[len(er.Key)-1])
			continue
		}
		for i := len(er.Edits) - 1; i >= 0; i-- {
			ed := er.Edits[i]
			if ed.Had {
				err = d.put(ed.Key, ed.After, ed.Before)
			} else {
				err = d.del(ed.Key)
			}
			if err != nil {
				return res, fmt.Errorf("%s: putting back %s: %w", fr.Path, er.Key[len(er.Key)-1], err)
			}
		}
	}
	if o.DryRun || bytes.Equal(d.bytes(), data) {
		return res, nil
	}
	if err := writeAtomic(fr.Path, d.bytes(), info.Mode().Perm(), data); err != nil {
		return res, err
	}
	res.Written = true
	return res, nil
}

// stillBridged reports whether the entry er names still runs the bridge to
// the server Rootkeeper gave it.
func stillBridged(h *Host, d doc, er entryRecord) bool {
	if len(er.Key) == 0 {
		return false
	}
	n := len(er.Key)
	e := readEntry(h, d, serverTable{key: er.Key[:n-1]}, er.Key[n-1])
	return e.Protected && e.Rootkeeper == er.Name && e.Server.Command == er.Command
}
