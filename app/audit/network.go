package audit

import "time"

// The person's decisions on a server's network (Entry.Decided, with Via
// ViaNetwork and Op the Source that decided): always in the trail.
const (
	NetworkAllowed = "allowed always" // Tried: the destination
	NetworkDenied  = "denied"         // Tried: the destination
	NetworkSet     = "set"            // Tried: the setting as status words it ("only api.x:443")
)

// NetworkDecision records the person's decision on server's network,
// taken by (an app.Source: "dialog", "window", "command-line"), in the
// audit log of the state folder dir: a destination allowed always or
// denied, or the setting changed (decided is one of the Network…
// constants, what the destination or the setting).
func NetworkDecision(dir, server, decided, what, by string) error {
	l := NewLog(dir)
	defer l.Close()
	return l.Append(Entry{Time: time.Now().UTC(), Server: server, Roots: []string{}, Via: ViaNetwork, Op: by, Tried: what, Decided: decided})
}

// IsNetworkDecision reports whether e (Via ViaNetwork) is the person's
// decision, not a server's contact.
func IsNetworkDecision(e Entry) bool {
	return e.Decided == NetworkAllowed || e.Decided == NetworkDenied || e.Decided == NetworkSet
}
