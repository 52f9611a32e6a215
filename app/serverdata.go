package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"rootkeeper/app/osfile"
)

// A confined server's data folder, STATE/data/NAME, is where its own
// settings, logs and data go: read-write for that server alone, kept across
// restarts (unlike its private temp folder), counted in the state folder's
// budget, shown on its card, removed with the server (RemoveServerFiles).
// It is inside the state folder, which the server may not otherwise reach:
// its ruleset grants this one folder of it. The server is pointed at it through its environment
// (XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_STATE_HOME, and what the table of
// known servers says, such as server-memory's MEMORY_FILE_PATH: see
// KnownServers).

// ServerDataFolder is server name's data folder in stateDir, whether or not
// it exists: STATE/data/NAME, where a name that is . or .. has its dots
// written %2E (and a % of a name %25, so that no two names share a
// folder). A name that cannot name a folder is refused.
func ServerDataFolder(stateDir, name string) (string, error) {
	if stateDir == "" {
		return "", errors.New("no state folder to keep the server's data in")
	}
	if name == "" || strings.ContainsAny(name, `/\`+string(filepath.Separator)+"\x00") {
		return "", fmt.Errorf("server name %q cannot name a folder", name)
	}
	base := strings.ReplaceAll(name, "%", "%25")
	if base == "." || base == ".." {
		base = strings.ReplaceAll(base, ".", "%2E")
	}
	return filepath.Join(stateDir, "data", base), nil
}

// ServerData returns server name's data folder, creating it (0700) when
// missing. Anything but a folder of this user's at that place (a symlink
// planted to lead elsewhere) is refused, never followed.
func ServerData(stateDir, name string) (string, error) {
	dir, err := ServerDataFolder(stateDir, name)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return "", fmt.Errorf("data folder: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("data folder: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("data folder: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("data folder: %s is not a folder", dir)
	}
	if uid, ok := osfile.OwnerOf(fi); ok && uid != os.Geteuid() {
		return "", fmt.Errorf("data folder: %s belongs to user %d, not to you", dir, uid)
	}
	return dir, nil
}
