package app

import (
	"maps"
	"slices"
)

// SameServers reports whether a and b hold the same configurations, field
// for field, as reflect.DeepEqual finds them (a nil list, map or network
// setting differs from an empty one), without its reflection: the manager
// asks it at every change of the state, and the store before it saves (a
// grant to fifty servers walked them all by reflection, some 300
// allocations). Where it is not sure it says false, never true: times are
// compared with ==, which compares their locations' pointers too.
func SameServers(a, b []Server) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	for i := range a {
		if !a[i].same(&b[i]) {
			return false
		}
	}
	return true
}

// same compares every field of s and o (TestSameServersSeesEveryField
// fails when a field is added to Server and not here).
func (s *Server) same(o *Server) bool {
	return s.Name == o.Name && s.Type == o.Type && s.Command == o.Command && sameList(s.Args, o.Args) &&
		sameMap(s.Env, o.Env) && s.Cwd == o.Cwd && s.Confine == o.Confine && s.ConfineRequired == o.ConfineRequired &&
		s.URL == o.URL && sameMap(s.Headers, o.Headers) && s.RootsMode == o.RootsMode && s.Sampling == o.Sampling &&
		s.HostRoots == o.HostRoots && s.Network.same(o.Network) && sameList(s.KeepArgs, o.KeepArgs) &&
		sameList(s.Slots, o.Slots) && sameList(s.Lost, o.Lost) && s.FoldersTakenOff == o.FoldersTakenOff &&
		s.DataProgram == o.DataProgram && sameList(s.KeptData, o.KeptData)
}

// same compares two network settings (nil for none) field for field.
func (n *NetworkSetting) same(o *NetworkSetting) bool {
	if n == nil || o == nil {
		return n == o
	}
	return n.Mode == o.Mode && sameList(n.Allow, o.Allow) && sameList(n.Deny, o.Deny)
}

// sameList is slices.Equal, a nil list apart from an empty one.
func sameList[T comparable](a, b []T) bool { return (a == nil) == (b == nil) && slices.Equal(a, b) }

// sameMap is maps.Equal, a nil map apart from an empty one.
func sameMap(a, b map[string]string) bool { return (a == nil) == (b == nil) && maps.Equal(a, b) }
