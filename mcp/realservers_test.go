package mcp

import (
	"slices"
	"strings"
	"testing"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/audit"
)

// allowedDirs asks server-filesystem which folders it holds.
func allowedDirs(t testing.TB, m *Manager, server string) ([]string, error) {
	text, err := callText(t, m, server, "list_allowed_directories", nil)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "/") {
			out = append(out, line)
		}
	}
	return sorted(out), nil
}

func waitAllowed(t testing.TB, e *testEnv, server string, want ...string) {
	t.Helper()
	want = sorted(want)
	eventually(t, "server-filesystem holds "+strings.Join(want, ", "), func() (bool, string) {
		got, err := allowedDirs(t, e.m, server)
		if err != nil {
			return false, err.Error()
		}
		return slices.Equal(got, want), strings.Join(got, ", ")
	})
}

func TestServerFilesystemFollowsGrants(t *testing.T) {
	bin := apptest.NPMServer(t, "mcp-server-filesystem")
	for _, tc := range []struct{ name, a, b string }{
		{"plain", "alpha", "beta"},
		{"odd-names", "with space #1 100%", "Ünïcødé ordner ñ 日本"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			a, b := mkRoot(t, tc.a), mkRoot(t, tc.b)
			e.update(func(s *app.State) error {
				return s.AddServer(app.Server{Name: "fs", Type: app.TransportStdio, Command: bin})
			})
			e.addRoots(a, b)
			e.start(e.fastOptions())
			st := e.waitConnected("fs")
			if st.ServerName != "secure-filesystem-server" || st.ProtocolVersion == "" || st.PID == 0 {
				t.Errorf("status %+v lacks the server's name, version or pid", st)
			}

			e.grant("fs", a, b)
			waitAllowed(t, e, "fs", a, b)
			e.revoke("fs", b)
			waitAllowed(t, e, "fs", a)
			e.grant("fs", b)
			waitAllowed(t, e, "fs", a, b)
			e.setPaused(true)
			waitAllowed(t, e, "fs") // restarted with nothing: it ignores an empty list
			e.setPaused(false)
			waitAllowed(t, e, "fs", a, b)

			st = e.status("fs")
			if want := []string{app.URIFromPath(a), app.URIFromPath(b)}; !slices.Equal(sorted(st.LastSent), sorted(want)) {
				t.Errorf("LastSent = %q, want %q", st.LastSent, want)
			}
			entries, err := audit.Read(e.dir, "fs")
			if err != nil || len(entries) == 0 {
				t.Fatalf("audit: %v, %d entries", err, len(entries))
			}
			last := entries[len(entries)-1]
			if last.Via != audit.ViaRootsList || last.ProtocolVersion != st.ProtocolVersion || len(last.Roots) != 2 {
				t.Errorf("last audit entry %+v", last)
			}
		})
	}
}

// everythingRoots asks server-everything's get-roots-list for its roots.
func everythingRoots(t testing.TB, m *Manager) ([]string, error) {
	text, err := callText(t, m, "everything", "get-roots-list", nil)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if u, ok := strings.CutPrefix(strings.TrimSpace(line), "URI: "); ok {
			out = append(out, u)
		}
	}
	return sorted(out), nil
}

func TestServerEverythingGetRootsList(t *testing.T) {
	bin := apptest.NPMServer(t, "mcp-server-everything")
	e := newEnv(t)
	a, b := mkRoot(t, "one"), mkRoot(t, "two #2 %")
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "everything", Type: app.TransportStdio, Command: bin, Args: []string{"stdio"}})
	})
	e.addRoots(a, b)
	e.start(e.fastOptions())
	e.waitConnected("everything")
	check := func(want ...string) {
		t.Helper()
		want = sorted(want)
		eventually(t, "get-roots-list reports "+strings.Join(want, " "), func() (bool, string) {
			got, err := everythingRoots(t, e.m)
			if err != nil {
				return false, err.Error()
			}
			return slices.Equal(got, want), strings.Join(got, " ")
		})
	}
	ua, ub := app.URIFromPath(a), app.URIFromPath(b)
	e.grant("everything", a, b)
	check(ua, ub)
	e.revoke("everything", a)
	check(ub)
	e.setPaused(true)
	check()
	e.setPaused(false)
	check(ub)
}
