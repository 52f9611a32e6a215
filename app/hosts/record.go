package hosts

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"rootkeeper/app/atomicfile"
)

// record remembers what protect did, in STATE_DIR/hosts/protected.json, so
// restore can undo exactly that.
type record struct {
	Version int          `json:"version"`
	Files   []fileRecord `json:"files"`
}

type fileRecord struct {
	Host string `json:"host"`
	Path string `json:"path"`
	// Backup is the copy of the file from before the first protect.
	Backup string `json:"backup"`
	// Before and After are SHA-256 hashes of the file before the first
	// protect and after the last one.
	Before string `json:"before"`
	After  string `json:"after"`
	// Exact: nobody else changed the file between protects, so when it
	// still hashes to After, the backup is the file to give back.
	Exact bool `json:"exact"`
	// Project is the project folder of a project's file.
	Project string `json:"project,omitempty"`
	// Keep: the person asked that the file stay protected (protect
	// --keep); while the app runs, a host's rewrite is protected again.
	Keep    bool          `json:"keep,omitempty"`
	At      time.Time     `json:"at"`
	Entries []entryRecord `json:"entries"`
}

type entryRecord struct {
	Key  []string `json:"key"`
	Name string   `json:"rootkeeper"`
	// Command is the rootkeeper the entry was pointed at.
	Command string      `json:"command"`
	Edits   []fieldEdit `json:"edits"`
}

// fieldEdit is one field protect changed: its key, the sibling it was put
// after, and its text before (absent when Had is false).
type fieldEdit struct {
	Key    []string `json:"key"`
	After  string   `json:"after,omitempty"`
	Had    bool     `json:"had"`
	Before []byte   `json:"before,omitempty"`
}

const recordVersion = 1

func hostsDir(stateDir string) string   { return filepath.Join(stateDir, "hosts") }
func recordPath(stateDir string) string { return filepath.Join(hostsDir(stateDir), "protected.json") }

func loadRecord(stateDir string) (record, error) {
	data, err := os.ReadFile(recordPath(stateDir))
	if errors.Is(err, fs.ErrNotExist) {
		return record{Version: recordVersion}, nil
	}
	if err != nil {
		return record{}, err
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return record{}, fmt.Errorf("%s: %w", recordPath(stateDir), err)
	}
	if r.Version > recordVersion {
		return record{}, fmt.Errorf("%s has version %d, newer than this Rootkeeper; refusing to touch it", recordPath(stateDir), r.Version)
	}
	return r, nil
}

func saveRecord(stateDir string, r record) error {
	r.Version = recordVersion
	slices.SortFunc(r.Files, func(a, b fileRecord) int { return strings.Compare(a.Path, b.Path) })
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(hostsDir(stateDir), 0o700); err != nil {
		return err
	}
	return writeAtomic(recordPath(stateDir), append(data, '\n'), 0o600, nil)
}

func (r *record) file(path string) (*fileRecord, bool) {
	for i := range r.Files {
		if r.Files[i].Path == path {
			return &r.Files[i], true
		}
	}
	return nil, false
}

func (r *record) drop(path string) {
	r.Files = slices.DeleteFunc(r.Files, func(f fileRecord) bool { return f.Path == path })
}

func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// backup keeps a copy of a host's file in STATE_DIR/hosts/backups before it
// is first changed, and returns its path.
func backup(stateDir, host, path string, data []byte, now time.Time) (string, error) {
	dir := filepath.Join(hostsDir(stateDir), "backups")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	name := fmt.Sprintf("%s-%s-%s-%s", host, strings.TrimPrefix(filepath.Base(path), "."), now.UTC().Format("20060102T150405Z"), hashOf(data)[:12])
	p := filepath.Join(dir, name)
	if err := writeAtomic(p, data, 0o600, nil); err != nil {
		return "", fmt.Errorf("backing up %s: %w", path, err)
	}
	return p, nil
}

// ErrChanged says a host rewrote its file while Rootkeeper was editing it.
var ErrChanged = errors.New("the file changed while Rootkeeper was editing it")

// beforeReplace, when set (tests), runs right before the final check of a
// host's file: it stands for a host writing the file at the worst moment.
var beforeReplace func(path string)

// writeAtomic writes data to path through a temp file in the same folder
// (write, fsync, rename, fsync of the folder), with mode perm. With expect
// non-nil, the file must still hold exactly expect right before the rename,
// else nothing is replaced and the error is ErrChanged.
func writeAtomic(path string, data []byte, perm fs.FileMode, expect []byte) error {
	o := atomicfile.Options{Perm: perm, TempPrefix: "." + filepath.Base(path) + ".rootkeeper-"}
	if expect != nil {
		o.BeforeRename = func() error {
			if beforeReplace != nil {
				beforeReplace(path)
			}
			if !hostFileHolds(path, expect) {
				return ErrChanged
			}
			return nil
		}
	}
	return atomicfile.Write(path, data, o)
}
