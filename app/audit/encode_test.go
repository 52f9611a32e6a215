package audit

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// entriesToEncode are entries of every shape the log writes, and strings
// json.Marshal escapes.
func entriesToEncode() []Entry {
	east := time.FixedZone("east", 5*3600+30*60)
	return []Entry{
		{Time: t0, Server: "fs", ProtocolVersion: "2025-11-25", Roots: []string{"file:///a", "file:///b%20c"}, Via: ViaRootsList},
		{Time: t0.Add(123456789), Server: "other", Roots: []string{}, Via: ViaRootsList},
		{Time: t0, Server: "fs", Error: "-32601 Roots not supported", Via: ViaInputRequest},
		{Time: t0, Server: "fs", Roots: nil, Via: ViaArgs},
		{Time: t0.In(east), Server: "nosy", Roots: []string{"file:///home/p"}, Via: ViaReach, Tried: "/home/p/.ssh/id_ed25519", Op: "read", Decided: ReachRefused, Request: true, Repeated: 3},
		{Time: t0, Server: "node", Roots: []string{}, Via: ViaReach, Tried: "/usr/local/sbin/node", Op: "execute", Decided: ReachIgnored, Absent: true},
		{Time: t0, Server: "nosy", Roots: []string{}, Via: ViaSummary, Unwritten: map[string]int{ReachIgnored: 4, ReachLimited: 2}, Since: t0.Add(-time.Minute), Tried: "/x", Op: "open"},
		{Time: t0, Server: "q", Roots: []string{}, Via: ViaNetwork, Since: t0.Add(-time.Second)},
		{Time: t0, Server: `a"b\c<d>&e`, Roots: []string{"file:///caf\u00e9", "file:///\u2028", "file:///tab\there"}, Via: "x\x01y"},
		{Time: t0, Server: "bad \xff utf-8", Roots: []string{}, Via: ViaRootsList},
		{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Server: "far", Via: ViaRootsList},
		{Time: t0.In(time.FixedZone("far", 24*3600)), Server: "zone", Via: ViaRootsList},
		{},
	}
}

// TestAppendEntryIsMarshal: every entry is written byte for byte as
// json.Marshal writes it, or fails where it fails.
func TestAppendEntryIsMarshal(t *testing.T) {
	for _, e := range entriesToEncode() {
		checkEncoding(t, e)
	}
}

func FuzzAppendEntry(f *testing.F) {
	for _, e := range entriesToEncode() {
		if len(e.Roots) > 0 {
			f.Add(e.Time.UnixNano(), e.Server, e.Roots[0], e.Error, e.Tried, e.Repeated, e.Request)
		}
	}
	f.Fuzz(func(t *testing.T, at int64, server, root, errText, tried string, repeated int, request bool) {
		checkEncoding(t, Entry{Time: time.Unix(0, at).UTC(), Server: server, Roots: []string{root, server}, Error: errText,
			Via: ViaReach, Tried: tried, Op: root, Decided: errText, Repeated: repeated, Request: request, Since: time.Unix(0, at/2)})
	})
}

func checkEncoding(t *testing.T, e Entry) {
	t.Helper()
	want, werr := json.Marshal(e)
	got, gerr := appendEntry([]byte("kept"), e)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%+v: error %v, json.Marshal's %v", e, gerr, werr)
	}
	if !bytes.HasPrefix(got, []byte("kept")) {
		t.Fatalf("%+v: what came before was lost: %q", e, got)
	}
	if got = got[len("kept"):]; werr == nil && !bytes.Equal(got, want) {
		t.Errorf("%+v:\n got %s\nwant %s", e, got, want)
	}
}
