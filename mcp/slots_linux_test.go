package mcp

import (
	"strings"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/audit"
)

// startAfterChecks starts server-filesystem as fs, confined or not, with
// a folder a allowed to it whose access check comes in only after the
// manager started (as the health monitor's first pass does). It returns
// once fs has said it waits for that check, checked that it has not
// started meanwhile, and, the check in, sees that it connected holding a.
func startAfterChecks(t *testing.T, confined bool) (e *testEnv, a string, logs *syncBuffer) {
	t.Helper()
	fs := apptest.NPMServer(t, "mcp-server-filesystem")
	e = newEnv(t)
	a = mkRoot(t, "a")
	e.put(app.Server{Name: "fs", Type: app.TransportStdio, Command: fs, Confine: confined})
	e.update(func(s *app.State) error {
		if err := s.AddRoot(app.Root{Path: a, Enabled: true}); err != nil {
			return err
		}
		return s.Decide(app.Decision{Server: "fs", Root: a, Verdict: app.Allow, By: app.ByCommandLine})
	})
	opts := e.fastOptions()
	opts.SettleTimeout = time.Minute // only the access check may let it start
	logs = &syncBuffer{}
	opts.Logger = newSlog(logs)
	e.start(opts)
	apptest.Eventually(t, "fs waits for its folders' access checks", func() (bool, string) {
		return strings.Contains(logs.String(), `msg="server waits for its folders' access checks before it starts" server=fs`), ""
	})
	if st := e.status("fs"); st.PID != 0 {
		t.Fatalf("started before its roots were checked: %+v", st)
	}
	e.core.SetHealth(a, app.CheckAccess(a, 0))
	e.waitConnected("fs")
	waitAllowed(t, e, "fs", a)
	return e, a, logs
}

// A confined server is started once at launch: it waits for its roots'
// access checks instead of starting with nothing and again a moment later.
func TestConfinedServerStartsOnce(t *testing.T) {
	needLandlock(t)
	e, _, logs := startAfterChecks(t, true)
	if st := e.status("fs"); st.Restarts != 0 {
		t.Errorf("started %d more time(s)", st.Restarts)
	}
	if n := strings.Count(logs.String(), "server waits for its folders' access checks"); n != 1 {
		t.Errorf("told %d times that it waits, want once:\n%s", n, logs.String())
	}
}

// An unconfined server that asks for its roots is started at launch once
// its roots' access checks are in, so that its first answer is what it
// may see: not an empty list, then list_changed a moment later.
func TestFirstAnswerWaitsForTheAccessChecks(t *testing.T) {
	e, a, _ := startAfterChecks(t, false)
	entries, err := audit.Read(e.dir, "fs")
	if err != nil {
		t.Fatal(err)
	}
	var told [][]string
	for _, en := range entries {
		if en.Via == audit.ViaRootsList {
			told = append(told, en.Roots)
		}
	}
	if want := app.URIFromPath(a); len(told) == 0 || len(told[0]) != 1 || told[0][0] != want {
		t.Errorf("answers to roots/list: %q; want the first to be [%s]", told, want)
	}
}
