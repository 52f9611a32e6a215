package health

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"rootkeeper/app/osfile"
)

// gitInfo finds root's git directory (a .git folder, or the folder a .git
// file points to with "gitdir:", as in linked worktrees and submodules) and
// the branch its HEAD names. Both are empty when root is not a repository.
func gitInfo(root string) (gitDir, branch string) {
	dot := filepath.Join(root, ".git")
	fi, err := os.Stat(dot)
	if err != nil {
		return "", ""
	}
	gitDir = dot
	if !fi.IsDir() {
		gitDir = readGitdirFile(dot)
		if gitDir == "" {
			return "", ""
		}
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(root, gitDir)
		}
		gitDir = filepath.Clean(gitDir)
	}
	head, err := readSmall(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return gitDir, ""
	}
	return gitDir, branchFromHEAD(head)
}

// readGitdirFile returns the path in a ".git" file's "gitdir: PATH" line.
func readGitdirFile(path string) string {
	data, err := readSmall(path)
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "gitdir:"); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

// branchFromHEAD turns the content of a HEAD file into what is shown as the
// branch: "ref: refs/heads/X" is X, another symbolic ref is shown without
// "refs/", and a detached HEAD is its abbreviated commit hash.
func branchFromHEAD(head []byte) string {
	s := strings.TrimSpace(string(head))
	if ref, ok := strings.CutPrefix(s, "ref:"); ok {
		ref = strings.TrimSpace(ref)
		if b, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
			return b
		}
		return strings.TrimPrefix(ref, "refs/")
	}
	if isHex(s) && len(s) >= 7 {
		return s[:7]
	}
	return ""
}

func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return s != ""
}

// readSmall reads at most 4 KiB of path: HEAD and .git files are one line,
// and a huge file there is not one git wrote.
//
// It never waits on a FIFO or a device standing where the file should be
// (any repository can hold one): the open does not block, and anything but
// a regular file is refused.
func readSmall(path string) ([]byte, error) {
	f, err := osfile.OpenNoWait(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: errors.New("not a regular file")}
	}
	buf := make([]byte, 4096)
	n, err := f.Read(buf)
	if n > 0 {
		return buf[:n], nil
	}
	return nil, err
}
