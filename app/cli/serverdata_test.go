package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rootkeeper/app"
)

// servers add --replace with another package keeps the old data folder
// aside and says where; status and `servers data` name it with the
// commands; `use` gives it back, `remove` deletes it; bad input is exit 2.
func TestServersDataVerbs(t *testing.T) {
	setLandlock(t, 7, nil)
	h := newHarness(t)
	data := filepath.Join(h.dir, "data", "mem")
	h.ok("servers", "add", "mem", "--", "npx", "-y", "@modelcontextprotocol/server-memory@1")
	os.MkdirAll(data, 0o700)
	os.WriteFile(filepath.Join(data, "memory.jsonl"), []byte("graph"), 0o600)
	if out := h.ok("servers", "add", "mem", "--replace", "--", "npx", "-y", "@modelcontextprotocol/server-memory@2", "--x"); strings.Contains(out, "kept aside") {
		t.Errorf("a new version kept its data aside: %s", out)
	}
	out := h.ok("servers", "add", "mem", "--replace", "--", "npx", "-y", "@someone/memory")
	if !strings.Contains(out, "mem now runs another program: it starts with an empty data folder, and the data of npm @modelcontextprotocol/server-memory is kept aside in "+h.dir+"/previous-data/mem/") ||
		!strings.Contains(out, "`rootkeeper servers data mem use`") {
		t.Errorf("servers add said %q", out)
	}
	kept := h.status().server("mem").KeptData
	if len(kept) != 1 || kept[0].Program != "npm @modelcontextprotocol/server-memory" || !strings.HasPrefix(kept[0].Path, h.dir+"/previous-data/mem/") {
		t.Fatalf("status --json kept %+v", kept)
	}
	if b, _ := os.ReadFile(filepath.Join(kept[0].Path, "memory.jsonl")); string(b) != "graph" {
		t.Errorf("the kept folder holds %q", b)
	}
	if text := h.ok("status"); !strings.Contains(text, "  kept aside: "+kept[0].Path+" — the data of npm @modelcontextprotocol/server-memory") ||
		!strings.Contains(text, "remove it: `rootkeeper servers data mem remove`") {
		t.Errorf("status:\n%s", text)
	}
	var v DataView
	if err := json.Unmarshal([]byte(h.ok("servers", "data", "mem", "--json")), &v); err != nil || v.Program != "npm @someone/memory" || v.Data != data || len(v.Kept) != 1 {
		t.Errorf("servers data --json: %+v %v", v, err)
	}
	h.fails(2, []string{"servers", "data", "mem", "keep"}, `"keep"`)
	h.fails(2, []string{"servers", "data", "mem", "use", "19990101T000000Z"}, `"19990101T000000Z"`)
	h.fails(2, []string{"servers", "data", "nope", "use"}, `"nope"`)
	h.fails(2, []string{"servers", "data"}, "NAME")

	if out := h.ok("servers", "data", "mem", "use"); !strings.Contains(out, "mem has the kept data now, in its data folder "+data) {
		t.Errorf("use said %q", out)
	}
	if b, _ := os.ReadFile(filepath.Join(data, "memory.jsonl")); string(b) != "graph" {
		t.Errorf("after use the data folder holds %q", b)
	}
	if len(h.status().server("mem").KeptData) != 0 {
		t.Errorf("still kept after use")
	}
	h.ok("servers", "add", "mem", "--replace", "--", "uvx", "other-memory")
	p := h.status().server("mem").KeptData[0].Path
	if out := h.ok("servers", "data", "mem", "remove"); !strings.Contains(out, "removed "+p) {
		t.Errorf("remove said %q", out)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("the kept folder is still there: %v", err)
	}
	h.fails(2, []string{"servers", "data", "mem", "remove"}, "no data folder kept aside")
}

// grant on a confined server's failure folder gives it to that server
// alone: status shows it under the server, not among its roots nor to
// another server; `roots list` has no such root; revoke takes it away; a
// failure at the home folder itself is refused.
func TestGrantWhatAServerNeeds(t *testing.T) {
	setLandlock(t, 7, nil)
	h := newHarness(t)
	kube := filepath.Join(h.cwd, ".kube") // the harness's home folder is its cwd
	os.Mkdir(kube, 0o700)
	h.ok("servers", "add", "k8s", "--", "mcp-server-kubernetes")
	h.ok("servers", "add", "other", "--", "other")
	st, err := app.OpenStore(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	fail := func(folder string) {
		t.Helper()
		if _, err := st.Update(func(s *app.State) error {
			s.RecordConfineFailure(app.ConfineFailure{Server: "k8s", Tried: folder + "/config", Op: app.OpRead, Folder: folder})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	fail(kube)
	text := h.ok("status")
	allow := "    allow ~/.kube for k8s (it alone): rootkeeper grant k8s " + kube + "\n    run it unconfined: rootkeeper servers unconfine k8s\n"
	if !strings.Contains(text, "allow ~/.kube for k8s, or run it unconfined\n"+allow) {
		t.Errorf("status offers:\n%s", text)
	}
	if out := h.ok("grant", "k8s", kube); !strings.Contains(out, "k8s may now use "+kube+" to run: it is in its ruleset alone") {
		t.Errorf("grant said %q", out)
	}
	s := h.status()
	k8s := s.server("k8s")
	if len(k8s.Needs) != 1 || k8s.Needs[0].Path != kube || k8s.Needs[0].Access != app.NeedReadWrite || k8s.Failure != nil || len(k8s.Visible) != 0 {
		t.Errorf("k8s in status --json: %+v", k8s)
	}
	if other := s.server("other"); len(other.Needs)+len(other.Pending)+len(other.Requests) != 0 {
		t.Errorf("other in status --json: %+v", other)
	}
	if text := h.ok("status"); !strings.Contains(text, "  needs to run: ~/.kube (read-write, its alone; take it away: `rootkeeper revoke k8s "+kube+"`)\n") {
		t.Errorf("status:\n%s", text)
	}
	if roots := h.ok("roots", "list"); strings.Contains(roots, ".kube") {
		t.Errorf("roots list:\n%s", roots)
	}
	if out := h.ok("revoke", "k8s", kube); !strings.Contains(out, "revoked: k8s no longer has "+kube+" in its ruleset") {
		t.Errorf("revoke said %q", out)
	}
	if n := h.status().server("k8s").Needs; len(n) != 0 {
		t.Errorf("after revoke: %+v", n)
	}
	fail(h.cwd)
	h.fails(2, []string{"grant", "k8s", h.cwd}, h.cwd, "home folder")
}
