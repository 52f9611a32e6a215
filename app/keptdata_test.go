package app

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// putMemory puts server mem running npx pkg args… in st, with its data
// folder in stateDir.
func putMemory(t *testing.T, st *State, stateDir, pkg string, args ...string) PutResult {
	t.Helper()
	srv := Server{Name: "mem", Type: TransportStdio, Command: "npx", Args: append([]string{"-y", pkg}, args...)}
	res, err := st.PutServer(srv, PutOptions{Replace: true, StateDir: stateDir, Now: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// writeData writes name into server mem's data folder.
func writeData(t *testing.T, stateDir, name, text string) {
	t.Helper()
	dir := filepath.Join(stateDir, "data", "mem")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readData(dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return string(b)
}

// A data folder stays with its program: a new version or another folder
// argument keeps it, another package starts empty with the old one kept
// aside (recorded in the state, never deleted), which is then given to the
// new program (what that one wrote kept aside in turn) or removed.
func TestDataFolderBelongsToTheProgram(t *testing.T) {
	state, st := t.TempDir(), &State{}
	data := filepath.Join(state, "data", "mem")
	putMemory(t, st, state, "@modelcontextprotocol/server-memory@1")
	writeData(t, state, "memory.jsonl", "graph")

	res := putMemory(t, st, state, "@modelcontextprotocol/server-memory@2", "--verbose")
	if res.KeptAside != nil || readData(data, "memory.jsonl") != "graph" {
		t.Fatalf("a new version lost its data: kept %+v, data %q", res.KeptAside, readData(data, "memory.jsonl"))
	}
	res = putMemory(t, st, state, "@someone/server-memory")
	if res.KeptAside == nil || res.KeptAside.Program != "npm @modelcontextprotocol/server-memory" || res.KeptAside.Name != "20260501T100000Z" {
		t.Fatalf("another package: kept %+v", res.KeptAside)
	}
	srv, _ := st.Server("mem")
	if srv.DataProgram != "npm @someone/server-memory" || len(srv.KeptData) != 1 || srv.KeptData[0] != *res.KeptAside {
		t.Fatalf("stored %+v", srv)
	}
	kept, _ := KeptDataFolder(state, "mem", srv.KeptData[0].Name)
	if _, err := os.Stat(data); err == nil || readData(kept, "memory.jsonl") != "graph" {
		t.Fatalf("data folder %v, kept %q", err, readData(kept, "memory.jsonl"))
	}
	if !strings.HasPrefix(kept, filepath.Join(state, "previous-data", "mem")+string(filepath.Separator)) {
		t.Errorf("kept in %s", kept)
	}

	// The new program writes its own; giving it the kept folder keeps
	// what it wrote aside in turn.
	writeData(t, state, "memory.jsonl", "new graph")
	aside, err := st.UseKeptData(state, "mem", "", "", time.Date(2026, 5, 1, 11, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if readData(data, "memory.jsonl") != "graph" || aside == nil || aside.Program != "npm @someone/server-memory" {
		t.Fatalf("after use: data %q, aside %+v", readData(data, "memory.jsonl"), aside)
	}
	srv, _ = st.Server("mem")
	if len(srv.KeptData) != 1 || srv.KeptData[0].Name != "20260501T110000Z" {
		t.Fatalf("kept after use: %+v", srv.KeptData)
	}
	again, _ := KeptDataFolder(state, "mem", srv.KeptData[0].Name)
	if readData(again, "memory.jsonl") != "new graph" {
		t.Fatalf("what the new program wrote: %q", readData(again, "memory.jsonl"))
	}
	if _, err := st.UseKeptData(state, "mem", "nope", "", time.Now()); !isInputError(err) {
		t.Errorf("a kept folder that is not there: %v", err)
	}
	removed, err := st.RemoveKeptData(state, "mem", again)
	if err != nil || removed != again {
		t.Fatalf("remove: %q %v", removed, err)
	}
	if _, err := os.Stat(again); !os.IsNotExist(err) {
		t.Errorf("the kept folder is still there: %v", err)
	}
	if srv, _ = st.Server("mem"); len(srv.KeptData) != 0 {
		t.Errorf("still recorded: %+v", srv.KeptData)
	}
	if _, err := st.RemoveKeptData(state, "mem", ""); !isInputError(err) {
		t.Errorf("nothing kept: %v", err)
	}
}

// What Rootkeeper put in a data folder (the person's git identity) is
// nothing its program wrote: such a folder is not kept aside, and a
// folder of several kept ones must be named.
func TestKeptAsideOnlyWhatTheProgramWrote(t *testing.T) {
	state, home, st := t.TempDir(), t.TempDir(), &State{}
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = Ada\n"), 0o600)
	putMemory(t, st, state, "a")
	seedGitIdentity(home, filepath.Join(state, "data", "mem", "gitconfig"))
	os.MkdirAll(filepath.Join(state, "data", "mem", "config"), 0o700)
	srv := Server{Name: "mem", Type: TransportStdio, Command: "npx", Args: []string{"b"}}
	res, err := st.PutServer(srv, PutOptions{Replace: true, StateDir: state, Home: home})
	if err != nil || res.KeptAside != nil {
		t.Fatalf("only the seeded identity: kept %+v %v", res.KeptAside, err)
	}
	for _, pkg := range []string{"c", "d"} {
		writeData(t, state, "x", pkg)
		if res := putMemory(t, st, state, pkg); res.KeptAside == nil {
			t.Fatalf("%s: nothing kept", pkg)
		}
	}
	srv, _ = st.Server("mem")
	if len(srv.KeptData) != 2 || srv.KeptData[1].Name != "20260501T100000Z-2" {
		t.Fatalf("two kept in the same second: %+v", srv.KeptData)
	}
	if _, err := st.UseKeptData(state, "mem", "", home, time.Now()); err == nil || !strings.Contains(err.Error(), "name one") {
		t.Errorf("two kept, none named: %v", err)
	}
	if _, err := KeptDataFolder(state, "mem", ".."); err == nil {
		t.Error("a kept folder named .. is accepted")
	}
}

// A new server under a name whose data folder is still there (left by a
// removed server of that name) does not inherit it; removing a server
// removes its kept folders with the rest.
func TestNewNameDoesNotInheritData(t *testing.T) {
	state, st := t.TempDir(), &State{}
	writeData(t, state, "token", "secret")
	res := putMemory(t, st, state, "pkg")
	if res.KeptAside == nil || res.KeptAside.Program != "" || res.KeptAside.ProgramText() != "an earlier server of that name" {
		t.Fatalf("kept %+v", res.KeptAside)
	}
	if err := RemoveServerFiles(state, "mem"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(state, "previous-data", "mem")); !os.IsNotExist(err) {
		t.Errorf("kept folders left after the server was removed: %v", err)
	}
}

// A server stored before the program was recorded (DataProgram empty)
// keeps its data across an edit that runs the same program.
func TestDataOfAServerStoredBefore(t *testing.T) {
	state := t.TempDir()
	st := &State{Servers: []Server{{Name: "mem", Type: TransportStdio, Command: "npx", Args: []string{"-y", "pkg@1"}}}}
	writeData(t, state, "memory.jsonl", "graph")
	if res := putMemory(t, st, state, "pkg@2"); res.KeptAside != nil {
		t.Fatalf("kept %+v", res.KeptAside)
	}
	if srv, _ := st.Server("mem"); srv.DataProgram != "npm pkg" {
		t.Errorf("recorded %q", srv.DataProgram)
	}
}

func isInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}
