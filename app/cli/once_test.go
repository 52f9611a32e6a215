package cli

import (
	"strings"
	"testing"
	"time"

	"rootkeeper/app"
)

// askReach records calls of nosy waiting on its reach request for folder,
// as a confined server's attempts do.
func (h *harness) askReach(folder string, calls ...app.ReachCall) {
	h.t.Helper()
	store, err := app.OpenStore(h.dir)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := store.Update(func(s *app.State) error {
		for _, c := range calls {
			if _, err := s.AskReach("nosy", folder, c, time.Now().UTC(), true); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		h.t.Fatal(err)
	}
}

// waitingCalls are nosy's calls waiting on folder, as `status --json`
// lists them.
func (h *harness) waitingCalls(folder string) []app.ReachCall {
	h.t.Helper()
	for _, s := range h.status().Servers {
		for _, r := range s.Requests {
			if s.Name == "nosy" && r.Path == folder {
				return r.Calls
			}
		}
	}
	return nil
}

// TestStatusShowsEachWaitingCallWithItsShortID: every waiting call has a
// short id in `status --json` and `status` (six characters, longer where
// two calls' ids begin alike), and `status` suggests the command that lets
// exactly that call through once; the folder's once is offered for the
// reads only.
func TestStatusShowsEachWaitingCallWithItsShortID(t *testing.T) {
	h := newHarness(t)
	h.ok("servers", "add", "nosy", "--", "nosy")
	secret := h.folder("secret")
	h.askReach(secret,
		app.ReachCall{ID: "3fa9c1d2e0b4a789", Op: app.OpRead, Path: secret + "/a.txt"},
		app.ReachCall{ID: "3fa9c1ff00000000", Op: app.OpTruncate, Path: secret + "/a.txt"},
		app.ReachCall{ID: "77e0a1b2c3d4e5f6", Op: app.OpReplace, Path: secret + "/b.txt"},
	)
	short := map[string]string{}
	for _, c := range h.waitingCalls(secret) {
		short[c.ID] = c.Short
	}
	want := map[string]string{"3fa9c1d2e0b4a789": "3fa9c1d", "3fa9c1ff00000000": "3fa9c1f", "77e0a1b2c3d4e5f6": "77e0a1"}
	for id, s := range want {
		if short[id] != s {
			t.Errorf("status --json gives call %s the short id %q, want %q", id, short[id], s)
		}
	}
	out := h.ok("status")
	for _, line := range []string{
		"[3fa9c1d] read " + secret + "/a.txt (once: `rootkeeper grant nosy --once --call 3fa9c1d`)",
		"[3fa9c1f] empty and rewrite " + secret + "/a.txt (once: `rootkeeper grant nosy --once --call 3fa9c1f`)",
		"[77e0a1] replace (empty and rewrite) " + secret + "/b.txt (once: `rootkeeper grant nosy --once --call 77e0a1`)",
		"every read and listing at once (no change): `rootkeeper grant nosy " + secret + " --once`",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("status lacks %q:\n%s", line, out)
		}
	}
}

// TestGrantOnceByPathLetsOnlyReadsThrough is the attack on the
// command line: a read of a.txt waits, a truncating write of a.txt joins;
// `grant nosy a.txt --once` lets the read through and refuses the write,
// naming it with its id; the folder's once lets no change through; where
// only a change waits the path form is refused (exit 2, nothing saved) and
// points at --call, which lets exactly that call through.
func TestGrantOnceByPathLetsOnlyReadsThrough(t *testing.T) {
	h := newHarness(t)
	h.ok("servers", "add", "nosy", "--", "nosy")
	secret := h.folder("secret")
	a := secret + "/a.txt"
	read := app.ReachCall{ID: "aaaaaa0000000001", Op: app.OpRead, Path: a}
	trunc := app.ReachCall{ID: "bbbbbb0000000002", Op: app.OpTruncate, Path: a}
	mkdir := app.ReachCall{ID: "cccccc0000000003", Op: app.OpMkdir, Path: secret + "/d", NotOnce: "a folder cannot be made for it once"}

	h.askReach(secret, read, trunc)
	out := h.ok("grant", "nosy", a, "--once")
	if !strings.Contains(out, "  [aaaaaa] read "+a+"\n") || !strings.Contains(out, "refused: [bbbbbb] empty and rewrite "+a+" (a change goes through once only when named by its id") {
		t.Errorf("grant --once of a.txt with a read and a truncate of it waiting:\n%s", out)
	}
	if strings.Contains(out, "  [bbbbbb]") {
		t.Errorf("the truncate was let through on a once given for the file:\n%s", out)
	}

	h.askReach(secret, read, trunc, mkdir)
	out = h.ok("grant", "nosy", secret, "--once")
	for _, want := range []string{"  [aaaaaa] read " + a + "\n", "refused: [bbbbbb] empty and rewrite " + a, "refused: [cccccc] make the folder " + secret + "/d (a folder cannot be made for it once)"} {
		if !strings.Contains(out, want) {
			t.Errorf("grant --once of the folder does not say %q:\n%s", want, out)
		}
	}

	h.askReach(secret, trunc)
	h.fails(2, []string{"grant", "nosy", a, "--once"}, "empty and rewrite "+a, "--once --call bbbbbb")
	h.fails(2, []string{"grant", "nosy", secret, "--once"}, "empty and rewrite "+a, "--once --call bbbbbb")
	if calls := h.waitingCalls(secret); len(calls) != 1 || calls[0].ID != trunc.ID {
		t.Fatalf("after the refused onces the truncate should still wait: %+v", calls)
	}
	out = h.ok("grant", "nosy", "--once", "--call", "bbbbbb")
	if !strings.Contains(out, "  [bbbbbb] empty and rewrite "+a+"\n") {
		t.Errorf("grant --once --call of the truncate:\n%s", out)
	}
}

// TestGrantOnceByCallLetsExactlyTheCallsNamed: --call takes short and full
// ids, repeated or comma-separated, across folders; the calls not named on
// a request it answers are refused and said so; an id that names no
// waiting call, a call allow once cannot do alone, --call without --once
// or with a path are refused with exit 2, naming the value, and nothing is
// let through.
func TestGrantOnceByCallLetsExactlyTheCallsNamed(t *testing.T) {
	h := newHarness(t)
	h.ok("servers", "add", "nosy", "--", "nosy")
	secret, other := h.folder("secret"), h.folder("other")
	read := app.ReachCall{ID: "aaaaaa0000000001", Op: app.OpRead, Path: secret + "/a.txt"}
	create := app.ReachCall{ID: "bbbbbb0000000002", Op: app.OpCreate, Path: secret + "/new.txt"}
	write := app.ReachCall{ID: "cccccc0000000003", Op: app.OpWrite, Path: secret + "/b.txt"}
	watch := app.ReachCall{ID: "dddddd0000000004", Op: app.OpWatch, Path: other, NotOnce: "a watch cannot be set for it once"}
	list := app.ReachCall{ID: "eeeeee0000000005", Op: app.OpList, Path: other}
	h.askReach(secret, read, create, write)
	h.askReach(other, watch, list)

	h.fails(2, []string{"grant", "nosy", "--once", "--call", "bbbbbb", "--call", "ffffff"}, `"ffffff"`, "names no call of nosy waiting now")
	h.fails(2, []string{"grant", "nosy", "--once", "--call", "dddddd"}, "watch for changes in "+other, "a watch cannot be set for it once")
	h.fails(2, []string{"grant", "nosy", "--call", "bbbbbb"}, "--once")
	h.fails(2, []string{"grant", "nosy", secret, "--once", "--call", "bbbbbb"}, secret)
	h.fails(2, []string{"grant", "nosy", "--once", "--call", ","}, `","`)

	out := h.ok("grant", "nosy", "--once", "--call", "bbbbbb,cccccc0000000003", "--call", "eeeeee")
	for _, want := range []string{
		"  [bbbbbb] create " + secret + "/new.txt\n",
		"  [cccccc] change " + secret + "/b.txt\n",
		"refused: [aaaaaa] read " + secret + "/a.txt (not named)",
		"  [eeeeee] list " + other + "\n",
		"refused: [dddddd] watch for changes in " + other + " (a watch cannot be set for it once)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("grant --once --call does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "  [aaaaaa]") || strings.Contains(out, "  [dddddd]") {
		t.Errorf("a call not named went through:\n%s", out)
	}
	if h.waitingCalls(secret) != nil || h.waitingCalls(other) != nil {
		t.Error("the requests answered stayed open")
	}
}
