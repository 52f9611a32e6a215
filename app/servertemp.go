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
	var rnd [12]byte
	rand.Read(rnd[:])
	dir := filepath.Join(base, hex.EncodeToString(rnd[:]))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("private temp folder: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		os.Remove(dir)
		return "", fmt.Errorf("private temp folder: %w", err)
	}
	// Made aside and renamed into place: a stale link (its folder gone
	// with a reboot's /tmp) is replaced in one step.
	tmp := link + ".new-" + filepath.Base(dir)
	if err := os.Symlink(dir, tmp); err != nil {
		os.Remove(dir)
		return "", fmt.Errorf("private temp folder: %w", err)
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		os.Remove(dir)
		return "", fmt.Errorf("private temp folder: %w", err)
	}
	// Another process (the app and a bridge) may have linked its own
	// folder meanwhile: the link decides.
	if p, ok := ResolveServerTemp(link); ok {
		if p != dir {
			os.Remove(dir)
		}
		return p, nil
	}
	return "", fmt.Errorf("private temp folder: %s does not lead to it", link)
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
