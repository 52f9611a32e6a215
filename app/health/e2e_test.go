package health_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/health"
	"rootkeeper/mcp"
)

// These tests run the whole stack against the real server-filesystem: the
// monitor publishes health, the manager turns visible(S) into roots/list and
// list_changed, and the server's list_allowed_directories says what it holds.
//
// server-filesystem ignores an empty roots list (it keeps the folders it
// had), so every test shares a second folder, the anchor, that stays put: the
// sets asserted are never empty.

type stack struct {
	core *app.Core
	mgr  *mcp.Manager
}

// newStack runs a core, a monitor and a manager with server "fs" allowed to
// see roots, until the test ends.
func newStack(t *testing.T, roots ...app.Root) *stack {
	t.Helper()
	bin := apptest.NPMServer(t, "mcp-server-filesystem")
	core, stateDir := apptest.NewCore(t)
	err := core.Update(func(s *app.State) error {
		if err := s.AddServer(app.Server{Name: "fs", Type: app.TransportStdio, Command: bin}); err != nil {
			return err
		}
		return apptest.Share(s, "fs", roots...)
	})
	if err != nil {
		t.Fatal(err)
	}
	mon := health.NewMonitor(core, health.Options{})
	mgr := mcp.NewManager(core, mcp.Options{StateDir: stateDir})
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 2)
	go func() { errs <- mon.Run(ctx) }()
	go func() { errs <- mgr.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		for range 2 {
			if err := <-errs; err != nil && ctx.Err() == nil {
				t.Errorf("Run: %v", err)
			}
		}
	})
	return &stack{core: core, mgr: mgr}
}

// allowed asks server-filesystem which folders it holds.
func (s *stack) allowed() ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := s.mgr.CallTool(ctx, "fs", "list_allowed_directories", nil)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var out struct {
		Content []struct{ Type, Text string }
		IsError bool
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	if out.IsError {
		return nil, fmt.Errorf("tool error: %s", data)
	}
	dirs := []string{}
	for _, c := range out.Content {
		for _, line := range strings.Split(c.Text, "\n") {
			if strings.HasPrefix(line, "/") {
				dirs = append(dirs, line)
			}
		}
	}
	slices.Sort(dirs)
	return dirs, nil
}

// waitAllowed waits until the server holds exactly want.
func (s *stack) waitAllowed(t *testing.T, want ...string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	apptest.Eventually(t, fmt.Sprintf("server-filesystem to hold %q", want), func() (bool, string) {
		got, err := s.allowed()
		return err == nil && slices.Equal(got, want), fmt.Sprintf("it holds %q (err %v); health %+v", got, err, s.core.Snapshot().Health)
	})
}

func (s *stack) health(path string) app.Health { return s.core.Snapshot().Health[path] }

// folders makes the anchor and the folder under test, canonical.
func folders(t *testing.T) (anchor, shared string) {
	t.Helper()
	base := apptest.RealTempDir(t)
	anchor, shared = filepath.Join(base, "anchor"), filepath.Join(base, "shared")
	for _, d := range []string{anchor, shared} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return anchor, shared
}

func TestE2EDeleteAndRecreate(t *testing.T) {
	anchor, shared := folders(t)
	s := newStack(t, app.Root{Path: anchor}, app.Root{Path: shared})
	s.waitAllowed(t, anchor, shared)

	if err := os.RemoveAll(shared); err != nil {
		t.Fatal(err)
	}
	s.waitAllowed(t, anchor)
	if h := s.health(shared); h.Status != app.HealthMissing {
		t.Errorf("health %+v, want missing", h)
	}
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	s.waitAllowed(t, anchor, shared)
}

func TestE2EMove(t *testing.T) {
	anchor, shared := folders(t)
	s := newStack(t, app.Root{Path: anchor}, app.Root{Path: shared})
	s.waitAllowed(t, anchor, shared)

	moved := shared + "-moved"
	if err := os.Rename(shared, moved); err != nil {
		t.Fatal(err)
	}
	s.waitAllowed(t, anchor)
	if h := s.health(shared); h.Status != app.HealthMoved || h.MovedTo != moved {
		t.Errorf("health %+v, want moved to %s", h, moved)
	}
}

func TestE2ESymlinkTargetDeleted(t *testing.T) {
	anchor, shared := folders(t)
	link := filepath.Join(filepath.Dir(anchor), "link")
	if err := os.Symlink(shared, link); err != nil {
		t.Fatal(err)
	}
	s := newStack(t, app.Root{Path: anchor}, app.Root{Path: shared, Given: link})
	s.waitAllowed(t, anchor, shared)

	if err := os.RemoveAll(shared); err != nil {
		t.Fatal(err)
	}
	s.waitAllowed(t, anchor)
	if h := s.health(shared); h.Status != app.HealthMissing {
		t.Errorf("health %+v, want missing", h)
	}
}

// chmod 000 withdraws, chmod 755 restores. The whole stack, server included,
// runs as an unprivileged user: to root, chmod 000 changes nothing.
func TestE2EChmod(t *testing.T) {
	apptest.NPMServer(t, "mcp-server-filesystem") // fail early, in the parent, if it is missing
	if !apptest.AsNobody(t) {
		return
	}
	anchor, shared := folders(t)
	s := newStack(t, app.Root{Path: anchor}, app.Root{Path: shared})
	s.waitAllowed(t, anchor, shared)

	if err := os.Chmod(shared, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(shared, 0o755)
	s.waitAllowed(t, anchor)
	if h := s.health(shared); h.Status != app.HealthUnreadable {
		t.Errorf("health %+v, want unreadable", h)
	}
	if err := os.Chmod(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	s.waitAllowed(t, anchor, shared)
}
