package app

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// What belongs to a server on disk, besides its place in the state file:
// its private temp folder and the link to it (servertemp.go), its data
// folder and the data folders of earlier programs kept aside (KeptData),
// and its stderr log with the log's older generations. Removing a
// server removes them all, through RemoveServerFiles, whoever removes it.

// ServerLogPath is server name's stderr log in stateDir: logs/NAME.log,
// its older generations NAME.log.1, NAME.log.2… (app/logfile). The managed
// clients and the bridge both write it.
func ServerLogPath(stateDir, name string) string {
	return filepath.Join(stateDir, "logs", name+".log")
}

// ServerDataPath is server name's own data folder in stateDir (see
// ServerDataFolder), or false for a name that cannot name a folder there
// (a separator), which then has none.
func ServerDataPath(stateDir, name string) (string, bool) {
	p, err := ServerDataFolder(stateDir, name)
	return p, err == nil
}

// RemoveServerFiles deletes everything on disk that belongs to server name
// in stateDir: its private temp folder and the link to it, its data folder
// and the kept-aside ones, its network record, and its stderr log with the
// log's older generations. A link is removed, never followed. What is already gone is no error; the errors of what
// could not be removed are joined.
//
// The running app calls it once a removed server has stopped; the command
// line, when no app runs to do so.
func RemoveServerFiles(stateDir, name string) error {
	if stateDir == "" {
		return nil
	}
	var errs []error
	remove := func(err error) {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	remove(RemoveServerTemp(stateDir, name))
	if data, ok := ServerDataPath(stateDir, name); ok {
		remove(os.RemoveAll(data))
	}
	if kept, err := keptDataRoot(stateDir, name); err == nil {
		remove(os.RemoveAll(kept))
	}
	remove(RemoveNetworkRecord(stateDir, name))
	log := ServerLogPath(stateDir, name)
	entries, err := os.ReadDir(filepath.Dir(log))
	remove(err)
	base := filepath.Base(log)
	for _, e := range entries {
		if e.Name() == base || isGeneration(e.Name(), base) {
			remove(os.Remove(filepath.Join(filepath.Dir(log), e.Name())))
		}
	}
	return errors.Join(errs...)
}

// isGeneration reports whether file is an older generation of log: LOG.N.
func isGeneration(file, log string) bool {
	n, ok := strings.CutPrefix(file, log+".")
	if !ok || n == "" {
		return false
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
