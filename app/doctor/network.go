package doctor

import (
	"strings"

	"rootkeeper/app"
	"rootkeeper/app/words"
)

// network checks whether confined servers get a network of their own
// here: where they do not, `ask` and `only` are enforced for TCP connects
// only (each connect is decided; a datagram is not) and destinations have
// no names. A problem only for the servers set to ask or only.
func network(st app.State, isolation func() (bool, string)) Check {
	ok, why := isolation()
	if ok {
		return Check{Name: "network", OK: true, Detail: "confined servers get a network of their own: every destination decided and named, UDP kept inside"}
	}
	var bounded []string
	for _, srv := range st.Servers {
		if m := srv.NetworkOf().Mode; srv.Type == app.TransportStdio && srv.Confine && (m == app.NetworkAsk || m == app.NetworkOnly) {
			bounded = append(bounded, srv.Name)
		}
	}
	c := Check{Name: "network", OK: len(bounded) == 0, Detail: "no network of their own for confined servers here (" + why + "): TCP connects are decided, destinations have no names, UDP is not bounded; off holds"}
	if len(bounded) > 0 {
		c.Detail += "; set to ask or only: " + words.SafeText(strings.Join(bounded, ", "))
		c.Fix = "let Rootkeeper make user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu, kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile allowing userns for rootkeeper)"
	}
	return c
}
