package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// stdDecodeState is how decodeState read a state file before it used
// segmentio's decoder: the standard library's Unmarshal of the version,
// migration, then its stream decoder for the whole.
func stdDecodeState(data []byte) (State, error) {
	var head struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return State{}, err
	}
	if head.Version == nil {
		return State{}, fmt.Errorf("no version")
	}
	data, err := migrate(data, *head.Version)
	if err != nil {
		return State{}, err
	}
	var st State
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&st); err != nil {
		return State{}, err
	}
	return st, st.check()
}

// richState is a state with every kind of thing in it: folders, servers
// with arguments, environment, headers and slots, decisions of each
// verdict and scope, requests.
func richState(t testing.TB, roots, servers int) State {
	t.Helper()
	st := State{Version: StateVersion}
	dir := t.TempDir()
	at := time.Date(2026, 11, 25, 14, 0, 0, 123456789, time.UTC)
	for i := range roots {
		p := filepath.Join(dir, fmt.Sprintf("proj-%d", i))
		if err := st.AddRoot(Root{Path: p, Name: fmt.Sprintf("proj «%d» <&>", i), Source: SourceGit, Enabled: i%3 != 0, Branch: "main", Added: at}); err != nil {
			t.Fatal(err)
		}
	}
	slot := filepath.Join(dir, "data")
	if err := os.Mkdir(slot, 0o700); err != nil {
		t.Fatal(err)
	}
	for j := range servers {
		name := fmt.Sprintf("srv-%d", j)
		srv := Server{Name: name, Type: TransportStdio, Command: "/usr/bin/env",
			Args: []string{"node", "server.js", "--data", slot},
			Env:  map[string]string{"DATA_DIR": slot, "TOKEN": "x\u00e9\"y"}}
		if j%2 == 1 {
			srv = Server{Name: name, Type: TransportHTTP, URL: "https://example.org/mcp?a=1&b=2", Headers: map[string]string{"Authorization": "Bearer t"}}
		}
		if _, err := st.PutServer(srv, PutOptions{}); err != nil {
			t.Fatal(err)
		}
		for i, r := range st.Roots {
			v, scope := Allow, Always
			if (i+j)%2 == 0 {
				v = Deny
			}
			if i%5 == 0 {
				scope = UntilQuit
			}
			if err := st.Decide(Decision{Server: name, Root: r.Path, Verdict: v, Scope: scope, At: at}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.AddRequest(name, filepath.Join(dir, "asked", name), "host", at); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// decodeState reads what the standard library read, the same way: a rich
// state, the version 0 file, and the edges (keys in another case, a key
// twice, invalid UTF-8, space or garbage after the object, a wrong type).
func TestDecodeStateAsTheStandardLibrary(t *testing.T) {
	rich, err := EncodeState(richState(t, 40, 4))
	if err != nil {
		t.Fatal(err)
	}
	inputs := map[string][]byte{
		"rich":              rich,
		"space after":       append(bytes.Clone(rich), "\n\n  \n"...),
		"garbage after":     append(bytes.Clone(rich), "}{"...),
		"keys in any case":  []byte(`{"VERSION":1,"Roots":[{"PATH":"/a","name":"a"}]}`),
		"a key twice":       []byte(`{"version":1,"roots":[{"path":"/a"}],"roots":[{"path":"/b"}]}`),
		"invalid UTF-8":     []byte("{\"version\":1,\"roots\":[{\"path\":\"/a\",\"name\":\"x\xffy\"}]}"),
		"a wrong type":      []byte(`{"version":1,"roots":{"path":"/a"}}`),
		"not an object":     []byte(`[1,2]`),
		"cut short":         rich[:len(rich)/2],
		"a number too big":  []byte(`{"version":1,"servers":[{"name":"s","type":"stdio","command":"x","rootsMode":99999999999999999999}]}`),
		"an escaped letter": []byte(`{"version":1,"roots":[{"p\u0061th":"/a"}]}`),
	}
	if v0, err := os.ReadFile(filepath.Join("testdata", "state-v0.json")); err == nil {
		inputs["version 0"] = v0
	}
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			got, gotErr := decodeState(data)
			want, wantErr := stdDecodeState(data)
			if (gotErr == nil) != (wantErr == nil) {
				t.Fatalf("error %v, the standard library's %v", gotErr, wantErr)
			}
			if gotErr == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("decoded differently:\n%+v\nthe standard library:\n%+v", got, want)
			}
		})
	}
}

// BenchmarkDecodeState parses a state of 1,000 folders and 20 servers
// (20,000 decisions, as in the scale tests): compare ns/op with
// BenchmarkDecodeStateStd, the standard library's way.
func BenchmarkDecodeState(b *testing.B) {
	data := bigState(b)
	for b.Loop() {
		if _, err := decodeState(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeStateStd is the anchor of BenchmarkDecodeState.
func BenchmarkDecodeStateStd(b *testing.B) {
	data := bigState(b)
	for b.Loop() {
		if _, err := stdDecodeState(data); err != nil {
			b.Fatal(err)
		}
	}
}

func bigState(b *testing.B) []byte {
	data, err := EncodeState(richState(b, 1000, 20))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	return data
}
