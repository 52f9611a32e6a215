package app

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"rootkeeper/app/osfile"
)

// A confined server's private temp folder (its TMPDIR) lives outside the
// state folder, at TEMP/rootkeeper-UID/RANDOM (TEMP is os.TempDir(); the
// rootkeeper-UID folder is 0700 and must be the user's own), so that its
// path says nothing about where the state folder, and the control socket
// in it, are: it used to be STATE/tmp/server-NAME, and a confined server
// found the state folder two levels up from its TMPDIR. Rootkeeper finds
// it again through a symlink in the state folder, STATE/tmp/server-NAME,
// which the server cannot read (Landlock denies it the state folder); the
// budget (app/budget) measures and empties it through that link, and
// removing the server removes both.
//
// Beside each folder lies a file, RANDOM.owner, naming the link that
// leads to it. A folder whose link is gone (its state folder deleted) or
// leads elsewhere is an orphan nobody will empty again: the next folder
// made sweeps it (sweepOrphans).

// ServerTempLink is the link in stateDir that names server name's private
// temp folder. The prefix keeps a name such as ".." from naming the state
// folder itself.
func ServerTempLink(stateDir, name string) (string, error) {
	if stateDir == "" {
		return "", errors.New("cannot confine: no state folder to find the server's private temp folder from")
	}
	if name == "" || strings.ContainsAny(name, `/\`+string(filepath.Separator)) {
		return "", fmt.Errorf("cannot confine: server name %q cannot name a folder", name)
	}
	return filepath.Join(stateDir, "tmp", "server-"+name), nil
}

// tempBaseName is the per-user folder in os.TempDir() holding the private
// temp folders.
func tempBaseName() string { return "rootkeeper-" + strconv.Itoa(os.Geteuid()) }

// ServerTemp returns server name's private temp folder, creating it (0700)
// and its link when missing. A folder of the old layout (a real folder at
// the link's place) is removed: it held only what the server put there.
func ServerTemp(stateDir, name string) (string, error) {
	link, err := ServerTempLink(stateDir, name)
	if err != nil {
		return "", err
	}
	if p, ok := ResolveServerTemp(link); ok {
		return p, nil
	}
	if fi, err := os.Lstat(link); err == nil && fi.IsDir() {
		if err := os.RemoveAll(link); err != nil {
			return "", fmt.Errorf("private temp folder: %w", err)
		}
	}
	base := filepath.Join(os.TempDir(), tempBaseName())
	if err := os.Mkdir(base, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("private temp folder: %w", err)
	}
	if !ownFolder(base) {
		return "", fmt.Errorf("private temp folder: %s is not a folder of this user's, mode 0700", base)
	}
	sweepOrphans(base, time.Now())
	var rnd [12]byte
	rand.Read(rnd[:])
	dir := filepath.Join(base, hex.EncodeToString(rnd[:]))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("private temp folder: %w", err)
	}
	fail := func(err error) (string, error) {
		os.Remove(dir)
		os.Remove(dir + ownerSuffix)
		return "", fmt.Errorf("private temp folder: %w", err)
	}
	if err := os.WriteFile(dir+ownerSuffix, []byte(link), 0o600); err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		return fail(err)
	}
	// Made aside and renamed into place: a stale link (its folder gone
	// with a reboot's /tmp) is replaced in one step.
	tmp := link + ".new-" + filepath.Base(dir)
	if err := os.Symlink(dir, tmp); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	// Another process (the app and a bridge) may have linked its own
	// folder meanwhile: the link decides.
	if p, ok := ResolveServerTemp(link); ok {
		if p != dir {
			os.Remove(dir)
			os.Remove(dir + ownerSuffix)
		}
		return p, nil
	}
	return "", fmt.Errorf("private temp folder: %s does not lead to it", link)
}

// ownerSuffix ends the name of the file beside a private temp folder that
// holds the path of the link leading to it.
const ownerSuffix = ".owner"

// orphanAge is how old an owner file must be before its folder may be
// swept: a folder is made before its link, and another process's sweep
// must not take it in between.
const orphanAge = time.Minute

// sweepOrphans removes, from the rootkeeper-UID folder base, the private
// temp folders (and their owner files) that no link leads to any more,
// as of now: their state folder was deleted, or their server removed by a
// Rootkeeper that could not reach them. A folder without an owner file
// (made before there were any) is left alone: nothing says whose it is.
func sweepOrphans(base string, now time.Time) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		name, isOwner := strings.CutSuffix(e.Name(), ownerSuffix)
		if !isOwner || !e.Type().IsRegular() {
			continue
		}
		owner, dir := filepath.Join(base, e.Name()), filepath.Join(base, name)
		fi, err := e.Info()
		if err != nil || now.Sub(fi.ModTime()) < orphanAge || fi.Size() > 4096 {
			continue
		}
		link, err := os.ReadFile(owner)
		if err != nil {
			continue
		}
		if p, ok := ResolveServerTemp(string(link)); ok && p == dir {
			continue
		}
		// RemoveAll removes a symlink, never what it leads to.
		if os.RemoveAll(dir) == nil {
			os.Remove(owner)
		}
	}
}

// ResolveServerTemp follows a link made by ServerTemp and reports the
// folder when it is one: a folder (not a symlink) of this user's in a
// rootkeeper-UID folder of this user's, mode 0700. Anything else (a
// planted link to elsewhere) is not followed.
func ResolveServerTemp(link string) (string, bool) {
	target, err := os.Readlink(link)
	if err != nil || !filepath.IsAbs(target) || filepath.Clean(target) != target {
		return "", false
	}
	base := filepath.Dir(target)
	if filepath.Base(base) != tempBaseName() || !ownFolder(base) || !ownFolder(target) {
		return "", false
	}
	return target, true
}

// RemoveServerTemp deletes server name's private temp folder and its link
// (or a folder of the old layout). RemoveServerFiles calls it with the
// rest of what belongs to a removed server.
func RemoveServerTemp(stateDir, name string) error {
	link, err := ServerTempLink(stateDir, name)
	if err != nil {
		return nil // a name that cannot name a link has none
	}
	var errs []error
	if p, ok := ResolveServerTemp(link); ok {
		errs = append(errs, os.RemoveAll(p))
		if err := os.Remove(p + ownerSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, os.RemoveAll(link)) // a link is removed, not followed
	return errors.Join(errs...)
}

// ownFolder reports whether path is a folder (not a symlink) owned by this
// user that nobody else may enter.
func ownFolder(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
		return false
	}
	if uid, ok := osfile.OwnerOf(fi); ok && uid != os.Geteuid() {
		return false
	}
	return true
}
