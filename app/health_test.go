package app

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCheckAccess(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	elsewhere := filepath.Join(dir, "elsewhere")
	os.MkdirAll(filepath.Join(elsewhere, "sub"), 0o755)
	swapped := filepath.Join(dir, "swapped") // was a folder, now a link
	os.Symlink(elsewhere, swapped)
	dev := DeviceOf(dir)
	if dev == 0 {
		t.Fatal("no device for a temp folder")
	}
	for _, tc := range []struct {
		name string
		path string
		dev  uint64
		want HealthStatus
	}{
		{"a folder", dir, dev, HealthOK},
		{"device unknown", dir, 0, HealthOK},
		{"missing", filepath.Join(dir, "gone"), 0, HealthMissing},
		{"a file", file, 0, HealthNotDir},
		{"below a file", filepath.Join(file, "sub"), 0, HealthMissing},
		{"another device (unmounted)", dir, dev + 1, HealthUnmounted},
		{"now a symlink to another folder", swapped, 0, HealthMissing},
		{"below a symlinked parent", filepath.Join(swapped, "sub"), 0, HealthMissing},
		{"the link's target itself", elsewhere, 0, HealthOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := CheckAccess(tc.path, tc.dev)
			if h.Status != tc.want {
				t.Fatalf("CheckAccess(%q) = %+v, want %s", tc.path, h, tc.want)
			}
			if (h.Status == HealthOK) != (h.Err == "") {
				t.Fatalf("error text %q with status %s", h.Err, h.Status)
			}
			if h.Checked.IsZero() {
				t.Fatal("no check time")
			}
		})
	}
}
