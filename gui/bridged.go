package gui

import (
	"maps"
	"slices"

	"rootkeeper/app"
)

// bridgeLines are the lines a server's card shows about its bridged
// sessions (a host running `rootkeeper bridge NAME`, while the app runs)
// and the folders asked for it that wait for an answer.
func bridgeLines(snap *app.Snapshot, server, home string) []string {
	var out []string
	for _, id := range slices.Sorted(maps.Keys(snap.Bridges)) {
		if b := snap.Bridges[id]; b.Server == server {
			out = append(out, "Live: "+app.BridgeText(b))
		}
	}
	for _, r := range snap.State.RequestsFor(server) {
		out = append(out, "Waiting for your answer: "+app.RequestTextFor(r, home, nil))
	}
	return out
}
