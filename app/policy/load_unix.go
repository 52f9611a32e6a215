//go:build unix

package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
)

// systemLocation is the policy file's place on this system.
var systemLocation = func() string {
	if runtime.GOOS == "darwin" {
		return "/Library/Application Support/Rootkeeper/policy.json"
	}
	return "/etc/rootkeeper/policy.json"
}()

// fromSystemStore: unix systems keep the policy in a file only.
func fromSystemStore() ([]byte, string, bool) { return nil, "", false }

// adminOnly says why f (at path) could have been written by someone other
// than an administrator (root), "" when it could not: a regular file of
// root's that neither its group nor others may write, in folders (with
// parents) likewise.
func adminOnly(f *os.File, path string, parents bool) string {
	fi, err := f.Stat()
	if err != nil {
		return "cannot check it: " + err.Error()
	}
	if !fi.Mode().IsRegular() {
		return "it is not a regular file"
	}
	if why := rootOnly(fi, path); why != "" {
		return why
	}
	if !parents {
		return ""
	}
	for d := filepath.Dir(path); ; d = filepath.Dir(d) {
		di, err := os.Stat(d)
		if err != nil {
			return "cannot check " + d + ": " + err.Error()
		}
		if why := rootOnly(di, d); why != "" {
			return why
		}
		if d == "/" {
			return ""
		}
	}
}

func rootOnly(fi os.FileInfo, path string) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	if st.Uid != 0 {
		return fmt.Sprintf("%s belongs to user %d, not to an administrator", path, st.Uid)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Sprintf("%s can be written by others than an administrator (mode %o)", path, fi.Mode().Perm())
	}
	return ""
}
