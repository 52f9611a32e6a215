package mcp

import (
	"fmt"
	"net"
	"os"
	"os/exec"
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
	apptest.Eventually(t, "server-filesystem holds "+strings.Join(want, ", "), func() (bool, string) {
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

			// The status is published in batches (statusGather), soon
			// after the answer the server already holds.
			want := []string{app.URIFromPath(a), app.URIFromPath(b)}
			apptest.Eventually(t, "the status to show what the server was sent", func() (bool, string) {
				st = e.status("fs")
				return slices.Equal(sorted(st.LastSent), sorted(want)), fmt.Sprintf("LastSent = %q, want %q", st.LastSent, want)
			})
			entries, err := audit.Read(e.dir, "fs")
			if err != nil || len(entries) == 0 {
				t.Fatalf("audit: %v, %d entries", err, len(entries))
			}
			last := entries[len(entries)-1]
			if last.Via != audit.ViaRootsList || last.ProtocolVersion != st.ProtocolVersion || len(last.Roots) != 2 {
				t.Errorf("last audit entry %+v", last)
			}
			for _, en := range entries {
				// server-filesystem asks as soon as it is initialized,
				// before Connect returns: those answers carry the version too.
				if en.ProtocolVersion == "" {
					t.Errorf("audit entry without a protocol version: %+v", en)
				}
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

// waitEverythingRoots waits until server-everything's get-roots-list
// reports exactly want.
func waitEverythingRoots(t *testing.T, e *testEnv, want ...string) {
	t.Helper()
	want = sorted(want)
	apptest.Eventually(t, "get-roots-list reports "+strings.Join(want, " "), func() (bool, string) {
		got, err := everythingRoots(t, e.m)
		if err != nil {
			return false, err.Error()
		}
		return slices.Equal(got, want), strings.Join(got, " ")
	})
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
	check := func(want ...string) { t.Helper(); waitEverythingRoots(t, e, want...) }
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

// startEverything runs server-everything over a network transport
// ("streamableHttp" or "sse") on a free loopback port until the test ends,
// and returns its address.
func startEverything(t *testing.T, transport string) string {
	t.Helper()
	bin := apptest.NPMServer(t, "mcp-server-everything")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, transport)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("server-everything %s:\n%s", transport, out.String())
		}
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	apptest.Eventually(t, "server-everything listening on "+addr, func() (bool, string) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return false, err.Error()
		}
		c.Close()
		return true, ""
	})
	return "http://" + addr
}

// The remote transports carry roots like stdio does: streamable HTTP and
// SSE against the real server-everything.
func TestServerEverythingOverHTTPAndSSE(t *testing.T) {
	for _, tc := range []struct{ transport, typ, path string }{
		{"streamableHttp", app.TransportHTTP, "/mcp"},
		{"sse", app.TransportSSE, "/sse"},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			base := startEverything(t, tc.transport)
			e := newEnv(t)
			a, b := mkRoot(t, "remote one"), mkRoot(t, "remote #2 ü")
			e.update(func(s *app.State) error {
				return s.AddServer(app.Server{Name: "everything", Type: tc.typ, URL: base + tc.path,
					Headers: map[string]string{"X-Rootkeeper-Test": "1"}})
			})
			e.addRoots(a, b)
			e.start(e.fastOptions())
			st := e.waitConnected("everything")
			if st.ProtocolVersion == "" || st.ServerName == "" {
				t.Errorf("status %+v lacks the negotiated version or the server's name", st)
			}
			check := func(want ...string) { t.Helper(); waitEverythingRoots(t, e, want...) }
			ua, ub := app.URIFromPath(a), app.URIFromPath(b)
			e.grant("everything", a, b)
			check(ua, ub)
			e.revoke("everything", a)
			check(ub)
		})
	}
}
