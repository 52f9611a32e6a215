package detect

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
)

// repoInfo is what a repository says about itself.
type repoInfo struct {
	branch, remote      string
	worktree, submodule bool
}

// maxConfig bounds the files read of a repository (HEAD, a .git file,
// commondir and config); a larger one is ignored.
const maxConfig = 1 << 20

var errTooLarge = errors.New("file too large")

// errNotRegular refuses a pipe or device where a small file was expected.
var errNotRegular = errors.New("not a regular file")

// readRepo reads the repository whose work tree is dir; dotGitIsDir says
// whether dir/.git is a folder (else a "gitdir:" file). enclosing is the
// nearest repository above dir, if any. ok is false when dir/.git is not a
// repository (no readable HEAD).
func readRepo(dir string, dotGitIsDir bool, enclosing string) (info repoInfo, ok bool) {
	gitDir := filepath.Join(dir, ".git")
	commonDir := gitDir
	if !dotGitIsDir {
		if gitDir, ok = readGitFile(gitDir); !ok {
			return info, false
		}
		commonDir = gitDir
		if rel, err := readFile(filepath.Join(gitDir, "commondir")); err == nil {
			// A linked worktree: HEAD is its own, config the main repository's.
			commonDir = resolve(gitDir, string(firstLine(rel)))
			info.worktree = true
		}
	}
	info.branch, ok = readHead(gitDir)
	if !ok {
		return info, false
	}
	info.remote = readRemote(commonDir)
	if enclosing != "" && !info.worktree {
		info.submodule = isSubmodule(enclosing, dir, gitDir)
	}
	return info, true
}

// readBare reads a bare repository (dir is the git directory itself).
func readBare(dir string) (info repoInfo, ok bool) {
	info.branch, ok = readHead(dir)
	if !ok {
		return info, false
	}
	info.remote = readRemote(dir)
	return info, true
}

// readGitFile follows a "gitdir: PATH" file (linked worktrees, submodules,
// --separate-git-dir) to the git directory it names.
func readGitFile(file string) (string, bool) {
	data, err := readFile(file)
	if err != nil {
		return "", false
	}
	line := firstLine(data)
	target, found := bytes.CutPrefix(line, []byte("gitdir:"))
	if !found {
		return "", false
	}
	target = bytes.TrimSpace(target)
	if len(target) == 0 {
		return "", false
	}
	return resolve(filepath.Dir(file), string(target)), true
}

// readHead returns the branch HEAD names (also for an empty repository, whose
// branch has no commit yet), or the short commit of a detached HEAD. ok is
// false when HEAD is missing or is not a git HEAD.
func readHead(gitDir string) (branch string, ok bool) {
	data, err := readFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return "", false
	}
	line := firstLine(data)
	if ref, found := bytes.CutPrefix(line, []byte("ref:")); found {
		ref = bytes.TrimSpace(ref)
		if !bytes.HasPrefix(ref, []byte("refs/")) {
			return "", false
		}
		name := strings.TrimPrefix(string(ref), "refs/heads/")
		if name == ".invalid" {
			// reftable storage keeps the real HEAD elsewhere; say nothing
			// rather than something wrong.
			name = ""
		}
		return name, true
	}
	if (len(line) == 40 || len(line) == 64) && isHex(line) {
		return string(line[:7]), true
	}
	return "", false
}

// readRemote returns the URL of the first remote in gitDir/config that has
// one, with credentials stripped, or "".
func readRemote(gitDir string) string {
	cfg := readConfig(filepath.Join(gitDir, "config"))
	if cfg == nil {
		return ""
	}
	for _, s := range cfg.Sections {
		if !s.IsName("remote") {
			continue
		}
		for _, sub := range s.Subsections {
			if u := sub.Option("url"); u != "" {
				return StripCredentials(u)
			}
		}
	}
	return ""
}

// readConfig parses a git config file with go-git's parser, which (unlike
// go-git's repository opener) does not mind an [extensions] section.
func readConfig(file string) *gitconfig.Config {
	data, err := readFile(file)
	if err != nil {
		return nil
	}
	cfg := gitconfig.New()
	if err := gitconfig.NewDecoder(bytes.NewReader(data)).Decode(cfg); err != nil {
		return nil
	}
	return cfg
}

// isSubmodule says whether the repository at dir, whose git directory is
// gitDir, is a submodule of parent: the parent's .gitmodules lists it, or its
// git directory sits in the parent's modules folder (absorbed submodules).
func isSubmodule(parent, dir, gitDir string) bool {
	rel, err := filepath.Rel(parent, dir)
	if err != nil {
		return false
	}
	rel = filepath.ToSlash(rel)
	if cfg := readConfig(filepath.Join(parent, ".gitmodules")); cfg != nil {
		for _, s := range cfg.Sections {
			if !s.IsName("submodule") {
				continue
			}
			for _, sub := range s.Subsections {
				if p := sub.Option("path"); p != "" && filepath.ToSlash(filepath.Clean(p)) == rel {
					return true
				}
			}
		}
	}
	parentGit := filepath.Join(parent, ".git")
	if fi, err := os.Lstat(parentGit); err == nil && !fi.IsDir() {
		if g, ok := readGitFile(parentGit); ok {
			parentGit = g
		}
	}
	return strings.HasPrefix(gitDir, parentGit+string(filepath.Separator)+"modules"+string(filepath.Separator))
}

// StripCredentials removes what could be a secret from a remote URL: the
// whole user part of an http(s) or ftp(s) URL ("https://user:token@host/x"
// becomes "https://host/x", as does "https://token@host/x"), and the
// password of any other URL ("ssh://git:pw@host/x" becomes "ssh://git@host/x").
// scp-like addresses ("git@host:x") and local paths carry no password and
// are returned as they are. Nothing else of the URL is changed.
func StripCredentials(raw string) string {
	i := strings.Index(raw, "://")
	if i <= 0 {
		return raw
	}
	scheme := strings.ToLower(raw[:i])
	rest := raw[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 {
		return raw
	}
	user := rest[:at]
	switch scheme {
	case "http", "https", "ftp", "ftps":
		user = ""
	default:
		if c := strings.IndexByte(user, ':'); c >= 0 {
			user = user[:c]
		}
		if user != "" {
			user += "@"
		}
	}
	return raw[:i+3] + user + rest[at+1:]
}

// enclosingRepo returns the nearest folder strictly above dir that holds a
// .git entry, or "".
func enclosingRepo(dir string) string {
	for {
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
	}
}

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return bytes.TrimSpace(b)
}

func resolve(base, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p)
}

func isHex(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
