package app

import (
	"fmt"

	"rootkeeper/app/words"
)

// RequestTextFor is RequestText as the window words it for a person:
// paths under home written from "~" ("filesystem (Claude Code) is configured with
// ~/Desktop on its command line"), and server and host names through name
// (the window passes hosts.DisplayName; nil keeps them). status and the
// command line keep RequestText, with whole paths and internal names.
func RequestTextFor(r Request, home string, name func(string) string) string {
	if name == nil {
		name = func(s string) string { return s }
	}
	path := words.HomeShort(r.Path, home)
	if r.From == FromReach {
		return reachText(r, home, name)
	}
	if r.From == FromNetwork {
		return networkText(r, name)
	}
	if r.From == FromCommandLine {
		return words.SafeText(fmt.Sprintf("%s is configured with %s", name(r.Server), path))
	}
	return words.SafeText(fmt.Sprintf("%s asks that %s see %s", name(r.From), name(r.Server), path))
}
