package serverentry

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rootkeeper/app"
)

// FuzzParse feeds garbage (seeded with the hosts' fixtures and the key
// cases) to Parse: no panic; a refusal is an input error of one line; a
// server found is one ValidateServer takes, and what is skipped says why.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "hosts", "testdata", "*.json*"))
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, c := range keyCases {
		f.Add([]byte(`"s": ` + c.entry))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data)
		if err != nil {
			var ie *app.InputError
			if !errors.As(err, &ie) || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error %q is not a one-line input error", err)
			}
			return
		}
		for _, s := range cfg.Servers {
			if err := app.ValidateServer(s); err != nil {
				t.Fatalf("found %+v, which ValidateServer refuses: %v", s, err)
			}
		}
		for _, s := range cfg.Skipped {
			if s.Why == "" {
				t.Fatalf("%s skipped without a reason", s.Name)
			}
		}
	})
}
