package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// A server's stderr flood is held to LogKeep+1 files of LogMaxSize while it
// writes, and a removed server's logs go with it: the state folder stays
// bounded by the servers configured.
func TestServerLogsAreBoundedAndGoWithTheServer(t *testing.T) {
	bin := hostileServer(t)
	e := newEnv(t)
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "noisy", Type: app.TransportStdio, Command: bin, Args: []string{"-mode", "stderr-flood", "-mb", "8"}})
	})
	opts := e.fastOptions()
	opts.LogMaxSize, opts.LogKeep = 256<<10, 2
	e.start(opts)
	logs := filepath.Join(e.dir, "logs")
	size := func() (n int64, files int) {
		entries, _ := os.ReadDir(logs)
		for _, en := range entries {
			if fi, err := en.Info(); err == nil {
				n += fi.Size()
				files++
			}
		}
		return n, files
	}
	apptest.Eventually(t, "the flood to fill three generations", func() (bool, string) {
		_, files := size()
		return files == 3, ""
	})
	e.waitConnected("noisy") // the flood is written before the handshake
	if n, files := size(); files != 3 || n > 3*(256<<10) {
		t.Fatalf("%d log files, %d bytes, for an 8 MiB flood; want 3 files within 768 KiB", files, n)
	}
	e.update(func(s *app.State) error { return s.RemoveServer("noisy") })
	apptest.Eventually(t, "the removed server's logs to go", func() (bool, string) {
		_, files := size()
		return files == 0, ""
	})
}

// A log that cannot rotate (its generations' names taken by folders) says
// so on the server's status, and the server runs on: its stderr is never
// blocked by the log.
func TestALogThatCannotRotateShowsOnTheCard(t *testing.T) {
	bin := hostileServer(t)
	e := newEnv(t)
	for _, gen := range []string{"noisy.log.1", "noisy.log.2"} {
		if err := os.MkdirAll(filepath.Join(e.dir, "logs", gen, "taken"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "noisy", Type: app.TransportStdio, Command: bin, Args: []string{"-mode", "stderr-flood", "-mb", "2"}})
	})
	opts := e.fastOptions()
	opts.LogMaxSize, opts.LogKeep = 256<<10, 2
	e.start(opts)
	e.waitConnected("noisy")
	apptest.Eventually(t, "the log's problem on the card", func() (bool, string) {
		st := e.status("noisy")
		return strings.Contains(st.LogProblem, "rotating"), st.LogProblem
	})
}
