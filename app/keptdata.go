package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"rootkeeper/app/words"
)

// A data folder belongs to the program that wrote it (ProgramID). When a
// server's command comes to run another program (PutServer), the folder
// is kept aside, never deleted, and the new program starts with an empty
// one; the person then gives the kept folder to the new program
// (UseKeptData) or removes it (RemoveKeptData). Removing the server
// removes its kept folders too (RemoveServerFiles). Which program a folder
// belongs to is recorded in the state (Server.DataProgram, KeptData), not
// in the folder: the server may write its data folder, and could forge a
// mark there.
//
// Kept folders are STATE/previous-data/NAME/WHEN, NAME written as in
// ServerDataFolder: not beside the data folders, where a kept folder's name
// could be another server's (a server may be called "x.previous-1").

// KeptData is a data folder kept aside: a program that ran under a
// server's name wrote it.
type KeptData struct {
	// Name is the kept folder's name in the server's kept folders
	// (KeptDataFolder): when it was kept aside, 20260102T150405Z.
	Name string `json:"name"`
	// Program is the program (ProgramID) whose data it holds; empty when
	// that is not known (a folder left by a server of the same name that
	// was removed).
	Program string `json:"program,omitempty"`
	// At is when it was kept aside.
	At time.Time `json:"at"`
}

// ProgramText says whose data k holds, for a person.
func (k KeptData) ProgramText() string {
	if k.Program == "" {
		return "an earlier server of that name"
	}
	return words.SafeText(k.Program)
}

// keptDataRoot is where server name's kept folders are in stateDir.
func keptDataRoot(stateDir, name string) (string, error) {
	data, err := ServerDataFolder(stateDir, name)
	if err != nil {
		return "", err
	}
	return filepath.Join(stateDir, "previous-data", filepath.Base(data)), nil
}

// KeptDataFolder is the path of server name's kept folder called kept
// (KeptData.Name) in stateDir. A name that could lead out of the server's
// kept folders is refused.
func KeptDataFolder(stateDir, name, kept string) (string, error) {
	if kept == "" || kept == "." || kept == ".." || strings.ContainsAny(kept, `/\`+"\x00") {
		return "", fmt.Errorf("%q cannot name a kept data folder", kept)
	}
	root, err := keptDataRoot(stateDir, name)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, kept), nil
}

// holdsData reports whether data folder dir holds anything its program
// wrote: a file, a link, anything but folders, apart from the git
// identity Rootkeeper put there for it (seedGitIdentity, for the home
// folder home). A missing folder holds nothing.
func holdsData(dir, home string) (bool, error) {
	seed := gitIdentitySeed(home)
	found := errors.New("found")
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		if p == filepath.Join(dir, "gitconfig") && d.Type().IsRegular() {
			if b, err := os.ReadFile(p); err == nil && string(b) == seed {
				return nil
			}
		}
		return found
	})
	if errors.Is(err, found) {
		return true, nil
	}
	return false, err
}

// keepAside moves server name's data folder in stateDir aside, as the
// data of program, at: it returns what it kept, or nil when the folder
// holds nothing its program wrote (it is then left for the next program,
// or is missing). Anything but a folder of its own at that place (a
// symlink) is left alone: ServerData refuses it.
func keepAside(stateDir, name, program, home string, at time.Time) (*KeptData, error) {
	dir, err := ServerDataFolder(stateDir, name)
	if err != nil {
		return nil, nil // a name with no data folder
	}
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return nil, nil
	}
	if holds, err := holdsData(dir, home); err != nil {
		return nil, fmt.Errorf("data folder: %w", err)
	} else if !holds {
		return nil, nil
	}
	root, err := keptDataRoot(stateDir, name)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("keeping the data folder aside: %w", err)
	}
	at = at.UTC().Truncate(time.Second)
	stamp := at.Format("20060102T150405Z")
	kept := stamp
	for i := 2; ; i++ {
		err = os.Rename(dir, filepath.Join(root, kept))
		if err == nil {
			break
		}
		if _, statErr := os.Lstat(filepath.Join(root, kept)); statErr != nil || i > 100 {
			return nil, fmt.Errorf("keeping the data folder aside: %w", err)
		}
		kept = stamp + "-" + strconv.Itoa(i) // kept aside twice in a second
	}
	return &KeptData{Name: kept, Program: program, At: at}, nil
}

// keptIndex finds the kept folder of srv that which names: its name, or
// its path; "" when srv has exactly one.
func keptIndex(srv Server, stateDir, which string) (int, error) {
	if len(srv.KeptData) == 0 {
		return -1, inputErrorf("server %q has no data folder kept aside", srv.Name)
	}
	if which == "" {
		if len(srv.KeptData) > 1 {
			names := make([]string, len(srv.KeptData))
			for i, k := range srv.KeptData {
				names[i] = k.Name
			}
			return -1, inputErrorf("server %q has %d data folders kept aside: name one (%s)", srv.Name, len(names), strings.Join(names, ", "))
		}
		return 0, nil
	}
	for i, k := range srv.KeptData {
		if p, err := KeptDataFolder(stateDir, srv.Name, k.Name); k.Name == which || (err == nil && p == filepath.Clean(which)) {
			return i, nil
		}
	}
	return -1, inputErrorf("server %q has no data folder kept aside called %q", srv.Name, which)
}

// UseKeptData gives server name's kept folder which ("" for its only
// one) to the program it runs now: the kept folder becomes its data
// folder. What its data folder held is kept aside in turn, as the data of
// the program that wrote it (or, holding nothing it wrote, removed). It
// returns what was kept aside, if anything. The server restarts (its
// definition changed), and its ruleset names the folder it now has.
func (s *State) UseKeptData(stateDir, name, which, home string, now time.Time) (*KeptData, error) {
	i := slices.IndexFunc(s.Servers, func(x Server) bool { return x.Name == name })
	if i < 0 {
		return nil, inputErrorf("no server %q", name)
	}
	srv := &s.Servers[i]
	k, err := keptIndex(*srv, stateDir, which)
	if err != nil {
		return nil, err
	}
	src, err := KeptDataFolder(stateDir, name, srv.KeptData[k].Name)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(src); err != nil || !fi.IsDir() {
		return nil, inputErrorf("the kept data folder %s is gone", src)
	}
	data, err := ServerDataFolder(stateDir, name)
	if err != nil {
		return nil, err
	}
	program := srv.DataProgram
	if program == "" {
		program = ProgramID(*srv)
	}
	aside, err := keepAside(stateDir, name, program, home, now)
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(data); err != nil { // nothing its program wrote
		return nil, fmt.Errorf("data folder: %w", err)
	}
	if err := os.Rename(src, data); err != nil {
		if aside != nil { // put the folder it had back
			if back, e := KeptDataFolder(stateDir, name, aside.Name); e == nil {
				os.Rename(back, data)
			}
		}
		return nil, fmt.Errorf("giving the kept data folder to %s: %w", name, err)
	}
	srv.KeptData = slices.Delete(srv.KeptData, k, k+1)
	if aside != nil {
		srv.KeptData = append(srv.KeptData, *aside)
	}
	srv.DataProgram = ProgramID(*srv)
	return aside, nil
}

// RemoveKeptData deletes server name's kept folder which ("" for its only
// one) from disk and from the state, and returns its path.
func (s *State) RemoveKeptData(stateDir, name, which string) (string, error) {
	i := slices.IndexFunc(s.Servers, func(x Server) bool { return x.Name == name })
	if i < 0 {
		return "", inputErrorf("no server %q", name)
	}
	srv := &s.Servers[i]
	k, err := keptIndex(*srv, stateDir, which)
	if err != nil {
		return "", err
	}
	dir, err := KeptDataFolder(stateDir, name, srv.KeptData[k].Name)
	if err != nil {
		return "", err
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("removing the kept data folder: %w", err)
	}
	srv.KeptData = slices.Delete(srv.KeptData, k, k+1)
	return dir, nil
}
