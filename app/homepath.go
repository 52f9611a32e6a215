package app

import (
	"path/filepath"
	"strings"
)

// HomeShort writes path the way people read it: under home it becomes
// "~/rest" (home itself "~"), anything else is unchanged. It is for
// labels only: the consent dialogs and the audit log keep whole paths, so
// that what is decided is never ambiguous. A path that merely starts with
// home's text ("/home/ada2" for "/home/ada") is not under it.
func HomeShort(path, home string) string {
	home = strings.TrimRight(home, `/\`)
	if home == "" || !filepath.IsAbs(path) {
		return path
	}
	if path == home {
		return "~"
	}
	rest, ok := strings.CutPrefix(path, home)
	if !ok || rest[0] != '/' && rest[0] != filepath.Separator {
		return path
	}
	return "~" + rest
}
