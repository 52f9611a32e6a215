package app

import (
	"bytes"
	"encoding/json"
	"testing"
)

// appendIndented writes what json.Indent writes, for any JSON that
// json.Marshal could have written (valid, compact): empty and nested
// objects and arrays, strings holding brackets, commas, colons, quotes and
// escapes.
func FuzzAppendIndented(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `{"a":[]}`, `[{},[],{"b":{}}]`, `"x"`, `1`, `null`,
		`{"a":"x,y:[z]{\"}\\","b":[1,2.5e-3,true,false,null],"c":{"d":"\u003c\u0026"}}`,
		`[[[[1]]],{"":""}]`,
	} {
		f.Add([]byte(s))
	}
	st, err := json.Marshal(richState(f, 4, 3))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(st)
	f.Fuzz(func(t *testing.T, data []byte) {
		var compact bytes.Buffer
		if json.Compact(&compact, data) != nil {
			return // not JSON: never given
		}
		src := compact.Bytes()
		var want bytes.Buffer
		if err := json.Indent(&want, src, "", "  "); err != nil {
			t.Fatal(err)
		}
		if got := appendIndented(nil, src, "  "); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("indented\n%s\njson.Indent:\n%s", got, want.Bytes())
		}
	})
}

// The state file is what json.MarshalIndent wrote before.
func TestEncodeStateAsMarshalIndent(t *testing.T) {
	for _, st := range []State{richState(t, 40, 4), richState(t, 3, 50), {Version: StateVersion}} {
		want, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got, err := EncodeState(st)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, append(want, '\n')) {
			t.Fatalf("EncodeState differs from json.MarshalIndent")
		}
	}
}

// BenchmarkEncodeState encodes a state of 3 folders and 50 servers (150
// decisions), as every save does: compare ns/op with
// BenchmarkEncodeStateMarshalIndent, the way it was encoded before.
func BenchmarkEncodeState(b *testing.B) {
	st := richState(b, 3, 50)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeState(st); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeStateMarshalIndent is the anchor of BenchmarkEncodeState.
func BenchmarkEncodeStateMarshalIndent(b *testing.B) {
	st := richState(b, 3, 50)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.MarshalIndent(st, "", "  "); err != nil {
			b.Fatal(err)
		}
	}
}
