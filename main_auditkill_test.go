//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/audit"
)

// TestAnswersSurviveAKill: eight servers of a headless app are told of one
// change (a folder each may see, enabled), and their answers' audit lines
// are written together (group commit). The moment the last server reports
// the new list, the app is killed (SIGKILL: nothing flushed on the way
// out); the audit log still holds, for every server, the answer it holds,
// after the one before it: an answer is written to a server only once its
// line is in the file.
func TestAnswersSurviveAKill(t *testing.T) {
	const n = 8
	state := t.TempDir()
	base, x := filepath.Join(t.TempDir(), "base"), filepath.Join(t.TempDir(), "x")
	for _, dir := range []string{base, x} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		mustRun(t, state, "roots", "add", dir, "--enable")
	}
	reports := listenRootReports(t)
	server := apptest.Program(t, "mcp/testdata/rootserver")
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("s%d", i)
		mustRun(t, state, "servers", "add", names[i], "--no-confine", "--env", "RK_REPORT="+reports.addr,
			"--", server, "-name", names[i], "-version", "2025-11-25")
		mustRun(t, state, "grant", names[i], base)
		mustRun(t, state, "grant", names[i], x)
	}
	mustRun(t, state, "roots", "disable", x)
	h := startHeadless(t, state)
	ub, ux := app.URIFromPath(base), app.URIFromPath(x)
	for _, name := range names {
		reports.expect(t, name, ub)
	}

	mustRun(t, state, "roots", "enable", x) // one change, told to all eight
	both := slices.Sorted(slices.Values([]string{ub, ux}))
	for _, name := range names {
		reports.expect(t, name, both...)
	}
	h.cmd.Process.Kill()
	h.exited <- <-h.exited // gone; and left for stop, at cleanup

	for _, name := range names {
		entries, err := audit.Read(state, name)
		if err != nil {
			t.Fatal(err)
		}
		var told [][]string // the lists name was given, an answer given again once
		for _, e := range entries {
			if roots := slices.Sorted(slices.Values(e.Roots)); e.Via == audit.ViaRootsList && (len(told) == 0 || !slices.Equal(told[len(told)-1], roots)) {
				told = append(told, roots)
			}
		}
		if want := [][]string{{ub}, both}; !slices.EqualFunc(told, want, slices.Equal) {
			t.Errorf("after the kill, the audit log says %s was given %v; it was given %v", name, told, want)
		}
	}
}

// rootReports takes rootserver reports (mcp/testdata/rootserver) over
// TCP (a socket's path in a server's environment would be a folder of its
// configuration, to be decided): the lists each server was given, in
// order.
type rootReports struct {
	addr  string         // RK_REPORT
	lists chan [2]string // server, its list's URIs joined by spaces
}

func listenRootReports(t *testing.T) *rootReports {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	r := &rootReports{addr: "tcp:" + ln.Addr().String(), lists: make(chan [2]string, 1000)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					f := strings.SplitN(sc.Text(), " ", 3)
					var uris []string
					if len(f) == 3 && f[1] == "roots" && json.Unmarshal([]byte(f[2]), &uris) == nil {
						slices.Sort(uris)
						r.lists <- [2]string{f[0], strings.Join(uris, " ")}
					}
				}
			}()
		}
	}()
	return r
}

// expect waits until server reports holding exactly uris (sorted); the
// reports of other servers meanwhile are kept for their turn.
func (r *rootReports) expect(t *testing.T, server string, uris ...string) {
	t.Helper()
	want := strings.Join(uris, " ")
	deadline := time.After(apptest.Patience)
	var others [][2]string
	defer func() {
		for _, o := range others {
			r.lists <- o
		}
	}()
	for {
		select {
		case got := <-r.lists:
			switch {
			case got[0] != server:
				others = append(others, got)
			case got[1] == want:
				return
			}
		case <-deadline:
			t.Fatalf("%s did not report holding %q within %v", server, want, apptest.Patience)
		}
	}
}
