package app

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// checkEncodeState fails unless c encodes st as json.MarshalIndent does,
// errors included.
func checkEncodeState(t *testing.T, c *stateEncoder, st State) {
	t.Helper()
	want, werr := json.MarshalIndent(st, "", "  ")
	got, gerr := c.encode(st)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("error %v, json.MarshalIndent's %v", gerr, werr)
	}
	if werr == nil && !bytes.Equal(got, append(want, '\n')) {
		t.Fatalf("encoded\n%s\njson.MarshalIndent:\n%s", got, want)
	}
}

// Decisions encoded by hand, against encoding/json: any strings, any
// times (those json.Marshal refuses included), a state with other parts
// around them.
func FuzzEncodeState(f *testing.F) {
	f.Add("fs", "/home/me/src", "allow", "always", "dialog", int64(1764079200), int64(123456789), 0, false)
	f.Add("<", ">", "&", "\x7f", "\t", int64(1), int64(1), 1, false)
	f.Add("a<b>&c", "/x/\"quoted\"\\", "deny", "until-quit", "cli\n", int64(0), int64(0), 3600, true)
	f.Add("é\u2028", "\xff\xfe", "", "", "", int64(-62135596800), int64(1), -7200, false) // the year 1
	f.Add("s", "/r", "allow", "always", "tray", int64(253402300800), int64(0), 0, true)   // the year 10000
	f.Add("s", "/r", "allow", "always", "tray", int64(0), int64(0), 25*3600, true)        // 25 hours east
	f.Fuzz(func(t *testing.T, server, root, verdict, scope, by string, sec, nsec int64, offset int, paused bool) {
		zone := time.FixedZone("z", offset%(48*3600))
		when := time.Unix(sec, nsec).In(zone)
		st := State{Version: StateVersion, Paused: paused,
			Roots:   []Root{{Path: root, Name: server, Added: when}},
			Servers: []Server{{Name: server, Type: TransportStdio, Command: by, Env: map[string]string{root: verdict}}},
			Decisions: []Decision{
				{Server: server, Root: root, Verdict: Verdict(verdict), Scope: Scope(scope), At: when, By: Source(by)},
				{Server: by, Root: server, Verdict: Allow, Scope: Always, At: when.UTC(), By: ByCommandLine},
			},
			PrivateEnv: []string{scope}}
		checkEncodeState(t, nil, st)
		checkEncodeState(t, &stateEncoder{}, st)
	})
}

// An encoder reuses what it encoded of the list of servers it was given
// last, when it is given that very list again (a saved state's lists are
// never changed: here one is, to see the reuse), and never for an equal
// list of its own or another one.
func TestStateEncoderRemembersTheSameServers(t *testing.T) {
	st := richState(t, 3, 5)
	var c stateEncoder
	checkEncodeState(t, &c, st)
	next := st
	next.Decisions = st.Clone().Decisions[1:]
	checkEncodeState(t, &c, next) // the same servers, other decisions
	other := st.Clone()
	other.Servers[0].Name = "renamed"
	checkEncodeState(t, &c, other) // a list of its own
	checkEncodeState(t, &c, st)
	none := st
	none.Servers = []Server{}
	checkEncodeState(t, &c, none)
	none.Servers = nil
	checkEncodeState(t, &c, none)

	checkEncodeState(t, &c, st)
	st.Servers[0].Name = "changed in place" // what never happens to a saved state
	got, err := c.encode(st)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(got, []byte("changed in place")) {
		t.Fatal("the same list was encoded again: its encoding is not reused")
	}
}

// A change that leaves the servers as they were is saved and published
// with the very list of servers the last save held (what the manager and
// the encoder take as unchanged at once); one that changes them, with its
// own.
func TestUpdateKeepsUnchangedServersAsTheyWere(t *testing.T) {
	store, core := openCore(t)
	root := t.TempDir()
	if err := core.Update(func(s *State) error {
		for _, name := range []string{"a", "b"} {
			if err := s.AddServer(Server{Name: name, Type: TransportStdio, Command: "x"}); err != nil {
				return err
			}
		}
		return s.AddRoot(Root{Path: root, Enabled: true})
	}); err != nil {
		t.Fatal(err)
	}
	before := core.Snapshot().State.Servers
	if err := core.Update(func(s *State) error { return s.Decide(Decision{Server: "a", Root: root, Verdict: Allow}) }); err != nil {
		t.Fatal(err)
	}
	after := core.Snapshot().State.Servers
	if len(after) != 2 || &after[0] != &before[0] {
		t.Fatal("a decision made the servers a new list")
	}
	if err := core.Update(func(s *State) error { s.Servers[1].Cwd = "/w"; return nil }); err != nil {
		t.Fatal(err)
	}
	changed := core.Snapshot().State.Servers
	if &changed[0] == &after[0] || changed[1].Cwd != "/w" || after[1].Cwd != "" {
		t.Fatalf("a change of a server: %+v, before %+v", changed, after)
	}
	st, err := store.Load()
	if err != nil || st.Servers[1].Cwd != "/w" || len(st.Decisions) != 1 {
		t.Fatalf("saved: %v %+v", err, st)
	}
}
