package detect

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"rootkeeper/app/apptest"
)

func TestParseMountInfo(t *testing.T) {
	in := `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
36 22 0:31 / /home/p/My\040Drive rw,nosuid - fuse.rclone rclone rw
41 22 259:3 /sub /data rw - btrfs /dev/nvme0n1p3 rw
bad line
`
	got, err := parseMountInfo(bufio.NewScanner(strings.NewReader(in)))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{"/": unix.Mkdev(8, 1), "/home/p/My Drive": unix.Mkdev(0, 31), "/data": unix.Mkdev(259, 3)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// The real table agrees with stat for the root folder.
	m, ok := mountPoints()
	var st unix.Stat_t
	if !ok || unix.Stat("/", &st) != nil {
		apptest.Missing(t, "no mount table")
	}
	if m["/"] != uint64(st.Dev) {
		t.Errorf("mountinfo says / is device %#x, stat says %#x", m["/"], st.Dev)
	}
}

// TestOneFilesystem mounts a tmpfs inside the search folder (when allowed)
// and expects the walk to stay out of it unless told otherwise.
func TestOneFilesystem(t *testing.T) {
	root := apptest.RealTempDir(t)
	mnt := filepath.Join(root, "mnt")
	write(t, filepath.Join(root, "here", "go.mod"), "")
	mkdirs(t, mnt)
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		apptest.Missing(t, fmt.Sprintf("cannot mount a tmpfs here: %v", err))
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	write(t, filepath.Join(mnt, "there", "go.mod"), "")

	got, _ := scanAll(t, &Scanner{}, Request{Dirs: []string{root}})
	if diff := cmp.Diff([]string{filepath.Join(root, "here")}, paths(got)); diff != "" {
		t.Errorf("one file system (-want +got):\n%s", diff)
	}
	got, _ = scanAll(t, &Scanner{CrossFilesystems: true}, Request{Dirs: []string{root}})
	if diff := cmp.Diff([]string{filepath.Join(root, "here"), filepath.Join(mnt, "there")}, paths(got)); diff != "" {
		t.Errorf("crossing file systems (-want +got):\n%s", diff)
	}
	// The mount point as a search folder is scanned.
	got, _ = scanAll(t, &Scanner{}, Request{Dirs: []string{mnt}})
	if diff := cmp.Diff([]string{filepath.Join(mnt, "there")}, paths(got)); diff != "" {
		t.Errorf("mount point as search folder (-want +got):\n%s", diff)
	}
}

// TestListLargeFolder lists a folder that takes several getdents64 calls,
// trusting the file system's end mark or not, and expects every entry.
func TestListLargeFolder(t *testing.T) {
	dir := apptest.RealTempDir(t)
	const n = 1500
	want := map[string]bool{}
	for i := range n {
		name := fmt.Sprintf("a-rather-long-file-name-to-fill-the-buffer-%04d", i)
		want[name] = true
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("end mark on this file system: %v", hasEndMark(dir))
	for _, mark := range []bool{false, hasEndMark(dir)} {
		d, err := openDir(nil, dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		_, err = d.list(make([]byte, 32<<10), mark, func(name []byte, typ entryType) {
			if typ != typeFile || got[string(name)] {
				t.Errorf("%s: type %d, seen %v", name, typ, got[string(name)])
			}
			got[string(name)] = true
		})
		d.close()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("end mark %v: entries (-want +got):\n%s", mark, diff)
		}
	}
}
