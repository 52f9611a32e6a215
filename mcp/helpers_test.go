package mcp

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// wait is how long tests wait for something that should happen: the one
// bound for a hang.
const wait = apptest.Patience

// testEnv is a core with its state in a temp folder, and a manager.
type testEnv struct {
	t     testing.TB
	dir   string
	core  *app.Core
	m     *Manager
	stop  context.CancelFunc
	ended chan struct{}
}

func newEnv(t testing.TB) *testEnv {
	t.Helper()
	core, dir := apptest.NewCore(t)
	return &testEnv{t: t, dir: dir, core: core}
}

// fastOptions are options with short delays, for tests.
func (e *testEnv) fastOptions() Options {
	return Options{
		StateDir:    e.dir,
		Logger:      testLogger(e.t),
		BackoffMin:  50 * time.Millisecond,
		BackoffMax:  400 * time.Millisecond,
		StopGrace:   time.Second,
		KillAfter:   2 * time.Second,
		StableAfter: time.Minute,
	}
}

// start runs a manager until the test ends.
func (e *testEnv) start(opts Options) *Manager {
	e.t.Helper()
	e.m = NewManager(e.core, opts)
	ctx, cancel := context.WithCancel(context.Background())
	e.stop, e.ended = cancel, make(chan struct{})
	go func() {
		defer close(e.ended)
		if err := e.m.Run(ctx); err != nil {
			e.t.Errorf("Run: %v", err)
		}
	}()
	e.t.Cleanup(e.shutdown)
	return e.m
}

func (e *testEnv) shutdown() {
	if e.stop == nil {
		return
	}
	e.stop()
	select {
	case <-e.ended:
	case <-time.After(30 * time.Second):
		e.t.Errorf("Run did not return 30 s after its context ended")
	}
	e.stop = nil
}

func (e *testEnv) update(fn func(*app.State) error) {
	e.t.Helper()
	if err := e.core.Update(fn); err != nil {
		e.t.Fatal(err)
	}
}

// mkRoot makes a folder under a temp folder and returns its canonical path.
func mkRoot(t testing.TB, name string) string {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(base, name)
	if err := os.MkdirAll(p, 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// addRoots adds enabled roots and records that they passed the access check.
func (e *testEnv) addRoots(paths ...string) {
	e.t.Helper()
	e.update(func(s *app.State) error {
		for _, p := range paths {
			if err := s.AddRoot(app.Root{Path: p, Enabled: true}); err != nil {
				return err
			}
		}
		return nil
	})
	for _, p := range paths {
		e.core.SetHealth(p, app.CheckAccess(p, 0))
	}
}

func (e *testEnv) grant(server string, paths ...string) {
	e.t.Helper()
	e.update(func(s *app.State) error {
		for _, p := range paths {
			if err := s.Decide(app.Decision{Server: server, Root: p, Verdict: app.Allow, By: app.ByCommandLine}); err != nil {
				return err
			}
		}
		return nil
	})
}

func (e *testEnv) revoke(server string, paths ...string) {
	e.t.Helper()
	e.update(func(s *app.State) error {
		for _, p := range paths {
			s.Revoke(server, p)
		}
		return nil
	})
}

func (e *testEnv) setPaused(p bool) {
	e.t.Helper()
	e.update(func(s *app.State) error { s.Paused = p; return nil })
}

// status is the server's published status.
func (e *testEnv) status(name string) app.ServerStatus {
	return e.core.Snapshot().Servers[name]
}

func (e *testEnv) waitConnected(name string) app.ServerStatus {
	e.t.Helper()
	apptest.Eventually(e.t, name+" connected", func() (bool, string) {
		st := e.status(name)
		return st.State == app.ServerConnected && e.m.Session(name) != nil, string(st.State) + " " + st.Error
	})
	return e.status(name)
}

// callText calls a tool and returns its text content.
func callText(t testing.TB, m *Manager, server, tool string, args map[string]any) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	res, err := m.CallTool(ctx, server, tool, args)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), nil
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	if s == nil {
		s = []string{}
	}
	return s
}

// testLogger logs through t, quietly unless -v.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(&tWriter{t: t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *tWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if testing.Verbose() {
		os.Stderr.Write(p)
	}
	return len(p), nil
}

type slogLogger = slog.Logger

func newSlog(w *syncBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
