package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/mcp/confine"
)

// TestReachThroughTheBridge: a host runs `rootkeeper bridge` for a
// confined server (no app running); the server reads a file in a folder it
// was not given; the attempt becomes a request that `status` and
// `status --json` show naming the folder; `grant SERVER FOLDER --once`
// typed in another terminal answers it, and the host's tools/call gets the
// file from the same process; nothing was granted.
func TestReachThroughTheBridge(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Landlock is Linux's")
	}
	if _, err := confine.ABI(); err != nil {
		t.Fatalf("Landlock: %v", err)
	}
	nosy := apptest.Program(t, "mcp/confine/testdata/nosy")
	state := t.TempDir()
	base, _ := filepath.EvalSymlinks(t.TempDir())
	folder, taxes := filepath.Join(base, "project"), filepath.Join(base, "taxes")
	os.Mkdir(folder, 0o755)
	os.Mkdir(taxes, 0o755)
	os.WriteFile(filepath.Join(taxes, "2025.pdf"), []byte("tax return 2025"), 0o600)
	mustRun(t, state, "servers", "add", "nosy", "--confine", "--", nosy)
	mustRun(t, state, "roots", "add", folder, "--enable")
	mustRun(t, state, "grant", "nosy", folder)

	br := exec.Command(binary, "--state-dir", state, "bridge", "nosy")
	br.Env = serverEnv()
	in, _ := br.StdinPipe()
	outPipe, _ := br.StdoutPipe()
	if err := br.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); br.Wait() }()
	lines := bufio.NewReader(outPipe)
	send := func(s string) { io.WriteString(in, s+"\n") }
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test-host","version":"1"}}}`)
	if line, err := lines.ReadString('\n'); err != nil || !strings.Contains(line, `"id":1`) {
		t.Fatalf("initialize: %q %v", line, err)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	tried := filepath.Join(taxes, "2025.pdf")
	args, _ := json.Marshal(map[string]any{"name": "try", "arguments": map[string]string{"op": "read", "path": tried}})
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":` + string(args) + `}`)
	answer := make(chan string, 1)
	go func() {
		for {
			line, err := lines.ReadString('\n')
			if err != nil {
				answer <- "read: " + err.Error()
				return
			}
			if strings.Contains(line, `"id":2`) {
				answer <- line
				return
			}
		}
	}()

	var req app.Request
	waitFor(t, "the attempt to show as a request in status --json", func() bool {
		for _, s := range liveStatus(t, state).Servers {
			for _, r := range s.Requests {
				if s.Name == "nosy" && r.Path == taxes {
					req = r
					return true
				}
			}
		}
		return false
	})
	if req.From != app.FromReach || req.Tried != tried || req.Op != "read" {
		t.Errorf("request %+v", req)
	}
	if out := mustRun(t, state, "status"); !strings.Contains(out, "nosy tried to read "+tried+" — allow "+taxes+"?") {
		t.Errorf("status does not ask:\n%s", out)
	}
	if out := mustRun(t, state, "grant", "nosy", taxes, "--once"); !strings.Contains(out, "this once") {
		t.Errorf("grant --once said %q", out)
	}
	line := <-answer
	if !strings.Contains(line, `tax return 2025`) || strings.Contains(line, `"isError":true`) {
		t.Fatalf("the host's tools/call after allow once: %s", line)
	}
	for _, s := range liveStatus(t, state).Servers {
		if s.Name == "nosy" && (len(s.Visible) != 1 || len(s.Requests) != 0) {
			t.Errorf("after allow once nosy sees %v and has requests %v; want its one folder and none", s.Visible, s.Requests)
		}
	}
}
