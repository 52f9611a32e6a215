package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"rootkeeper/app/words"
)

// NewRoot makes a Root from what a person picked or typed: the path is made
// absolute (relative to cwd), cleaned and resolved through symlinks; the
// path as given is kept for display; the device is recorded so that an
// unmounted drive is noticed later. The folder must exist and be a folder.
func NewRoot(given, cwd string, src Source) (Root, error) {
	canon, display, err := CanonicalPath(given, cwd)
	if err != nil {
		return Root{}, &InputError{Msg: err.Error()}
	}
	fi, err := os.Stat(canon)
	if err != nil {
		return Root{}, &InputError{Msg: err.Error()}
	}
	if !fi.IsDir() {
		return Root{}, inputErrorf("%q is not a folder", given)
	}
	r := Root{
		Path:   canon,
		Name:   baseName(canon),
		Source: src,
		Device: DeviceOf(canon),
		Added:  time.Now().UTC().Truncate(time.Second),
	}
	if display != canon {
		r.Given = display
		r.Name = baseName(display)
	}
	return r, nil
}

// credentialFolders are folder names whose presence inside a root means
// sharing it would share secrets; a folder so named, or inside one, is
// itself where secrets are kept.
var credentialFolders = []string{".ssh", ".gnupg", ".aws", ".kube", ".docker", ".password-store", ".azure", ".config/gcloud"}

// credentialWords are words that, in a folder's name, suggest it keeps
// credentials ("secrets", "api-keys", "Tokens", "credentials.d").
var credentialWords = []string{
	"key", "keys", "keychain", "keychains", "keyring", "keyrings", "keystore", "secret", "secrets",
	"token", "tokens", "credential", "credentials", "creds", "password", "passwords", "passwd",
	"vault", "certs", "private",
}

// CredentialName is the part of path whose name suggests credentials are
// kept there (".ssh", "secrets", "api-keys"), "" for none: a credential
// folder of credentialFolders, or a folder whose name holds one of
// credentialWords. Under home only the folders below home count (a person
// called Key keeps no secrets in /home/key as such).
func CredentialName(path, home string) string {
	rel := filepath.ToSlash(path)
	if home != "" && IsWithin(path, home) {
		if r, err := filepath.Rel(home, path); err == nil {
			rel = filepath.ToSlash(r)
		}
	} else if home != "" && path == home {
		return ""
	}
	for _, c := range credentialFolders {
		if rel == c || strings.HasPrefix(rel, c+"/") || strings.HasSuffix(rel, "/"+c) || strings.Contains(rel, "/"+c+"/") {
			return c
		}
	}
	for _, part := range strings.Split(rel, "/") {
		words := strings.FieldsFunc(strings.ToLower(part), func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
		})
		for _, w := range words {
			if slices.Contains(credentialWords, w) {
				return part
			}
		}
	}
	return ""
}

// RiskWarnings lists what a person should know before sharing r, one
// sentence each: the whole file system, the home folder itself, a name
// that suggests credentials (CredentialName), credentials inside, a
// symlink leading out of the folder that was picked. home is the person's
// home folder.
func RiskWarnings(r Root, home string) []string {
	var w []string
	if r.Path == "/" || r.Path == filepath.VolumeName(r.Path)+string(filepath.Separator) {
		w = append(w, "This is the whole file system: every file this user can read would be shared.")
	}
	if home != "" {
		if h, err := filepath.EvalSymlinks(home); err == nil {
			home = h
		}
		if r.Path == home {
			w = append(w, "This is your home folder itself: documents, settings and keys would all be shared.")
		} else if strings.HasPrefix(home, r.Path+string(filepath.Separator)) {
			w = append(w, "This folder contains your home folder.")
		}
	}
	if name := CredentialName(r.Path, home); name != "" {
		w = append(w, "Its name, "+words.SafeText(name)+", says credentials may be kept here: keys, tokens or passwords would be shared.")
	}
	for _, name := range credentialFolders {
		if fi, err := os.Stat(filepath.Join(r.Path, name)); err == nil && fi.IsDir() {
			w = append(w, "It holds "+name+", where credentials are kept.")
		}
	}
	if r.Given != "" && r.Given != r.Path {
		inside := strings.HasPrefix(r.Path, filepath.Dir(r.Given)+string(filepath.Separator))
		if !inside {
			w = append(w, "It is a symlink: "+r.Given+" leads to "+r.Path+", elsewhere on disk.")
		}
	}
	return w
}
