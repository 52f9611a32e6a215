package doctor

import (
	"fmt"
	"strings"

	"rootkeeper/app/hosts"
)

// Hosts checks each host config file Rootkeeper protected: every server in
// it must still run the bridge. A host that added a server, or an entry put
// back by hand, runs that server beside Rootkeeper, its roots unbound. Other
// changes (hosts keep their own settings in these files) are fine. A host's
// file Rootkeeper refuses to read (a named pipe, a device, a file larger
// than any config), protected or not, is a problem too: its servers cannot
// be seen nor protected.
func Hosts(found []hosts.Found, err error) []Check {
	if err != nil {
		return []Check{{Name: "hosts", Detail: fmt.Sprintf("cannot read the hosts' files: %v", err), Fix: "see `rootkeeper hosts list`"}}
	}
	var out []Check
	for _, h := range found {
		for _, f := range h.Files {
			name := "host " + h.ID
			if f.Refused != "" {
				out = append(out, Check{Name: name, Detail: f.Refused, Fix: "put the host's own config file there (or remove what is there), then run `rootkeeper hosts list`"})
				continue
			}
			if !f.Recorded {
				continue
			}
			if f.Err != "" {
				out = append(out, Check{Name: name, Detail: fmt.Sprintf("%s cannot be read: %s", f.Path, f.Err), Fix: "fix the file, or give it back with `rootkeeper hosts restore " + h.ID + "`"})
				continue
			}
			var bare []string
			for _, e := range f.Entries {
				if !e.Protected {
					bare = append(bare, e.Name)
				}
			}
			if len(bare) > 0 {
				out = append(out, Check{Name: name,
					Detail: fmt.Sprintf("%s: %s not behind the bridge (added or changed since protect)", f.Path, strings.Join(bare, ", ")),
					Fix:    "rootkeeper hosts protect " + h.ID})
				continue
			}
			detail := fmt.Sprintf("%s: all %d servers run the bridge", f.Path, len(f.Entries))
			if f.ChangedSinceProtect {
				detail += " (the host changed other parts of the file since)"
			}
			out = append(out, Check{Name: name, OK: true, Detail: detail})
		}
	}
	return out
}
