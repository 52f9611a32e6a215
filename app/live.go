package app

import (
	"maps"
	"reflect"
)

// Live is what a running app knows besides its state file: each root's
// last access check, each server's connection, the notices and the
// bridges' sessions. The window, a process of its own (package link),
// mirrors it from the running app into a core whose state it reads from
// the same file.
//
// A nil map means "unchanged" (only parts that changed are sent); an
// empty one means "none".
type Live struct {
	Health  map[string]Health       `json:"health"`
	Servers map[string]ServerStatus `json:"servers"`
	Notices map[string]string       `json:"notices"`
	Bridges map[int]BridgeSession   `json:"bridges"`
}

// LiveSince is what changed in now since was (nil: everything), as a Live
// that leaves unchanged parts nil.
func LiveSince(was, now *Snapshot) Live {
	var l Live
	if was == nil || was.HealthGen != now.HealthGen {
		l.Health = nonNil(now.Health)
	}
	if was == nil || was.ServersGen != now.ServersGen {
		l.Servers = nonNil(now.Servers)
	}
	if was == nil || was.NoticesGen != now.NoticesGen {
		l.Notices = nonNil(now.Notices)
	}
	if was == nil || was.BridgesGen != now.BridgesGen {
		l.Bridges = nonNil(now.Bridges)
	}
	return l
}

// Empty reports whether l changes nothing.
func (l Live) Empty() bool {
	return l.Health == nil && l.Servers == nil && l.Notices == nil && l.Bridges == nil
}

func nonNil[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}

// SetLive replaces the parts of the live view that l carries, in one
// snapshot. The maps become the snapshot's: the caller must not touch
// them again.
func (c *Core) SetLive(l Live) {
	c.publish(func(s *Snapshot) bool {
		changed := false
		if l.Health != nil && !reflect.DeepEqual(s.Health, l.Health) && !(len(s.Health) == 0 && len(l.Health) == 0) {
			s.Health = maps.Clone(l.Health)
			s.HealthGen++
			changed = true
		}
		if l.Servers != nil && !sameStatuses(s.Servers, l.Servers) {
			s.Servers = maps.Clone(l.Servers)
			s.ServersGen++
			changed = true
		}
		if l.Notices != nil && !maps.Equal(s.Notices, l.Notices) {
			s.Notices = maps.Clone(l.Notices)
			s.NoticesGen++
			changed = true
		}
		if l.Bridges != nil && !reflect.DeepEqual(s.Bridges, l.Bridges) && !(len(s.Bridges) == 0 && len(l.Bridges) == 0) {
			s.Bridges = maps.Clone(l.Bridges)
			s.BridgesGen++
			changed = true
		}
		return changed
	})
}

func sameStatuses(a, b map[string]ServerStatus) bool {
	return maps.EqualFunc(a, b, ServerStatus.Equal)
}
