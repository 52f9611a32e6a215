package app

import (
	"fmt"
	"maps"
	"strings"
	"time"

	"rootkeeper/app/words"
)

// BridgeSession is what a running bridge (`rootkeeper bridge NAME`, started
// by a host) shows of itself to the app: which host, which server, the
// protocol version, the server's pid, the host's folders and what the
// server was last sent.
type BridgeSession struct {
	// ID tells sessions apart: the bridge's own pid.
	ID              int       `json:"id"`
	Server          string    `json:"server"`
	Host            string    `json:"host,omitempty"`
	HostVersion     string    `json:"hostVersion,omitempty"`
	ProtocolVersion string    `json:"protocolVersion,omitempty"`
	PID             int       `json:"pid,omitempty"`
	HostRoots       []string  `json:"hostRoots,omitempty"`
	LastSent        []string  `json:"lastSent"`
	LastSentAt      time.Time `json:"lastSentAt,omitzero"`
	// Held says why the server is not started yet (a slot of its
	// configuration waits for the person's decision); empty once it runs.
	Held string `json:"held,omitempty"`
	// Seen is when the app last heard from the bridge.
	Seen time.Time `json:"seen"`
}

// BridgeTimeout is how long a bridge session stays listed without news
// (bridges report every few seconds while they run).
const BridgeTimeout = 15 * time.Second

// SeenBridge records (or refreshes) a bridge session.
func (c *Core) SeenBridge(s BridgeSession) {
	s.Seen = time.Now().UTC()
	c.publish(func(snap *Snapshot) bool {
		snap.Bridges = maps.Clone(snap.Bridges)
		if snap.Bridges == nil {
			snap.Bridges = map[int]BridgeSession{}
		}
		snap.Bridges[s.ID] = s
		snap.BridgesGen++
		return true
	})
}

// ExpireBridges forgets the sessions not heard from since before.
func (c *Core) ExpireBridges(before time.Time) {
	c.publish(func(snap *Snapshot) bool {
		changed := false
		for id, s := range snap.Bridges {
			if s.Seen.Before(before) {
				if !changed {
					snap.Bridges = maps.Clone(snap.Bridges)
					changed = true
				}
				delete(snap.Bridges, id)
			}
		}
		if changed {
			snap.BridgesGen++
		}
		return changed
	})
}

// BridgeText is how a bridge session reads to a person: "bridged for
// claude-code 2.1.330 (protocol 2025-06-18, server pid 4242), last sent 2
// roots". Everything in it came from a host or a server: it is made safe
// to show.
func BridgeText(b BridgeSession) string {
	host := strings.TrimSpace(b.Host + " " + b.HostVersion)
	if host == "" {
		host = "a host"
	}
	var facts []string
	if b.ProtocolVersion != "" {
		facts = append(facts, "protocol "+b.ProtocolVersion)
	}
	if b.PID > 0 {
		facts = append(facts, fmt.Sprintf("server pid %d", b.PID))
	}
	text := "bridged for " + host
	if b.Held != "" {
		// The host waits for its initialize while the person decides.
		return words.SafeText(text + ", not started: " + b.Held)
	}
	if len(facts) > 0 {
		text += " (" + strings.Join(facts, ", ") + ")"
	}
	n := len(b.LastSent)
	switch {
	case b.LastSentAt.IsZero() && n == 0:
		text += ", no roots sent yet"
	case n == 1:
		text += ", last sent 1 root"
	default:
		text += fmt.Sprintf(", last sent %d roots", n)
	}
	return words.SafeText(text)
}
