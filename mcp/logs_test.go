package mcp

import (
	"os"
	"path/filepath"
	"testing"

	"rootkeeper/app"
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
	eventually(t, "the flood to fill three generations", func() (bool, string) {
		_, files := size()
		return files == 3, ""
	})
	e.waitConnected("noisy") // the flood is written before the handshake
	if n, files := size(); files != 3 || n > 3*(256<<10) {
		t.Fatalf("%d log files, %d bytes, for an 8 MiB flood; want 3 files within 768 KiB", files, n)
	}
	e.update(func(s *app.State) error { return s.RemoveServer("noisy") })
	eventually(t, "the removed server's logs to go", func() (bool, string) {
		_, files := size()
		return files == 0, ""
	})
}
