package cli

import (
	"os"
	"path/filepath"
	"testing"

	"rootkeeper/app/apptest"
)

// The version printed is the one FyneApp.toml carries, read from the real
// file main embeds.
func TestVersionFromFyneApp(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(apptest.ModuleRoot(t), "FyneApp.toml"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := VersionFromFyneApp(data)
	if err != nil {
		t.Fatal(err)
	}
	if got == "" || got == "dev" {
		t.Fatalf("version %q", got)
	}
	for _, tc := range []struct{ name, toml, want string }{
		{"details", "[Details]\n  Version = \"2.3.4\"\n  Build = 7\n", "2.3.4"},
		{"website first", "Website = \"x\"\n[Details]\nVersion = \"0.9.0\"\n", "0.9.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := VersionFromFyneApp([]byte(tc.toml))
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	for _, bad := range []string{"", "[Details]\nName = \"x\"\n", "[Details\nVersion = 1"} {
		if v, err := VersionFromFyneApp([]byte(bad)); err == nil {
			t.Errorf("%q: got %q and no error", bad, v)
		}
	}
}
