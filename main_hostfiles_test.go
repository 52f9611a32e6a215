//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"rootkeeper/app/apptest"
	"rootkeeper/app/hosts"
)

// A host's config file is untrusted input: where one should be, a named
// pipe, a socket, a link to /dev/zero or a 2 GB sparse file is refused by
// name, and holds up nothing: not the command, not the other hosts' files,
// not the app's shutdown.

// hostileFile makes path into one of the things a config file must not
// be, and says in what words Rootkeeper names it.
type hostileFile struct {
	name  string
	make  func(t *testing.T, path string)
	named string
}

// namedIn is how the file is named as a project's file: a project's link
// out of the project is refused for that, whatever it leads to.
func (hf hostileFile) namedIn(where string) string {
	if hf.name == "dev-zero" && where == "project" {
		return "is a link to /dev/zero, outside the project"
	}
	return hf.named
}

var hostileFiles = []hostileFile{
	{"fifo", func(t *testing.T, path string) {
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
	}, "named pipe (FIFO)"},
	{"socket", func(t *testing.T, path string) {
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
	}, "a socket"},
	{"dev-zero", func(t *testing.T, path string) {
		if err := os.Symlink("/dev/zero", path); err != nil {
			t.Fatal(err)
		}
	}, "a link to /dev/zero) is a character device"},
	{"sparse-2GB", func(t *testing.T, path string) {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(2 << 30); err != nil {
			t.Fatal(err)
		}
	}, fmt.Sprintf("is larger than %d MiB (2048 MiB)", hosts.MaxFileBytes>>20)},
}

// replaceWith puts a hostile file where path is, in one step (a rename
// over it, as a host replaces its file), so that a watcher sees it.
func replaceWith(t *testing.T, path string, hf hostileFile) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), ".swap-"+hf.name)
	hf.make(t, tmp)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// rkWithin runs rootkeeper with env and fails the test if it hangs (held by
// a file: it is killed after apptest.Patience), returning its output and
// exit code.
func rkWithin(t *testing.T, env []string, state string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), apptest.Patience)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, append([]string{"--state-dir", state}, args...)...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("rootkeeper %q hung (killed after %v):\n%s", args, apptest.Patience, out.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), code
}

// hostHome is a home with Cursor's config (one server) and Claude Code's
// (one server), and a project with a .mcp.json (one server).
func hostHome(t *testing.T) (home, project string, env []string) {
	t.Helper()
	home, _ = filepath.EvalSymlinks(t.TempDir())
	project = filepath.Join(home, "src", "proj")
	for path, servers := range map[string]map[string]any{
		filepath.Join(home, ".cursor", "mcp.json"): {"time": map[string]any{"command": "/nonexistent/time-mcp"}},
		filepath.Join(home, ".claude.json"):        {"notes": map[string]any{"type": "stdio", "command": "/nonexistent/notes-mcp"}},
		filepath.Join(project, ".mcp.json"):        {"db": map[string]any{"type": "stdio", "command": "/nonexistent/db-mcp"}},
	} {
		os.MkdirAll(filepath.Dir(path), 0o755)
		data, _ := json.Marshal(map[string]any{"mcpServers": servers})
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env = append(serverEnv(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	return home, project, env
}

// hosts list, protect --all, restore --all and doctor each end, name the
// refused file and what it is, and do their work on the other files.
func TestHostFilesThatAreNotFilesAreRefusedByName(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("named pipes, sockets and /dev/zero as Linux has them")
	}
	for _, hf := range hostileFiles {
		for _, where := range []string{"user", "project"} {
			t.Run(hf.name+"/"+where, func(t *testing.T) {
				home, project, env := hostHome(t)
				state := t.TempDir()
				target := filepath.Join(home, ".claude.json")
				if where == "project" {
					target = filepath.Join(project, ".mcp.json")
				}
				// Protected first, so that restore has it to give back.
				if out, code := rkWithin(t, env, state, "hosts", "protect", "--all", "--project", project); code != 0 || !strings.Contains(out, target) {
					t.Fatalf("protect before: exit %d\n%s", code, out)
				}
				os.Remove(target)
				hf.make(t, target)
				namedAs := func(what, out, as string) {
					t.Helper()
					if !strings.Contains(out, target) || !strings.Contains(out, as) {
						t.Errorf("%s does not name %s as %q:\n%s", what, target, as, out)
					}
				}
				named := func(what, out string) { t.Helper(); namedAs(what, out, hf.namedIn(where)) }

				out, code := rkWithin(t, env, state, "hosts", "list", "--project", project)
				named("hosts list", out)
				if code != 0 || !strings.Contains(out, "time") || !strings.Contains(out, "protected as cursor.time") {
					t.Errorf("hosts list: exit %d, the other hosts' files not listed:\n%s", code, out)
				}
				out, code = rkWithin(t, env, state, "hosts", "list", "--json", "--project", project)
				var found []hosts.Found
				if err := json.Unmarshal([]byte(out), &found); code != 0 || err != nil {
					t.Fatalf("hosts list --json: exit %d, %v\n%s", code, err, out)
				}
				refused := ""
				for _, h := range found {
					for _, f := range h.Files {
						if f.Path == target {
							refused = f.Refused
						}
					}
				}
				if !strings.Contains(refused, hf.namedIn(where)) {
					t.Errorf("hosts list --json: %s refused %q", target, refused)
				}

				out, code = rkWithin(t, env, state, "doctor")
				named("doctor", out)
				if code != 1 {
					t.Errorf("doctor exit %d with a refused host file", code)
				}

				// Cursor's file was written back by Cursor: protect
				// --all protects it again, whatever is at the target.
				cursor := filepath.Join(home, ".cursor", "mcp.json")
				os.WriteFile(cursor, []byte(`{"mcpServers": {"time": {"command": "/nonexistent/time-mcp"}}}`), 0o600)
				out, code = rkWithin(t, env, state, "hosts", "protect", "--all", "--project", project)
				named("hosts protect --all", out)
				if data, _ := os.ReadFile(cursor); code != 0 || !bytes.Contains(data, []byte(binary)) {
					t.Errorf("protect --all: exit %d; Cursor's file not protected again:\n%s\n%s", code, out, data)
				}

				// Restore gives back the file Rootkeeper recorded: what is
				// there now is refused for what it is.
				out, code = rkWithin(t, env, state, "hosts", "restore", "--all")
				namedAs("hosts restore --all", out, hf.named)
				if data, _ := os.ReadFile(cursor); code != 0 || bytes.Contains(data, []byte(binary)) {
					t.Errorf("restore --all: exit %d; Cursor's file not restored:\n%s\n%s", code, out, data)
				}
				// The refused file's record is kept, to restore later.
				os.Remove(target)
				out, code = rkWithin(t, env, state, "hosts", "restore", "--all")
				if code != 0 || !strings.Contains(out, target+": file is gone") {
					t.Errorf("a later restore does not know the file:\n%s", out)
				}
			})
		}
	}
}

// The app watching protected files is told, by name, of each that became
// something it does not read (a notice in status), and stops on SIGTERM
// at once all the same.
func TestWatcherRefusesHostFilesAndShutdownIsNotHeld(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("named pipes, sockets and /dev/zero as Linux has them")
	}
	home, _, env := hostHome(t)
	state := t.TempDir()
	// Four protected files, one for each way a file can be hostile.
	targets := []string{filepath.Join(home, ".claude.json")}
	args := []string{"hosts", "protect", "--all"}
	for i := range 3 {
		p := filepath.Join(home, "src", fmt.Sprintf("p%d", i))
		os.MkdirAll(p, 0o755)
		os.WriteFile(filepath.Join(p, ".mcp.json"), []byte(`{"mcpServers": {"db": {"type": "stdio", "command": "/nonexistent/db-mcp"}}}`), 0o600)
		targets = append(targets, filepath.Join(p, ".mcp.json"))
		args = append(args, "--project", p)
	}
	if out, code := rkWithin(t, env, state, args...); code != 0 {
		t.Fatalf("protect: exit %d\n%s", code, out)
	}
	h := startHeadlessIn(t, env, state)
	waitFor(t, "the app's control socket", func() bool {
		_, code := rkWithin(t, env, state, "status")
		return code == 0 && liveStatus(t, state).Running
	})
	for i, hf := range hostileFiles {
		replaceWith(t, targets[i], hf)
	}
	for i, hf := range hostileFiles {
		topic := hosts.NoticePrefix + targets[i]
		where := map[bool]string{true: "user", false: "project"}[i == 0]
		waitFor(t, fmt.Sprintf("a notice naming %s as %s", targets[i], hf.namedIn(where)), func() bool {
			n := liveStatus(t, state).Notices[topic]
			return strings.Contains(n, targets[i]) && strings.Contains(n, hf.namedIn(where))
		})
	}
	h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-h.exited:
		h.once.Do(func() { h.err = err })
		if err != nil {
			t.Fatalf("headless ended with %v", err)
		}
	case <-time.After(apptest.Patience):
		t.Fatal("headless hung after SIGTERM beside the refused files")
	}
}
