package app

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestTakeFoldersOffTheCommandLine(t *testing.T) {
	home := t.TempDir()
	desk := filepath.Join(home, "Desktop")
	work := filepath.Join(home, "work")
	proj := filepath.Join(work, "proj")
	for _, d := range []string{desk, proj, filepath.Join(work, "stdio")} {
		os.MkdirAll(d, 0o755)
	}
	file := filepath.Join(home, "notes.txt")
	os.WriteFile(file, nil, 0o644)
	srv := Server{Name: "fs", Type: TransportStdio, Command: "mcp-server-filesystem", Cwd: work,
		Args:     []string{"--verbose", "~/Desktop", "./proj", "stdio", file, "/no/such/dir", home, "--root=" + desk},
		Env:      map[string]string{"DATA_DIR": proj, "TOKEN": "x", "KEEP": desk},
		KeepArgs: []string{home},
	}
	srv.KeepArgs = append(srv.KeepArgs, desk) // an env value kept too
	got, moved := TakeFolders(srv, home)
	wantArgs := []string{"--verbose", "stdio", file, "/no/such/dir", home, "--root=" + desk}
	if !slices.Equal(got.Args, wantArgs) {
		t.Errorf("args %q, want %q", got.Args, wantArgs)
	}
	if _, ok := got.Env["DATA_DIR"]; ok || got.Env["TOKEN"] != "x" || got.Env["KEEP"] != desk {
		t.Errorf("env %v", got.Env)
	}
	var paths []string
	for _, m := range moved {
		paths = append(paths, m.Path)
	}
	canon := func(p string) string { c, _ := filepath.EvalSymlinks(p); return c }
	if want := []string{canon(desk), canon(proj), canon(proj)}; !slices.Equal(paths, want) {
		t.Errorf("moved %q, want %q", paths, want)
	}
	if srv.Args[1] != "~/Desktop" {
		t.Error("TakeFolders changed the caller's server")
	}
	st := &State{}
	st.AddServer(got)
	if err := st.RequestFolders("fs", moved); err != nil {
		t.Fatal(err)
	}
	if r := st.RequestsFor("fs"); len(r) != 2 || r[0].From != FromCommandLine {
		t.Errorf("requests %+v", r)
	}
	remote := Server{Name: "r", Type: TransportHTTP, URL: "https://x"}
	if got, moved := TakeFolders(remote, home); moved != nil || got.URL != remote.URL {
		t.Error("a remote server was changed")
	}
}
