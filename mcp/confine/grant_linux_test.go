package confine

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGrantWithoutRestart: a folder granted to a running confined server
// (Observer.Extend) is reachable at once by that very process and by a
// child it started before the grant: it reads, writes, makes a folder,
// renames, removes, links, sets a mode, empties a file by name and
// watches there; nothing outside the granted folder opens up; before the
// grant the same read was refused.
func TestGrantWithoutRestart(t *testing.T) {
	needLandlock(t)
	base := t.TempDir()
	root, secret, other := filepath.Join(base, "root"), filepath.Join(base, "secret"), filepath.Join(base, "other")
	for _, d := range []string{root, secret, other} {
		os.MkdirAll(d, 0o755)
	}
	for f, body := range map[string]string{"a.txt": "secret a", "b.txt": "secret b", "c.txt": "secret c"} {
		os.WriteFile(filepath.Join(secret, f), []byte(body), 0o600)
	}
	os.WriteFile(filepath.Join(other, "x.txt"), []byte("other"), 0o600)
	os.WriteFile(filepath.Join(secret, "prog"), []byte("#!/bin/sh\necho ran\n"), 0o755)
	in := func(name string) string { return filepath.Join(secret, name) }
	goFile := filepath.Join(root, "go")
	ops := []string{
		"read:" + in("a.txt"), // refused: not yet granted
		"spawn:waitfor:" + goFile + "|read:" + in("b.txt"),
		"waitfor:" + goFile,
		"read:" + in("a.txt"),
		"write:" + in("new.txt"),
		"mkdir:" + in("dir"),
		"rename:" + in("new.txt") + "," + in("dir/moved.txt"),
		"symlink:" + in("link") + ",dir/moved.txt",
		"unlink:" + in("c.txt"),
		"chmod:" + in("a.txt"),
		"truncpath:" + in("a.txt"),
		"watch:" + secret,
		"read:" + filepath.Join(other, "x.txt"), // still refused
		// What works as in the ruleset: chains from a descriptor, a listing.
		"readat:" + in("b.txt"),
		"chdirread:" + in("b.txt"),
		"list:" + secret,
		// What does not until the next start: a program run from there.
		"exec:" + in("prog"),
	}
	cmd := exec.Command(nosy(t), append([]string{"-try"}, ops...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	obs := observed(t, cmd, Policy{Roots: []string{root}, Temp: filepath.Join(base, "tmp")}, nil, nil)
	results := map[string]outcome{}
	sc := bufio.NewScanner(out)
	granted := false
	for sc.Scan() {
		var o outcome
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		key := o.Op + ":" + o.Path
		if _, again := results[key]; again {
			key += " (again)"
		}
		results[key] = o
		if !granted && o.Op == "spawn" {
			// The first read was refused, the child waits: grant now.
			obs.Extend([]string{secret})
			granted = true
			if err := os.WriteFile(goFile, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if r := results["read:"+in("a.txt")]; r.OK {
		t.Errorf("the read before the grant: %+v", r)
	}
	if r := results["read:"+in("a.txt")+" (again)"]; !r.OK || r.Got != "secret a" {
		t.Errorf("the read after the grant: %+v", r)
	}
	if r := results["read:"+in("b.txt")]; !r.OK || r.Got != "secret b" {
		t.Errorf("the child started before the grant: %+v", r)
	}
	for _, op := range ops[4:12] {
		if r := results[op]; !r.OK {
			t.Errorf("%s in the granted folder: %+v", op, r)
		}
	}
	if r := results[ops[12]]; r.OK {
		t.Errorf("outside the granted folder: %+v", r)
	}
	if b, err := os.ReadFile(in("dir/moved.txt")); err != nil || string(b) != "nosy was here\n" {
		t.Errorf("written, moved: %q %v", b, err)
	}
	if target, err := os.Readlink(in("link")); err != nil || target != "dir/moved.txt" {
		t.Errorf("the link: %q %v", target, err)
	}
	if _, err := os.Stat(in("c.txt")); err == nil {
		t.Error("c.txt was not removed")
	}
	if b, _ := os.ReadFile(in("a.txt")); len(b) != 0 {
		t.Errorf("a.txt was not emptied: %q", b)
	}
	if fi, err := os.Stat(in("a.txt")); err != nil || fi.Mode().Perm() != 0o777 {
		t.Errorf("a.txt's mode: %v %v", fi.Mode(), err)
	}
	if strings.Contains(results[ops[12]].Got, "other") {
		t.Error("read outside")
	}
	for _, op := range ops[13:15] {
		if r := results[op]; !r.OK || r.Got != "secret b" {
			t.Errorf("%s: %+v; want it read through the descriptor, as in the ruleset", op, r)
		}
	}
	if r := results[ops[15]]; !r.OK || !strings.Contains(r.Got, "prog") || !strings.Contains(r.Got, "dir") {
		t.Errorf("listing the granted folder: %+v", r)
	}
	if r := results[ops[16]]; r.OK || r.Got == "ran" {
		t.Errorf("a program in the granted folder ran before the next start: %+v", r)
	}
}
