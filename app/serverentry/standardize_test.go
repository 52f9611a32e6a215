package serverentry

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustStandardize(t *testing.T, in []byte) []byte {
	t.Helper()
	out, err := Standardize(in)
	if err != nil {
		t.Fatalf("Standardize(%s): %v", in, err)
	}
	return out
}

func TestStandardize(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": 1, /* c */ "b": [1, 2, ], // x` + "\n" + `}`: `{"a":1,"b":[1,2]}`,
		`{"s": "// not a comment, /* nor this */", }`:       `{"s":"// not a comment, /* nor this */"}`,
		`{"s": "quote \" // still string"}`:                 `{"s":"quote \" // still string"}`,
		`{"a": [1, /* x */ ], }`:                            `{"a":[1]}`,
		"{\"a\": [1, // c\n ], // d\n }":                    `{"a":[1]}`,
		`[1, 2 , 3,]`:                                       `[1,2,3]`,
		`["a,]", "b",]`:                                     `["a,]","b"]`,
	} {
		var got, exp any
		if err := json.Unmarshal(mustStandardize(t, []byte(in)), &got); err != nil {
			t.Errorf("Standardize(%s): %v", in, err)
			continue
		}
		if err := json.Unmarshal([]byte(want), &exp); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(exp, got); diff != "" {
			t.Errorf("Standardize(%s) (-want +got):\n%s", in, diff)
		}
	}
}

// BenchmarkJSONCHostile: a workspace file made of 16,000 ", " inside an
// array (a file of anyone's, read by every scan), against the anchor:
// encoding/json decoding a plain array of the same size: detect read it
// with a stripper of its own, once per trailing comma (5 s), then once;
// now with the one JSONC reader.
func BenchmarkJSONCHostile(b *testing.B) {
	hostile := []byte("[" + strings.Repeat(", ", 16000) + "]")
	plain := []byte("[" + strings.Repeat("1, ", 16000) + "1]")
	b.Run("jsonc", func(b *testing.B) {
		for b.Loop() {
			Standardize(hostile)
		}
	})
	b.Run("anchor-json", func(b *testing.B) {
		var v []int
		for b.Loop() {
			json.Unmarshal(plain, &v)
		}
	})
}
