package mcp

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// TestManagedConfinedFailureIsRecorded: a managed server that stops at
// its start confined (desktop-commander, were it not in the table of known
// servers: it makes ~/.claude-server-commander and ends when it cannot)
// gets its failure recorded, naming its own settings folder; once the
// person allows that folder (the way out the card offers), it connects
// confined and the failure goes.
func TestManagedConfinedFailureIsRecorded(t *testing.T) {
	needLandlock(t)
	bin := apptest.NPMServer(t, "desktop-commander")
	known := app.KnownServers
	t.Cleanup(func() { app.KnownServers = known })
	app.KnownServers = slices.DeleteFunc(slices.Clone(known), func(k app.KnownServer) bool { return k.Name == "desktop-commander" })
	e := newEnv(t)
	home := mkRoot(t, "home")
	e.update(func(s *app.State) error {
		_, err := s.PutServer(app.Server{Name: "dc", Type: app.TransportStdio, Command: bin, Env: map[string]string{"HOME": home}, KeepArgs: []string{home}}, app.PutOptions{})
		return err
	})
	e.start(e.fastOptions())
	own := filepath.Join(home, ".claude-server-commander")
	apptest.Eventually(t, "the failure recorded", func() (bool, string) {
		f, ok := e.core.Snapshot().State.ConfineFailureOf("dc")
		return ok && f.Tried == own && f.Folder == own && f.Own, f.Text(home)
	})
	if err := os.Mkdir(own, 0o700); err != nil {
		t.Fatal(err)
	}
	e.addRoots(own)
	e.grant("dc", own)
	e.waitConnected("dc")
	apptest.Eventually(t, "the failure gone", func() (bool, string) {
		f, ok := e.core.Snapshot().State.ConfineFailureOf("dc")
		return !ok, f.Text(home)
	})
}
