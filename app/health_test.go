package app

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCheckAccess(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
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
