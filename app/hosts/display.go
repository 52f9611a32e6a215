package hosts

import (
	"strings"
)

// DisplayName is how a person reads the name of a server protect imported:
// "claude-code.filesystem" is "filesystem (Claude Code)", and a project's
// or a local scope's "claude-code.api-1a2b3c.postgres" is "postgres
// (Claude Code, api)". A host's ID alone ("cursor") is the host's name
// ("Cursor"), and "claude-code 2.1.3" (a bridged host and its version)
// "Claude Code 2.1.3". Any other name is returned as it is. It is for the window's
// dialogs only: status, the command line and the state file keep the
// internal name, which is what `grant` and `bridge` take.
func DisplayName(name string) string {
	if h, ok := Lookup(name); ok {
		return h.Name
	}
	if id, version, ok := strings.Cut(name, " "); ok { // a host's "ID VERSION"
		if h, ok := Lookup(id); ok {
			return h.Name + " " + version
		}
		return name
	}
	id, rest, ok := strings.Cut(name, ".")
	if !ok || rest == "" {
		return name
	}
	h, ok := Lookup(id)
	if !ok {
		return name
	}
	where := h.Name
	if tag, server, ok := strings.Cut(rest, "."); ok && server != "" {
		if project, ok := tagProject(tag); ok {
			where += ", " + project
			rest = server
		}
	}
	return rest + " (" + where + ")"
}

// tagProject reads a scope tag made by baseTag, "NAME-HHHHHH" (a folder's
// name and six hex digits of a hash of its path), and returns NAME.
func tagProject(tag string) (string, bool) {
	i := strings.LastIndexByte(tag, '-')
	if i <= 0 || len(tag)-i-1 != 6 {
		return "", false
	}
	for _, r := range tag[i+1:] {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return "", false
		}
	}
	return tag[:i], true
}
